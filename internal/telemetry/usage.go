package telemetry

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/quire-dev/quire"
)

// UsageQuery selects a usage report. Activity is recorded per UTC day, so
// From and To are rounded out to whole days.
type UsageQuery struct {
	From, To time.Time
	ByMonth  bool     // group by UTC month; else by UTC day
	Keys     []string // restrict to these license keys; nil: all
}

// Report is the usage report of the API (GET /v1/usage) and the CLI.
type Report struct {
	From     time.Time      `json:"from"`
	To       time.Time      `json:"to"`
	GroupBy  string         `json:"groupBy"`
	Licenses []LicenseUsage `json:"licenses"`
}

// LicenseUsage is the usage of one license key, period by period.
type LicenseUsage struct {
	LicenseKey   string        `json:"licenseKey"`
	Organization *string       `json:"organization"`
	Registered   bool          `json:"registered"`
	Community    bool          `json:"community"`
	Periods      []PeriodUsage `json:"periods"`
}

// PeriodUsage counts documents first seen in the period (new), documents
// opened in the period (active), and opens: all of them, and among them
// the anonymous ones (without a document id) and those from hosts not in
// the license's list. The documents count only opens with an id from the
// license's own hosts.
type PeriodUsage struct {
	Start           time.Time `json:"start"`
	NewDocuments    int64     `json:"newDocuments"`
	ActiveDocuments int64     `json:"activeDocuments"`
	Opens           int64     `json:"opens"`
	AnonymousOpens  int64     `json:"anonymousOpens"`
	OtherHostOpens  int64     `json:"otherHostOpens"`
}

// maxQueryKeys bounds the license keys one report may name.
const maxQueryKeys = 100

// ParseQuery reads the parameters of a usage report, as the API and the
// CLI take them: from and to in RFC 3339 (default: the current UTC month),
// groupBy day or month (default month), and license keys (none: all).
func ParseQuery(from, to, groupBy string, keys []string, now time.Time) (UsageQuery, error) {
	m := quire.Month(now)
	q := UsageQuery{From: quire.MonthStart(m), To: quire.MonthStart(m + 1), ByMonth: true}
	var details []quire.Detail
	switch {
	case len(keys) > maxQueryKeys:
		details = append(details, quire.Detail{Field: "licenseKey", Issue: fmt.Sprintf("at most %d per report", maxQueryKeys)})
	case len(keys) > 0:
		q.Keys = keys
	}
	for _, f := range []struct {
		name, value string
		dst         *time.Time
	}{{"from", from, &q.From}, {"to", to, &q.To}} {
		if f.value == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, f.value)
		if err != nil {
			details = append(details, quire.Detail{Field: f.name, Issue: "must be an RFC 3339 date-time such as 2026-11-01T00:00:00Z"})
		}
		*f.dst = t
	}
	switch groupBy {
	case "", "month":
	case "day":
		q.ByMonth = false
	default:
		details = append(details, quire.Detail{Field: "groupBy", Issue: "must be day or month"})
	}
	if len(details) > 0 {
		return q, quire.Invalid("The usage query is not valid.", details...)
	}
	return q, nil
}

// Report counts usage per license key and period. Periods without
// activity are left out (their counts are zero); a registered license
// without any activity in the range is listed with no periods.
func (s *Service) Report(ctx context.Context, q UsageQuery) (Report, error) {
	if !q.From.Before(q.To) {
		return Report{}, quire.Invalid("The range is empty.", quire.Detail{Field: "to", Issue: "must be after from"})
	}
	fromDay, toDay := quire.Day(q.From), ceilDay(q.To)
	rows, err := s.store.Usage(ctx, fromDay, toDay, q.ByMonth, q.Keys)
	if err != nil {
		return Report{}, fmt.Errorf("usage: %w", err)
	}
	licenses, err := s.store.Licenses(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("usage: %w", err)
	}
	rep := Report{From: quire.DayStart(fromDay), To: quire.DayStart(toDay), GroupBy: "day", Licenses: []LicenseUsage{}}
	start := quire.DayStart
	if q.ByMonth {
		rep.GroupBy, start = "month", quire.MonthStart
	}
	byKey := map[string]*LicenseUsage{}
	entry := func(key string) *LicenseUsage {
		if u, ok := byKey[key]; ok {
			return u
		}
		u := &LicenseUsage{LicenseKey: key, Community: key == quire.CommunityLicenseKey, Periods: []PeriodUsage{}}
		byKey[key] = u
		return u
	}
	for _, l := range licenses {
		if q.Keys == nil || slices.Contains(q.Keys, l.Key) {
			u := entry(l.Key)
			u.Registered, u.Organization = true, &l.Organization
		}
	}
	for _, r := range rows { // sorted by key and period
		u := entry(r.LicenseKey)
		u.Periods = append(u.Periods, PeriodUsage{Start: start(r.Period), NewDocuments: r.NewDocuments,
			ActiveDocuments: r.ActiveDocuments, Opens: r.Opens, AnonymousOpens: r.AnonymousOpens, OtherHostOpens: r.OtherHostOpens})
	}
	for _, u := range byKey {
		rep.Licenses = append(rep.Licenses, *u)
	}
	sort.Slice(rep.Licenses, func(i, j int) bool { return rep.Licenses[i].LicenseKey < rep.Licenses[j].LicenseKey })
	return rep, nil
}

// ceilDay is the first day that starts at or after t.
func ceilDay(t time.Time) int64 {
	d := quire.Day(t)
	if quire.DayStart(d).Before(t) {
		d++
	}
	return d
}

// WriteCSV writes the report as CSV, one line per license key and period;
// a license without activity gets one line with an empty period and zeros,
// so that every license of the report appears.
func WriteCSV(w io.Writer, r Report) error {
	c := csv.NewWriter(w)
	c.Write([]string{"licenseKey", "organization", "registered", "community", "periodStart", "newDocuments", "activeDocuments", "opens",
		"anonymousOpens", "otherHostOpens"})
	for _, l := range r.Licenses {
		org := ""
		if l.Organization != nil {
			org = *l.Organization
		}
		head := []string{l.LicenseKey, org, strconv.FormatBool(l.Registered), strconv.FormatBool(l.Community)}
		if len(l.Periods) == 0 {
			c.Write(append(head, "", "0", "0", "0", "0", "0"))
		}
		for _, p := range l.Periods {
			c.Write(append(head, p.Start.Format(time.RFC3339), strconv.FormatInt(p.NewDocuments, 10),
				strconv.FormatInt(p.ActiveDocuments, 10), strconv.FormatInt(p.Opens, 10),
				strconv.FormatInt(p.AnonymousOpens, 10), strconv.FormatInt(p.OtherHostOpens, 10)))
		}
	}
	c.Flush()
	return c.Error()
}
