// Package units holds the text forms of the quantities that settings and
// the operator commands read: rates ("5/1h") and monthly quotas
// ("10000/month"). It imports nothing of quire, so that internal/config
// stays a leaf; the limiters use these types as their own
// (ratelimit.Rate, keylimit.Quota).
package units

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Rate is at most N events per window Per. The zero Rate means unlimited.
// Its text form is "N/DURATION", e.g. "5/1h", or "0" for unlimited; it is
// a flag.Value so that configuration can hold it directly.
type Rate struct {
	N   int
	Per time.Duration
}

func (r Rate) String() string {
	if r.N == 0 {
		return "0"
	}
	return strconv.Itoa(r.N) + "/" + ShortDuration(r.Per)
}

// ShortDuration prints 1h rather than 1h0m0s.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// Set parses the text form.
func (r *Rate) Set(s string) error {
	if s == "0" {
		*r = Rate{}
		return nil
	}
	n, per, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 {
		return fmt.Errorf("rate %q: want N/DURATION such as 5/1h, or 0 for unlimited", s)
	}
	d, err := time.ParseDuration(per)
	if err != nil || d < time.Second {
		return fmt.Errorf("rate %q: the window must be a duration of at least 1s", s)
	}
	*r = Rate{N: count, Per: d}
	return nil
}

// Quota is a monthly quota of documents; its text form is "N/month", or
// "0" for none. It is a flag.Value, for configuration and the CLI.
type Quota int64

func (q Quota) String() string {
	if q == 0 {
		return "0"
	}
	return strconv.FormatInt(int64(q), 10) + "/month"
}

// Set parses the text form.
func (q *Quota) Set(s string) error {
	if s == "0" {
		*q = 0
		return nil
	}
	n, ok := strings.CutSuffix(s, "/month")
	v, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || v < 1 {
		return fmt.Errorf("quota %q: want N/month such as 10000/month, or 0 for none", s)
	}
	*q = Quota(v)
	return nil
}
