// Package metering counts the API operations each key's answers
// performed, per UTC day: requests answered, documents, pages, input bytes
// and engine seconds. A count is durable before its answer is sent: the
// Recorder commits the counts of the requests that arrive together in one
// transaction (a group commit) and returns when it is done; an operation
// that commits a record of its own (a signing) commits its Answer's count
// in that record's transaction instead. Either way the count is a
// quire.Charge, which the key's monthly quota may refuse.
//
// The commit stays on the answer's critical path, after the work, and
// this is why (issue #31 looked for a way around it). What it costs is
// the commit itself: in BenchmarkAddAPIUsage (internal/store, about
// 1 ms of wall time per charge on a loaded machine) most of the CPU time
// (about 60% of the profile) is SQLite's BEGIN and COMMIT (the WAL write
// and its fsync), and the statements prepared once instead of per
// transaction saved nothing measurable (346 against 340 µs of CPU per
// commit, one run each). Beginning it while the engine runs would hold SQLite's one
// write lock for the whole conversion, stalling every other writer;
// committing the documents before the engine runs (the quota's part)
// and the pages and engine time after it would take two commits, or
// leave the second one not durable when the answer is sent, and a
// failed conversion would need a refund that a crash could lose. Each
// of those trades the exact, durable count for about one fsync.
package metering

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
)

// Store keeps the counts; *store.DB is one.
type Store interface {
	AddAPIUsage(ctx context.Context, charges []quire.Charge) ([]quire.ChargeResult, error)
	APIUsage(ctx context.Context, fromDay, toDay int64, byMonth bool, keys []string) ([]quire.APIUsageRow, error)
	Keys(ctx context.Context) ([]quire.APIKey, error)
}

// Recorder records usage with group commits.
type Recorder struct {
	store   Store
	now     func() time.Time
	queue   chan *record
	quit    chan struct{}
	stopped chan struct{}
	once    sync.Once
	commits prometheus.Histogram
	rows    *prometheus.CounterVec
}

type record struct {
	charge quire.Charge
	done   chan outcome
}

type outcome struct {
	quire.ChargeResult
	err error
}

// maxBatch bounds the records of one commit.
const maxBatch = 256

// ErrClosed is returned by Record after Close.
var ErrClosed = errors.New("metering: closed")

// NewRecorder starts a recorder writing to st; metrics go to reg.
func NewRecorder(st Store, now func() time.Time, reg prometheus.Registerer) *Recorder {
	r := &Recorder{store: st, now: now, queue: make(chan *record, maxBatch), quit: make(chan struct{}), stopped: make(chan struct{}),
		commits: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "quire_metering_commit_seconds",
			Help: "Time to commit one group of API usage records.", Buckets: prometheus.ExponentialBuckets(0.0002, 2, 14)}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_metered_requests_total",
			Help: "Answered API requests counted by the metering, by operation."}, []string{"operation"})}
	reg.MustRegister(r.commits, r.rows)
	go r.run()
	return r
}

// Record commits the count of one answer, and returns once it is
// durable (or refused by the quota), or the error that kept it from being
// so.
func (r *Recorder) Record(ctx context.Context, c quire.Charge) (quire.ChargeResult, error) {
	rec := &record{charge: c, done: make(chan outcome, 1)}
	select {
	case r.queue <- rec:
	case <-r.stopped:
		return quire.ChargeResult{}, ErrClosed
	case <-ctx.Done():
		return quire.ChargeResult{}, ctx.Err()
	}
	// Once queued, the record is committed or failed whatever ctx does:
	// wait for the outcome so that a cancelled request is never counted
	// without its caller knowing.
	select {
	case o := <-rec.done:
		return o.ChargeResult, o.err
	case <-r.stopped:
		select {
		case o := <-rec.done:
			return o.ChargeResult, o.err
		default:
			return quire.ChargeResult{}, ErrClosed
		}
	}
}

// Now is the recorder's clock: the day an Answer is counted in.
func (r *Recorder) Now() time.Time { return r.now() }

// Close commits what is queued and stops the recorder.
func (r *Recorder) Close() {
	r.once.Do(func() { close(r.quit) })
	<-r.stopped
}

func (r *Recorder) run() {
	defer close(r.stopped)
	for {
		var first *record
		select {
		case first = <-r.queue:
		case <-r.quit:
			select {
			case first = <-r.queue: // commit what was queued before Close
			default:
				return
			}
		}
		batch := r.gather(first)
		charges := make([]quire.Charge, len(batch))
		for i, rec := range batch {
			charges[i] = rec.charge
		}
		t0 := time.Now()
		res, err := r.store.AddAPIUsage(context.Background(), charges)
		r.commits.Observe(time.Since(t0).Seconds())
		for i, rec := range batch {
			o := outcome{err: err}
			if err == nil {
				o.ChargeResult = res[i]
			}
			rec.done <- o
		}
	}
}

// gather takes first and whatever else is queued already.
func (r *Recorder) gather(first *record) []*record {
	batch := []*record{first}
	for len(batch) < maxBatch {
		select {
		case rec := <-r.queue:
			batch = append(batch, rec)
		default:
			return batch
		}
	}
	return batch
}

// Counted updates the metrics with the outcome of a charge, committed by
// Record or by the work's own transaction.
func (r *Recorder) Counted(c quire.Charge, res quire.ChargeResult) {
	if !res.Refused && len(c.Rows) > 0 {
		r.rows.WithLabelValues(c.Rows[0].Operation).Inc()
	}
}
