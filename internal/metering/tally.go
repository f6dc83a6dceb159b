package metering

import (
	"context"
	"time"

	"github.com/quire-dev/quire"
)

// Tally is the usage count of one request of a key, while its response
// is prepared: the HTTP adapter starts it and puts it in the request's
// context, the work adds what it processed (pages, a conversion on the
// way), and it is committed once, before the response is sent.
type Tally struct {
	Key       string
	Quota     int64  // the key's monthly quota of documents; 0: none
	Hold      string // the request's hold on the quota, which the charge's commit ends
	Operation string
	quire.OperationUsage
	Converted int64 // documents converted on the way (sign with a DOCX input)
	Start     time.Time
	Read      func() int64 // the request's bytes read so far, its input bytes
	// Settle, when set, learns the outcome of the commit of charge c; its
	// error (a refusal by the quota) is the response's.
	Settle func(c quire.Charge, res quire.ChargeResult) error

	committed bool
}

type tallyCtx struct{}

// WithTally returns ctx carrying a.
func WithTally(ctx context.Context, a *Tally) context.Context {
	return context.WithValue(ctx, tallyCtx{}, a)
}

// TallyOf returns the tally of the request in ctx, or nil outside of a
// metered request.
func TallyOf(ctx context.Context) *Tally {
	a, _ := ctx.Value(tallyCtx{}).(*Tally)
	return a
}

// Charge is what the request counts if its response is sent now, on the day of the
// service's clock now: the engine time is the time since Start unless the
// work measured it.
func (a *Tally) Charge(now time.Time) quire.Charge {
	u := a.OperationUsage
	if a.Read != nil {
		u.InputBytes = a.Read()
	}
	if u.EngineSeconds == 0 {
		u.EngineSeconds = time.Since(a.Start).Seconds()
	}
	day := quire.Day(now)
	c := quire.Charge{KeyID: a.Key, Quota: a.Quota, Hold: a.Hold, Rows: []quire.APIUsageRow{{KeyID: a.Key, Period: day, Operation: a.Operation, OperationUsage: u}}}
	if a.Converted > 0 {
		c.Rows = append(c.Rows, quire.APIUsageRow{KeyID: a.Key, Period: day, Operation: quire.OpConvert,
			OperationUsage: quire.OperationUsage{Documents: a.Converted}})
	}
	return c
}

// Committed reports whether the tally was committed already (by
// the work's own transaction).
func (a *Tally) Committed() bool { return a.committed }

// Settled records the outcome of the commit of the tally's charge c,
// and returns the refusal of the quota, if any.
func (a *Tally) Settled(c quire.Charge, res quire.ChargeResult) error {
	a.committed = !res.Refused
	if a.Settle != nil {
		return a.Settle(c, res)
	}
	return nil
}
