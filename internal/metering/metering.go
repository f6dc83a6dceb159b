// Package metering counts the API operations each key's answers
// performed, per UTC day: requests answered, documents, pages, input bytes
// and engine seconds. A count is durable before its answer is sent: the
// Recorder commits the counts of the requests that arrive together in one
// transaction (a group commit) and returns when it is done; an operation
// that commits a record of its own (a signing) commits its Tally's count
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
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/groupcommit"
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
	batches *groupcommit.Committer[quire.Charge, quire.ChargeResult]
	commits prometheus.Histogram
	rows    *prometheus.CounterVec
}

// maxBatch bounds the records of one commit.
const maxBatch = 256

// ErrClosed is returned by Record after Close.
var ErrClosed = groupcommit.ErrClosed

// NewRecorder starts a recorder writing to st; metrics go to reg.
func NewRecorder(st Store, now func() time.Time, reg prometheus.Registerer) *Recorder {
	r := &Recorder{store: st, now: now,
		commits: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "quire_metering_commit_seconds",
			Help: "Time to commit one group of API usage records.", Buckets: prometheus.ExponentialBuckets(0.0002, 2, 14)}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_metered_requests_total",
			Help: "Answered API requests counted by the metering, by operation."}, []string{"operation"})}
	reg.MustRegister(r.commits, r.rows)
	r.batches = groupcommit.New(maxBatch, r.commit)
	return r
}

// Record commits the count of one answer, and returns once it is
// durable (or refused by the quota), or the error that kept it from being
// so.
func (r *Recorder) Record(ctx context.Context, c quire.Charge) (quire.ChargeResult, error) {
	return r.batches.Do(ctx, c)
}

// Now is the recorder's clock: the day a Tally is counted in.
func (r *Recorder) Now() time.Time { return r.now() }

// Close commits what is queued and stops the recorder.
func (r *Recorder) Close() { r.batches.Close() }

func (r *Recorder) commit(charges []quire.Charge) ([]quire.ChargeResult, error) {
	t0 := time.Now()
	res, err := r.store.AddAPIUsage(context.Background(), charges)
	r.commits.Observe(time.Since(t0).Seconds())
	return res, err
}

// Counted updates the metrics with the outcome of a charge, committed by
// Record or by the work's own transaction.
func (r *Recorder) Counted(c quire.Charge, res quire.ChargeResult) {
	if !res.Refused && len(c.Rows) > 0 {
		r.rows.WithLabelValues(c.Rows[0].Operation).Inc()
	}
}
