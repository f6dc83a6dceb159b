package jobs

import (
	"context"
	"database/sql"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// Submissions queue River's jobs in quire's own transaction
// (InsertManyTx), and River, which only polls here (no LISTEN on SQLite
// or through database/sql), would learn of them at its next poll: a job
// submitted to an idle instance waited up to PollInterval (200 ms), its
// engines idle meanwhile. River wakes its producers at once only after
// inserts of its own outside a transaction, and hands that wake-up to
// its pilot, which a driver may provide ("used in special cases like
// poll-only clients to improve latency between job insert and when a job
// is worked", riverpilot.PilotInitParams). wakingDriver provides River's
// standard pilot and keeps the wake-up, which the submissions call once
// committed (Service.insert).
type wakingDriver struct {
	riverdriver.Driver[*sql.Tx]
	pilot *wakingPilot
}

func (d *wakingDriver) PluginInit(*baseservice.Archetype) {}
func (d *wakingDriver) PluginPilot() riverpilot.Pilot     { return d.pilot }

// SupportsListener is false: River runs poll-only here (PollOnly), and a
// driver with a listener would keep River from waking its producers in
// the process itself (after these commits, and when a job is cancelled),
// expecting LISTEN/NOTIFY to do it.
func (d *wakingDriver) SupportsListener() bool { return false }

type wakingPilot struct {
	riverpilot.StandardPilot
	wake func(context.Context, []*rivertype.JobInsertResult)
}

func (p *wakingPilot) PilotInit(a *baseservice.Archetype, params *riverpilot.PilotInitParams) {
	p.wake = params.NotifyNonTxJobInsert
	p.StandardPilot.PilotInit(a, params)
}

// committed tells this instance's River that jobs were committed to the
// default queue: it fetches them now (at most once per FetchCooldown),
// rather than at its next poll. Other instances still find them by
// polling.
func (p *wakingPilot) committed(ctx context.Context) {
	if p.wake != nil {
		p.wake(ctx, []*rivertype.JobInsertResult{{Job: &rivertype.JobRow{Queue: river.QueueDefault}}})
	}
}
