package units

import (
	"testing"
	"time"
)

func TestRateText(t *testing.T) {
	for in, want := range map[string]Rate{"5/1h": {5, time.Hour}, "30/15m": {30, 15 * time.Minute}, "0": {}} {
		var r Rate
		if err := r.Set(in); err != nil || r != want {
			t.Errorf("Set(%q) = %v, %v", in, r, err)
		}
		if r.String() != in {
			t.Errorf("String() = %q, want %q", r.String(), in)
		}
	}
	for _, bad := range []string{"", "5", "x/1h", "0/1h", "-1/1h", "5/1ms", "5/soon"} {
		var r Rate
		if err := r.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestQuotaText(t *testing.T) {
	for in, want := range map[string]Quota{"0": 0, "10000/month": 10000, "1/month": 1} {
		var q Quota
		if err := q.Set(in); err != nil || q != want || q.String() != in {
			t.Errorf("Set(%q) = %v (%q), %v", in, q, q.String(), err)
		}
	}
	for _, bad := range []string{"", "10000", "0/month", "-5/month", "5/week", "x/month"} {
		var q Quota
		if err := q.Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}
