package client

import (
	"context"
	"net/url"
	"time"
)

// Periods of a usage report.
const (
	GroupByDay   = "day"
	GroupByMonth = "month"
)

// UsageQuery selects a usage report. The service counts activity per UTC
// day, so From and To are rounded out to whole days.
type UsageQuery struct {
	From        time.Time // zero: the start of the current UTC month
	To          time.Time // exclusive; zero: the start of the next UTC month
	GroupBy     string    // GroupByDay or GroupByMonth; empty: month
	LicenseKeys []string  // restrict to these license keys; none: all the caller may read
}

func (q UsageQuery) values() url.Values {
	v := url.Values{}
	if !q.From.IsZero() {
		v.Set("from", q.From.UTC().Format(time.RFC3339))
	}
	if !q.To.IsZero() {
		v.Set("to", q.To.UTC().Format(time.RFC3339))
	}
	if q.GroupBy != "" {
		v.Set("groupBy", q.GroupBy)
	}
	for _, k := range q.LicenseKeys {
		v.Add("licenseKey", k)
	}
	return v
}

// UsageReport counts documents per license key and period.
type UsageReport struct {
	From     time.Time      `json:"from"`
	To       time.Time      `json:"to"`
	GroupBy  string         `json:"groupBy"`
	Licenses []LicenseUsage `json:"licenses"`
}

// LicenseUsage is the usage of one license key. Periods without activity
// are left out; a registered license without activity has no periods.
type LicenseUsage struct {
	LicenseKey   string        `json:"licenseKey"`
	Organization *string       `json:"organization"` // nil when the key is not registered
	Registered   bool          `json:"registered"`
	Community    bool          `json:"community"` // the community and evaluation key
	Periods      []UsagePeriod `json:"periods"`
}

// UsagePeriod counts the documents first seen in the period (new), the
// documents opened in it (active) and the opens.
type UsagePeriod struct {
	Start           time.Time `json:"start"`
	NewDocuments    int64     `json:"newDocuments"`
	ActiveDocuments int64     `json:"activeDocuments"`
	Opens           int64     `json:"opens"`
}

// License returns the usage of one license key, or nil when the report
// does not list it.
func (r *UsageReport) License(key string) *LicenseUsage {
	for i := range r.Licenses {
		if r.Licenses[i].LicenseKey == key {
			return &r.Licenses[i]
		}
	}
	return nil
}

// Usage returns a usage report (GET /v1/usage). The credential set with
// WithAPIKey decides what it covers: the service's admin token reads
// every license; an API key reads the licenses whose contact e-mail is the
// key's (other licenses: *Error with CodeForbidden).
func (c *Client) Usage(ctx context.Context, q UsageQuery) (*UsageReport, error) {
	var rep UsageReport
	err := c.getJSON(ctx, request{method: "GET", path: "/v1/usage", query: q.values(), auth: true}, &rep)
	if err != nil {
		return nil, err
	}
	return &rep, nil
}
