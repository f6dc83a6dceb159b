package keylimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/ratelimit"
)

// Change is a change of one key's overrides, in the text forms that quire
// keys limit and /admin take. An empty field keeps the key's override (or
// the default); Clear removes every override.
type Change struct {
	KeyID      string
	Concurrent string // N, 0 for no limit
	Rate       string // N/DURATION, 0 for no limit
	Quota      string // N/month, 0 for none
	Clear      bool
}

// Validate parses the change and returns the overrides it sets (nil
// fields are left as they are), or a VALIDATION_ERROR naming the first
// field that does not parse.
func (c Change) Validate() (quire.KeyLimits, error) {
	set := quire.KeyLimits{KeyID: c.KeyID}
	if c.KeyID == "" {
		return set, quire.Invalid("Name the key whose limits change.", quire.Detail{Field: "id", Issue: "is required"})
	}
	if c.Clear {
		return set, nil
	}
	if c.Concurrent == "" && c.Rate == "" && c.Quota == "" {
		return set, quire.Invalid("Give at least one of concurrent, rate and quota, or clear the overrides.",
			quire.Detail{Field: "concurrent", Issue: "nothing to change"})
	}
	var details []quire.Detail
	if s := strings.TrimSpace(c.Concurrent); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			details = append(details, quire.Detail{Field: "concurrent", Issue: fmt.Sprintf("concurrent %q: want a whole number of requests, or 0 for no limit", s)})
		}
		set.Concurrent = &n
	}
	if s := strings.TrimSpace(c.Rate); s != "" {
		var r ratelimit.Rate
		if err := r.Set(s); err != nil {
			details = append(details, quire.Detail{Field: "rate", Issue: err.Error()})
		}
		set.Rate, set.RatePer = &r.N, r.Per
	}
	if s := strings.TrimSpace(c.Quota); s != "" {
		var q Quota
		if err := q.Set(s); err != nil {
			details = append(details, quire.Detail{Field: "quota", Issue: err.Error()})
		}
		n := int64(q)
		set.Quota = &n
	}
	if len(details) > 0 {
		return set, quire.Invalid("The limits are not valid: "+details[0].Issue+".", details...)
	}
	return set, nil
}

// Overrides returns every key's overrides, by key id, as stored now.
func (e *Enforcer) Overrides(ctx context.Context) (map[string]quire.KeyLimits, error) {
	return e.store.KeyLimits(ctx)
}

// Change validates and stores c, and returns the limits the key has now.
// This instance applies them at once; every other one within Refresh.
// An unknown key is a NOT_FOUND error.
func (e *Enforcer) Change(ctx context.Context, c Change) (Limits, error) {
	set, err := c.Validate()
	if err != nil {
		return Limits{}, err
	}
	if c.Clear {
		err = e.store.ClearKeyLimits(ctx, c.KeyID)
	} else {
		err = e.merge(ctx, set)
	}
	if errors.Is(err, quire.ErrNotFound) {
		return Limits{}, quire.Errorf(quire.CodeNotFound, "There is no key with id %q.", c.KeyID)
	}
	if err != nil {
		return Limits{}, fmt.Errorf("limits of key %s: %w", c.KeyID, err)
	}
	e.mu.Lock()
	e.loaded = time.Time{} // reload on the next request
	e.mu.Unlock()
	all, err := e.store.KeyLimits(ctx)
	if err != nil {
		return Limits{}, fmt.Errorf("limits of key %s: %w", c.KeyID, err)
	}
	return e.defaults.Apply(all[c.KeyID]), nil
}

// merge stores the overrides set over the key's earlier ones.
func (e *Enforcer) merge(ctx context.Context, set quire.KeyLimits) error {
	all, err := e.store.KeyLimits(ctx)
	if err != nil {
		return err
	}
	o := all[set.KeyID]
	o.KeyID, o.UpdatedAt = set.KeyID, e.now()
	if set.Concurrent != nil {
		o.Concurrent = set.Concurrent
	}
	if set.Rate != nil {
		o.Rate, o.RatePer = set.Rate, set.RatePer
	}
	if set.Quota != nil {
		o.Quota = set.Quota
	}
	return e.store.SetKeyLimits(ctx, o)
}
