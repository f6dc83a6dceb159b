package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/telemetry"
)

// Usage ranges: 30 days unless asked, at most maxUsageDays.
const (
	defaultUsageDays = 30
	maxUsageDays     = 366
)

const dateLayout = "2006-01-02"

// usageQuery is the usage page's selection: a licence key (empty: all)
// and a range of whole UTC days, both ends included.
type usageQuery struct {
	License  string
	From, To time.Time
}

func (p *Pages) parseUsage(r *http.Request) (usageQuery, error) {
	v := r.URL.Query()
	today := p.opt.Now().UTC().Truncate(24 * time.Hour)
	q := usageQuery{License: v.Get("license"), To: today}
	var details []quire.Detail
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"from", &q.From}, {"to", &q.To}} {
		if s := v.Get(f.name); s != "" {
			t, err := time.Parse(dateLayout, s)
			if err != nil {
				details = append(details, quire.Detail{Field: f.name, Issue: "must be a date such as 2026-11-01"})
			}
			*f.dst = t
		}
	}
	if v.Get("from") == "" {
		q.From = q.To.AddDate(0, 0, 1-defaultUsageDays)
	}
	switch days := q.days(); {
	case len(details) > 0:
	case days < 1:
		details = append(details, quire.Detail{Field: "to", Issue: "must not be before from"})
	case days > maxUsageDays:
		details = append(details, quire.Detail{Field: "from", Issue: fmt.Sprintf("the range may span at most %d days", maxUsageDays)})
	}
	if len(details) > 0 {
		return q, quire.Invalid("The usage range is not valid: "+details[0].Field+" "+details[0].Issue+".", details...)
	}
	return q, nil
}

func (q usageQuery) days() int { return int(q.To.Sub(q.From)/(24*time.Hour)) + 1 }

// report asks the telemetry service for q, day by day.
func (p *Pages) report(r *http.Request, q usageQuery) (telemetry.Report, error) {
	tq := telemetry.UsageQuery{From: q.From, To: q.To.AddDate(0, 0, 1)}
	if q.License != "" {
		tq.Keys = []string{q.License}
	}
	return p.deps.Telemetry.Report(r.Context(), tq)
}

// usageData is the usage page.
type usageData struct {
	Query    usageQuery
	FromText string
	ToText   string
	Licenses []quire.License
	Chart    chart
	Error    string
}

func (p *Pages) usage(w http.ResponseWriter, r *http.Request, _ session) {
	q, err := p.parseUsage(r)
	d := usageData{Query: q, FromText: q.From.Format(dateLayout), ToText: q.To.Format(dateLayout)}
	var rep telemetry.Report
	if err == nil {
		rep, err = p.report(r, q)
	}
	if err == nil {
		d.Licenses, err = p.deps.Telemetry.Licenses(r.Context())
	}
	if err != nil {
		p.fail(w, r, "usage", func(msg string) any { d.Error = msg; return d }, err)
		return
	}
	d.Chart = newChart(q.From, q.days(), rep)
	p.render(w, http.StatusOK, "usage", d)
}

func (p *Pages) usageCSV(w http.ResponseWriter, r *http.Request, _ session) {
	q, err := p.parseUsage(r)
	var rep telemetry.Report
	if err == nil {
		rep, err = p.report(r, q)
	}
	if err != nil {
		p.fail(w, r, "message", func(msg string) any { return message{Title: "Cannot export usage", Text: msg} }, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="quire-usage-`+q.From.Format(dateLayout)+"-to-"+q.To.Format(dateLayout)+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	if err := telemetry.WriteCSV(w, rep); err != nil {
		p.deps.Logger.Warn("usage CSV", "err", err)
	}
}

// chart is a bar chart of documents and opens per day, drawn as SVG on
// the server: two bars a day, heights scaled to the largest count; the
// opens from other hosts are the lower part of the opens' bar.
type chart struct {
	Width, Height   int
	Top, Base       int // y of the largest count and of zero
	Bar             int // width of one bar
	Max             int64
	Days            []chartDay
	TotalDocs       int64
	TotalOpens      int64
	TotalAnonymous  int64
	TotalOtherHosts int64
}

type chartDay struct {
	Date        string
	Short       string // MM-DD, under the axis
	X           int    // left edge of the day's pair of bars
	Docs, Opens int64
	Anonymous   int64
	OtherHosts  int64
	DocsH       int // bar heights
	OpensH      int
	OtherH      int
	DocsY       int // tops of the bars
	OpensY      int
	OtherY      int
	Label       bool // the date is written under this day
}

// The plot is about plotW wide whatever the range: each day gets an
// equal slot, at least minSlot, holding two bars.
const (
	plotW   = 720
	minSlot = 6
	plotTop = 10
	plotH   = 180
	plotX   = 45
)

func newChart(from time.Time, days int, rep telemetry.Report) chart {
	slot := max(minSlot, plotW/days)
	c := chart{Width: plotX + 10 + days*slot, Height: plotTop + plotH + 30, Top: plotTop, Base: plotTop + plotH, Bar: max(2, slot*2/5)}
	labelEvery := (days + 7) / 8 // at most about eight dates under the axis
	index := map[string]int{}
	for i := range days {
		day := from.AddDate(0, 0, i)
		date := day.Format(dateLayout)
		index[date] = i
		c.Days = append(c.Days, chartDay{Date: date, Short: day.Format("01-02"), X: plotX + 5 + i*slot, Label: i%labelEvery == 0})
	}
	for _, l := range rep.Licenses {
		for _, pu := range l.Periods {
			if i, ok := index[pu.Start.UTC().Format(dateLayout)]; ok {
				c.Days[i].Docs += pu.ActiveDocuments
				c.Days[i].Opens += pu.Opens
				c.Days[i].Anonymous += pu.AnonymousOpens
				c.Days[i].OtherHosts += pu.OtherHostOpens
			}
		}
	}
	for _, d := range c.Days {
		c.Max = max(c.Max, d.Docs, d.Opens)
		c.TotalDocs += d.Docs
		c.TotalOpens += d.Opens
		c.TotalAnonymous += d.Anonymous
		c.TotalOtherHosts += d.OtherHosts
	}
	for i := range c.Days {
		d := &c.Days[i]
		d.DocsH, d.OpensH, d.OtherH = scale(d.Docs, c.Max), scale(d.Opens, c.Max), scale(d.OtherHosts, c.Max)
		d.DocsY, d.OpensY, d.OtherY = c.Base-d.DocsH, c.Base-d.OpensH, c.Base-d.OtherH
	}
	return c
}

func scale(n, top int64) int {
	if top == 0 {
		return 0
	}
	return int(n * plotH / top)
}
