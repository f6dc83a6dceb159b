// Package metering counts the API operations each key's answers
// performed, per UTC day: requests answered, documents, pages, input bytes
// and engine seconds. A count is durable before its answer is sent: the
// Recorder commits the counts of the requests that arrive together in one
// transaction (a group commit) and returns when it is done.
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
	AddAPIUsage(ctx context.Context, rows []quire.APIUsageRow) error
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
	rows []quire.APIUsageRow
	done chan error
}

// Use is what one answer did in one operation.
type Use struct {
	Operation string
	quire.OperationUsage
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

// Record counts the uses of one answer to key today (UTC), all in one
// commit, and returns once they are durable, or the error that kept them
// from being so.
func (r *Recorder) Record(ctx context.Context, key string, uses ...Use) error {
	rec := &record{done: make(chan error, 1)}
	day := quire.Day(r.now())
	for _, u := range uses {
		rec.rows = append(rec.rows, quire.APIUsageRow{KeyID: key, Period: day, Operation: u.Operation, OperationUsage: u.OperationUsage})
	}
	select {
	case r.queue <- rec:
	case <-r.stopped:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once queued, the record is committed or failed whatever ctx does:
	// wait for the outcome so that a cancelled request is never counted
	// without its caller knowing.
	select {
	case err := <-rec.done:
		return err
	case <-r.stopped:
		select {
		case err := <-rec.done:
			return err
		default:
			return ErrClosed
		}
	}
}

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
		t0 := time.Now()
		err := r.store.AddAPIUsage(context.Background(), sum(batch))
		r.commits.Observe(time.Since(t0).Seconds())
		for _, rec := range batch {
			if err == nil {
				r.rows.WithLabelValues(rec.rows[0].Operation).Inc()
			}
			rec.done <- err
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

// sum adds up the records of one key, day and operation.
func sum(batch []*record) []quire.APIUsageRow {
	type id struct {
		key, op string
		day     int64
	}
	index := map[id]int{}
	var rows []quire.APIUsageRow
	for _, rec := range batch {
		for _, row := range rec.rows {
			k := id{row.KeyID, row.Operation, row.Period}
			if i, ok := index[k]; ok {
				rows[i].Add(row.OperationUsage)
				continue
			}
			index[k] = len(rows)
			rows = append(rows, row)
		}
	}
	return rows
}
