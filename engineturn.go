package quire

import "context"

// EngineTurn bounds how many of some caller's operations use the engines
// (LibreOffice, Chromium) at once. The engines' pools take it before an
// operation's document queues for a worker and give it back with the
// result, so that the caller's own work before and after (reading the
// request, its checks, storing the answer) overlaps other operations'
// conversions rather than holding a turn. The jobs service gives each
// run one: QUIRE_JOB_WORKERS turns per instance.
type EngineTurn struct {
	Take func(context.Context) error // waits for a turn; ctx's error if it ends first
	Give func()
}

type engineTurnCtx struct{}

// WithEngineTurn returns ctx whose engine work takes t first.
func WithEngineTurn(ctx context.Context, t EngineTurn) context.Context {
	return context.WithValue(ctx, engineTurnCtx{}, t)
}

// TakeEngineTurn takes ctx's engine turn, if it has one, and returns how
// to give it back.
func TakeEngineTurn(ctx context.Context) (give func(), err error) {
	t, ok := ctx.Value(engineTurnCtx{}).(EngineTurn)
	if !ok {
		return func() {}, nil
	}
	if err := t.Take(ctx); err != nil {
		return nil, err
	}
	return t.Give, nil
}
