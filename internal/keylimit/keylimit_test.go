package keylimit_test

import (
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/ratelimit"
)

func TestOverridesReplaceOnlyWhatTheySet(t *testing.T) {
	def := keylimit.Limits{Concurrent: 10, Rate: ratelimit.Rate{N: 600, Per: time.Minute}}
	zero, rate := 0, 60
	got := def.Apply(quire.KeyLimits{Concurrent: &zero, Rate: &rate, RatePer: time.Hour})
	if want := (keylimit.Limits{Rate: ratelimit.Rate{N: 60, Per: time.Hour}}); got != want {
		t.Errorf("= %+v, want %+v", got, want)
	}
	if got := def.Apply(quire.KeyLimits{}); got != def {
		t.Errorf("no overrides: %+v", got)
	}
}

func TestChangeValidate(t *testing.T) {
	set, err := keylimit.Change{KeyID: "key_a", Concurrent: "0", Rate: " 30/1h", Quota: "500/month"}.Validate()
	if err != nil || *set.Concurrent != 0 || *set.Rate != 30 || set.RatePer != time.Hour || *set.Quota != 500 {
		t.Errorf("= %+v, %v", set, err)
	}
	if set, err := (keylimit.Change{KeyID: "key_a", Rate: "0"}).Validate(); err != nil || *set.Rate != 0 || set.Concurrent != nil || set.Quota != nil {
		t.Errorf("rate 0 only: %+v, %v", set, err)
	}
	if _, err := (keylimit.Change{KeyID: "key_a", Clear: true}).Validate(); err != nil {
		t.Errorf("clear: %v", err)
	}
	for _, c := range []keylimit.Change{
		{KeyID: "key_a"},
		{Rate: "1/1m"},
		{KeyID: "key_a", Concurrent: "x"},
		{KeyID: "key_a", Concurrent: "-2"},
		{KeyID: "key_a", Rate: "10"},
		{KeyID: "key_a", Quota: "10/week"},
	} {
		if _, err := c.Validate(); quire.ErrorCode(err) != quire.CodeValidation {
			t.Errorf("%+v: %v, want a validation error", c, err)
		}
	}
}
