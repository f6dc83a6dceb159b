package metering

import (
	"context"
	"time"

	"github.com/quire-dev/quire"
)

// Answer is the count of one answer to a key, while it is prepared: the
// HTTP adapter starts it and puts it in the request's context, the work
// adds what it processed (pages, a conversion on the way), and it is
// committed once, before the answer is sent.
type Answer struct {
	Key       string
	Quota     int64 // the key's monthly quota of documents; 0: none
	Operation string
	quire.OperationUsage
	Converted int64 // documents converted on the way (sign with a DOCX input)
	Start     time.Time
	Read      func() int64 // the request's bytes read so far, its input bytes
	// Settle, when set, learns the outcome of the commit of charge c; its
	// error (a refusal by the quota) is the answer's.
	Settle func(c quire.Charge, res quire.ChargeResult) error

	committed bool
}

type answerCtx struct{}

// WithAnswer returns ctx carrying a.
func WithAnswer(ctx context.Context, a *Answer) context.Context {
	return context.WithValue(ctx, answerCtx{}, a)
}

// AnswerOf returns the answer being prepared in ctx, or nil outside of a
// metered request.
func AnswerOf(ctx context.Context) *Answer {
	a, _ := ctx.Value(answerCtx{}).(*Answer)
	return a
}

// Charge is what the answer counts if it is sent now, on the day of the
// service's clock now: the engine time is the time since Start unless the
// work measured it.
func (a *Answer) Charge(now time.Time) quire.Charge {
	u := a.OperationUsage
	if a.Read != nil {
		u.InputBytes = a.Read()
	}
	if u.EngineSeconds == 0 {
		u.EngineSeconds = time.Since(a.Start).Seconds()
	}
	day := quire.Day(now)
	c := quire.Charge{KeyID: a.Key, Quota: a.Quota, Rows: []quire.APIUsageRow{{KeyID: a.Key, Period: day, Operation: a.Operation, OperationUsage: u}}}
	if a.Converted > 0 {
		c.Rows = append(c.Rows, quire.APIUsageRow{KeyID: a.Key, Period: day, Operation: quire.OpConvert,
			OperationUsage: quire.OperationUsage{Documents: a.Converted}})
	}
	return c
}

// Committed reports whether the answer's count was committed already (by
// the work's own transaction).
func (a *Answer) Committed() bool { return a.committed }

// Settled records the outcome of the commit of the answer's charge c,
// and returns the refusal of the quota, if any.
func (a *Answer) Settled(c quire.Charge, res quire.ChargeResult) error {
	a.committed = !res.Refused
	if a.Settle != nil {
		return a.Settle(c, res)
	}
	return nil
}
