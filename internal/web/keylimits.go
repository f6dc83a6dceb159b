package web

import (
	"context"
	"net/http"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/metering"
)

// keyRows lists the API keys with their limits and this month's
// documents, when the pages have the limits and the metering.
func (p *Pages) keyRows(ctx context.Context) ([]keyRow, error) {
	keys, err := p.deps.Auth.Keys(ctx)
	if err != nil || p.deps.Limits == nil || p.deps.APIUsage == nil {
		return rowsOf(keys), err
	}
	overrides, err := p.deps.Limits.Overrides(ctx)
	if err != nil {
		return nil, err
	}
	month, _ := metering.ParseQuery("", "", "month", p.opt.Now()) // the defaults always parse
	rep, err := metering.Build(ctx, p.deps.APIUsage, month)
	if err != nil {
		return nil, err
	}
	docs := map[string]int64{}
	for _, k := range rep.Keys {
		for _, pu := range k.Periods {
			for _, op := range quire.Operations {
				docs[k.KeyID] += pu.Operations.Of(op).Documents
			}
		}
	}
	rows := rowsOf(keys)
	for i := range rows {
		o, ok := overrides[rows[i].ID]
		rows[i].Limits, rows[i].Overridden = p.deps.Limits.Defaults().Apply(o), ok
		rows[i].MonthDocs = docs[rows[i].ID]
	}
	return rows, nil
}

func rowsOf(keys []quire.APIKey) []keyRow {
	rows := make([]keyRow, len(keys))
	for i, k := range keys {
		rows[i].APIKey = k
	}
	return rows
}

// setKeyLimits sets or clears a key's overrides as quire keys limit does.
func (p *Pages) setKeyLimits(w http.ResponseWriter, r *http.Request, se session) {
	if p.deps.Limits == nil {
		p.render(w, http.StatusNotFound, "message", message{Title: "No per-key limits", Text: "This server does not enforce per-key limits."})
		return
	}
	c := keylimit.Change{KeyID: r.PostFormValue("id"), Concurrent: r.PostFormValue("concurrent"), Rate: r.PostFormValue("rate"),
		Quota: r.PostFormValue("quota"), Clear: r.PostFormValue("clear") != ""}
	lim, err := p.deps.Limits.Change(r.Context(), c)
	if err != nil {
		p.refuseForm(w, r, se, "keys", err)
		return
	}
	p.deps.Logger.Info("API key limits set from the dashboard", "key_id", c.KeyID, "cleared", c.Clear, "concurrent", lim.Concurrent,
		"rate", lim.Rate.String(), "quota", keylimit.Quota(lim.Quota).String(), "client", httpapi.ClientIP(r))
	http.Redirect(w, r, "/admin#key-"+c.KeyID, http.StatusSeeOther)
}
