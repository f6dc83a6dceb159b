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

// telemetrySeries are the bars of the telemetry chart: documents, opens
// and, part of them, the opens from other hosts.
var telemetrySeries = []chartSeries{{Name: "documents", Class: "docs"}, {Name: "opens", Class: "opens"},
	{Name: "opens from other hosts", Class: "other", Over: true}, {Name: "anonymous opens", Hidden: true}}

func telemetryChart(from time.Time, days int, rep telemetry.Report) chart {
	c := newChart("Documents and opens per day", from, days, telemetrySeries)
	for _, l := range rep.Licenses {
		for _, pu := range l.Periods {
			for s, n := range []int64{pu.ActiveDocuments, pu.Opens, pu.OtherHostOpens, pu.AnonymousOpens} {
				c.add(pu.Start, s, n)
			}
		}
	}
	c.draw()
	return c
}

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
	API      *apiUsage // nil: the API's usage is not shown
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
	d.Chart = telemetryChart(q.From, q.days(), rep)
	if p.deps.APIUsage != nil {
		if d.API, err = p.apiUsage(r.Context(), q); err != nil {
			p.fail(w, r, "usage", func(msg string) any { d.Error = msg; return d }, err)
			return
		}
	}
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

// chart is a bar chart of counts per day, drawn as SVG on the server:
// each day gets a slot with one bar per series side by side (a series
// drawn Over the one before shows a part of that bar), heights scaled to
// the largest count. The usage page draws the telemetry and the API usage
// with it.
type chart struct {
	Title         string
	Width, Height int
	Top, Base     int // y of the largest count and of zero
	Bar           int // width of one bar
	Max           int64
	Series        []chartSeries
	Totals        []int64 // per series
	Days          []chartDay
	from          time.Time
}

// chartSeries is one kind of count of a chart.
type chartSeries struct {
	Name   string // what it counts, in tooltips and the table: "opens"
	Class  string // the CSS class of its bars, their colour
	Over   bool   // drawn over the bar before it, only where not zero
	Hidden bool   // counted in the table and the totals, not drawn
}

type chartDay struct {
	Date   string
	Short  string // MM-DD, under the axis
	X      int    // left edge of the day's bars
	Label  bool   // the date is written under this day
	Counts []int64
	Bars   []chartBar
}

type chartBar struct {
	X, Y, H int
	N       int64
	Series  chartSeries
}

// The plot is about plotW wide whatever the range: each day gets an
// equal slot, at least minSlot, holding its bars.
const (
	plotW   = 720
	minSlot = 6
	plotTop = 10
	plotH   = 180
	plotX   = 45
)

// newChart is an empty chart of series over days from from.
func newChart(title string, from time.Time, days int, series []chartSeries) chart {
	slot := max(minSlot, plotW/days)
	beside := 0
	for _, s := range series {
		if !s.Over && !s.Hidden {
			beside++
		}
	}
	c := chart{Title: title, Width: plotX + 10 + days*slot, Height: plotTop + plotH + 30, Top: plotTop, Base: plotTop + plotH,
		Bar: max(2, slot*4/5/max(1, beside)), Series: series, Totals: make([]int64, len(series)), from: from}
	labelEvery := (days + 7) / 8 // at most about eight dates under the axis
	for i := range days {
		day := from.AddDate(0, 0, i)
		c.Days = append(c.Days, chartDay{Date: day.Format(dateLayout), Short: day.Format("01-02"), X: plotX + 5 + i*slot,
			Label: i%labelEvery == 0, Counts: make([]int64, len(series))})
	}
	return c
}

// add counts n more of series s on the UTC day of t, if the chart has it.
func (c *chart) add(t time.Time, s int, n int64) {
	if t.Before(c.from) {
		return
	}
	if i := int(t.Sub(c.from) / (24 * time.Hour)); i < len(c.Days) {
		c.Days[i].Counts[s] += n
		c.Totals[s] += n
	}
}

// draw places the bars once every count is added.
func (c *chart) draw() {
	for _, d := range c.Days {
		for s, n := range d.Counts {
			if !c.Series[s].Hidden {
				c.Max = max(c.Max, n)
			}
		}
	}
	for i := range c.Days {
		d := &c.Days[i]
		x := d.X - c.Bar
		for s, n := range d.Counts {
			se := c.Series[s]
			if se.Hidden || se.Over && n == 0 {
				continue
			}
			if !se.Over {
				x += c.Bar
			}
			h := scale(n, c.Max)
			d.Bars = append(d.Bars, chartBar{X: x, Y: c.Base - h, H: h, N: n, Series: se})
		}
	}
}

func scale(n, top int64) int {
	if top == 0 {
		return 0
	}
	return int(n * plotH / top)
}
