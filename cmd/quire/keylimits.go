package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/ratelimit"
)

// limitFlags are the options of quire keys limit.
type limitFlags struct {
	fs         *flag.FlagSet
	concurrent int
	rate       ratelimit.Rate
	quota      keylimit.Quota
	clear      bool
}

func (l *limitFlags) define(fs *flag.FlagSet) {
	l.fs = fs
	fs.IntVar(&l.concurrent, "concurrent", 0, "requests in progress at once, per instance (0: no limit)")
	fs.Var(&l.rate, "rate", "requests per window, N/DURATION such as 600/1m (0: no limit)")
	fs.Var(&l.quota, "quota", "documents per calendar month, N/month such as 10000/month (0: none)")
	fs.BoolVar(&l.clear, "clear", false, "remove the key's overrides: the defaults apply again")
}

// apply changes the overrides of key id: those given replace the key's
// earlier ones, the others stay. Every instance applies them within
// keylimit.Refresh.
func (l *limitFlags) apply(ctx context.Context, a *app, id string, stdout io.Writer) error {
	if l.clear {
		if err := a.db.ClearKeyLimits(ctx, id); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "limits of", id, "cleared: the defaults apply")
		return nil
	}
	all, err := a.db.KeyLimits(ctx)
	if err != nil {
		return err
	}
	o := all[id]
	o.KeyID, o.UpdatedAt = id, time.Now()
	set := false
	l.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "concurrent":
			o.Concurrent, set = &l.concurrent, true
		case "rate":
			o.Rate, o.RatePer, set = &l.rate.N, l.rate.Per, true
		case "quota":
			q := int64(l.quota)
			o.Quota, set = &q, true
		}
	})
	if !set || l.concurrent < 0 {
		return errUsage
	}
	err = a.db.SetKeyLimits(ctx, o)
	if errors.Is(err, quire.ErrNotFound) {
		return fmt.Errorf("no key with id %q", id)
	}
	if err != nil {
		return err
	}
	lim := a.limits.Defaults().Apply(o)
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
func listKeysJSON(ctx context.Context, a *app, w io.Writer) error {
	keys, err := a.auth.Keys(ctx)
	if err != nil {
		return err
	}
	overrides, err := a.db.KeyLimits(ctx)
	if err != nil {
		return err
	}
	q, _ := metering.ParseQuery("", "", "month", time.Now()) // the defaults always parse
	rep, err := metering.Build(ctx, a.db, q)
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
		lim := a.limits.Defaults().Apply(o)
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
