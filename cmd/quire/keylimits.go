package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/metering"
)

// limitFlags are the options of quire keys limit, parsed by
// keylimit.Change as /admin's form is.
type limitFlags struct {
	change keylimit.Change
}

func (l *limitFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&l.change.Concurrent, "concurrent", "", "requests in progress at once, per instance (0: no limit)")
	fs.StringVar(&l.change.Rate, "rate", "", "requests per window, N/DURATION such as 600/1m (0: no limit)")
	fs.StringVar(&l.change.Quota, "quota", "", "documents per calendar month, N/month such as 10000/month (0: none)")
	fs.BoolVar(&l.change.Clear, "clear", false, "remove the key's overrides: the defaults apply again")
}

// apply changes the overrides of key id: those given replace the key's
// earlier ones, the others stay. Every instance applies them within
// keylimit.Refresh.
func (l *limitFlags) apply(ctx context.Context, a *app.App, id string, stdout io.Writer) error {
	l.change.KeyID = id
	lim, err := a.Limits.Change(ctx, l.change)
	if err != nil {
		return err
	}
	if l.change.Clear {
		fmt.Fprintln(stdout, "limits of", id, "cleared: the defaults apply")
		return nil
	}
	fmt.Fprintf(stdout, "limits of %s: concurrent %d, rate %s, quota %s\n", id, lim.Concurrent, lim.Rate, keylimit.Quota(lim.Quota))
	return nil
}

// keyJSON is one key of quire keys list --json.
type keyJSON struct {
	ID         string              `json:"id"`
	Email      string              `json:"email"`
	Prefix     string              `json:"prefix"`
	CreatedAt  time.Time           `json:"createdAt"`
	LastUsedAt *time.Time          `json:"lastUsedAt"`
	RevokedAt  *time.Time          `json:"revokedAt"`
	Limits     limitsJSON          `json:"limits"`
	ThisMonth  metering.Operations `json:"thisMonth"`
}

type limitsJSON struct {
	Concurrent int    `json:"concurrent"`
	Rate       string `json:"rate"`
	Quota      string `json:"quota"`
	Overridden bool   `json:"overridden"` // by quire keys limit or /admin
}

// listKeysJSON prints every key with the limits that apply to it and its
// use in the current UTC month.
func listKeysJSON(ctx context.Context, a *app.App, w io.Writer) error {
	keys, err := a.Auth.Keys(ctx)
	if err != nil {
		return err
	}
	overrides, err := a.DB.KeyLimits(ctx)
	if err != nil {
		return err
	}
	q, _ := metering.ParseQuery("", "", "month", time.Now()) // the defaults always parse
	rep, err := metering.Build(ctx, a.DB, q)
	if err != nil {
		return err
	}
	month := map[string]metering.Operations{}
	for _, k := range rep.Keys {
		if len(k.Periods) > 0 {
			month[k.KeyID] = k.Periods[0].Operations
		}
	}
	out := make([]keyJSON, len(keys))
	for i, k := range keys {
		o, overridden := overrides[k.ID]
		lim := a.Limits.Defaults().Apply(o)
		out[i] = keyJSON{ID: k.ID, Email: k.Email, Prefix: k.Prefix, CreatedAt: k.CreatedAt, LastUsedAt: timeOrNil(k.LastUsedAt),
			RevokedAt: timeOrNil(k.RevokedAt), ThisMonth: month[k.ID],
			Limits: limitsJSON{Concurrent: lim.Concurrent, Rate: lim.Rate.String(), Quota: keylimit.Quota(lim.Quota).String(), Overridden: overridden}}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
