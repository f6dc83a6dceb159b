// Package telemetry takes in the document-open events that editor
// libraries report, counts every document once per license key, and
// produces the usage reports that billing needs.
//
// A 204 from intake means the events are committed. To keep that promise
// fast, concurrent requests share transactions (group commit): one writer
// takes everything queued while the previous commit was running, lets the
// requests being read join, waits briefly for the clients it answered
// last when so configured, and commits it at once. A commit only
// appends (on SQLite one row per event, the raw event, to a file of its
// own); a second goroutine, the fold, counts the committed opens into the
// per-document figures in bulk meanwhile, and reports count first. The
// queue is bounded; when the database falls behind, intake answers 503
// with Retry-After instead of holding unbounded memory.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
)

// Store is what telemetry keeps; *store.DB is one.
type Store interface {
	RecordOpens(ctx context.Context, events []quire.OpenEvent) error
	CountPending(ctx context.Context) error
	DeleteEventsBefore(ctx context.Context, cutoff time.Time) (int64, error)
	Usage(ctx context.Context, fromDay, toDay int64, byMonth bool, keys []string) ([]quire.UsageRow, error)
	CreateLicense(ctx context.Context, l quire.License) error
	Licenses(ctx context.Context) ([]quire.License, error)
	LicenseHosts(ctx context.Context) (map[string][]string, error)
	SetLicenseHosts(ctx context.Context, key string, hosts []string) error
	RevokeLicense(ctx context.Context, id string, now time.Time) error
}

// Options are the limits of intake.
type Options struct {
	QueueLength   int           // requests waiting for a commit before 503
	MaxBatch      int           // events per transaction
	CommitTimeout time.Duration // longest time one commit may take
	GatherWait    time.Duration // one sleep of the writer waiting for the clients it answered (await); 0: none
	Retention     time.Duration // how long raw events are kept
	MetadataBytes int           // largest metadata object stored as sent
	HostsRefresh  time.Duration // how often the licenses' host lists are read again; 0: DefaultHostsRefresh
	Logger        *slog.Logger
	Registerer    prometheus.Registerer // where the intake metrics go; nil: nowhere
	Now           func() time.Time
}

// Service is telemetry intake, licenses and usage reports.
type Service struct {
	store   Store
	opt     Options
	queue   chan *job
	mu      sync.RWMutex // guards closed against sends on a closed queue
	closed  bool
	stopped chan struct{} // closed when the writer and the fold have stopped
	folds   chan struct{} // the writer's call for a count, see fold
	// uncounted is how many opens were committed since the fold last
	// counted (at least 1 at start: a previous run may have left some).
	uncounted atomic.Int64
	m         intakeMetrics
	// answered is how many requests the last commit answered: the
	// writer's own, read by gather only.
	answered int
	// hosts are the host lists of the licenses that have one, by key: read
	// by every request, replaced whole by loadHosts.
	hosts     atomic.Pointer[map[string][]string]
	hostsMu   sync.Mutex    // one loadHosts at a time, so that the last read is the last stored
	quit      chan struct{} // closed by Close: watchHosts stops
	hostsDone chan struct{} // closed when watchHosts has stopped
}

// DefaultHostsRefresh is how often each instance reads the licenses' host
// lists: a change applies to opens received 5 s after it, with a second
// left for the read.
const DefaultHostsRefresh = 4 * time.Second

type job struct {
	events []quire.OpenEvent
	done   chan error
}

// New starts the service and its writer; Close stops them.
func New(st Store, opt Options) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.HostsRefresh <= 0 {
		opt.HostsRefresh = DefaultHostsRefresh
	}
	s := &Service{store: st, opt: opt, queue: make(chan *job, opt.QueueLength), stopped: make(chan struct{}),
		folds: make(chan struct{}, 1), quit: make(chan struct{}), hostsDone: make(chan struct{})}
	s.m = newIntakeMetrics(opt.Registerer, func() float64 { return float64(len(s.queue)) })
	s.uncounted.Store(1)
	s.hosts.Store(&map[string][]string{})
	s.loadHosts()
	go s.write()
	go s.fold()
	go s.watchHosts()
	return s
}

// watchHosts reads the host lists again every HostsRefresh: another
// instance sharing the database may have changed one. Intake reads the
// lists in memory, never the database.
func (s *Service) watchHosts() {
	defer close(s.hostsDone)
	tick := time.NewTicker(s.opt.HostsRefresh)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-tick.C:
			s.loadHosts()
		}
	}
}

// loadHosts reads the host lists. When the read fails, the lists read
// last stay in use, and the next tick tries again.
func (s *Service) loadHosts() {
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.HostsRefresh)
	defer cancel()
	lists, err := s.store.LicenseHosts(ctx)
	if err != nil {
		s.m.hostReadFailures.Inc()
		s.opt.Logger.Warn("telemetry: reading the licenses' host lists failed; the last ones read stay in use", "err", err)
		return
	}
	s.hosts.Store(&lists)
}

// Busy is the answer when the queue is full: the database is behind.
var Busy = &quire.Error{Code: quire.CodeUnavailable, RetryAfter: time.Second,
	Message: "Telemetry intake is saturated; retry after a moment."}

// Collect validates a request and returns once its events are committed.
func (s *Service) Collect(ctx context.Context, req *Request) error {
	if err := req.Validate(); err != nil {
		s.Refused()
		return err
	}
	events := req.events(s.opt.Now(), s.opt.MetadataBytes, *s.hosts.Load())
	if err := s.record(ctx, events); err != nil {
		if errors.Is(err, Busy) {
			s.m.busy.Inc()
		} else {
			s.m.failed.Inc()
		}
		return err
	}
	s.m.accepted.Inc()
	s.m.events.Add(float64(len(events)))
	s.m.countKinds(events)
	return nil
}

// Refused counts a payload refused as invalid, by Collect or by the
// adapter that could not decode it.
func (s *Service) Refused() { s.m.invalid.Inc() }

func (s *Service) record(ctx context.Context, events []quire.OpenEvent) error {
	j := &job{events: events, done: make(chan error, 1)}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return Busy
	}
	select {
	case s.queue <- j:
		s.mu.RUnlock()
	default:
		s.mu.RUnlock()
		return Busy
	}
	select {
	case err := <-j.done:
		return err
	case <-ctx.Done(): // the client left; the events are still committed
		return ctx.Err()
	}
}

// Committed opens are counted into the per-document figures in bulk (see
// store.CountPending) once countEvery of them are committed, or
// countInterval after the last count. Reports count what is pending before
// they read, so these only bound the size of the backlog and the work of
// one count (on SQLite here, 15 to 100 ms for countEvery opens, as their
// documents are clustered or scattered), during which intake goes on.
const (
	countEvery    = 4096
	countInterval = time.Second
)

// write is the single writer: each round gathers queued requests, up to
// MaxBatch events, and commits them in one transaction; every countEvery
// committed events it calls the fold.
func (s *Service) write() {
	defer close(s.folds)
	for first := range s.queue {
		if s.uncounted.Add(int64(s.commit(s.gather(first)))) >= countEvery {
			select {
			case s.folds <- struct{}{}:
			default: // a call is waiting already
			}
		}
	}
}

// fold counts the committed opens when the writer calls, and every
// countInterval when some are uncounted; it runs beside the writer, so
// that a commit never waits for a count (on SQLite, they write different
// files: see store). It counts what is left once the writer has stopped,
// then stops.
func (s *Service) fold() {
	defer close(s.stopped)
	tick := time.NewTicker(countInterval)
	defer tick.Stop()
	for {
		select {
		case _, ok := <-s.folds:
			if !ok {
				s.count()
				return
			}
		case <-tick.C:
			if s.uncounted.Load() == 0 {
				continue
			}
		}
		s.count()
	}
}

// maxYields bounds the rounds of gather.
const maxYields = 5

// gather returns first and what else is queued, up to MaxBatch events.
// Then, while requests keep arriving, it yields the processor to the
// requests being read and parsed, and takes what they queued, up to
// maxYields times. A larger batch shares one commit (and its fsync) among
// more requests; yielding, unlike sleeping, costs nothing when nothing
// else is running. Measured here with 64 clients on SQLite: about 23
// events per commit instead of 16, and 3% more requests per second; a
// 200 µs sleep instead gave 50 events per commit but 20% fewer requests
// per second, the writer being the bottleneck. Last, when so configured,
// it waits for the clients the last commit answered (await).
func (s *Service) gather(first *job) []*job {
	batch, n := s.take([]*job{first}, len(first.events))
	expected := len(batch) + s.answered
	for range maxYields {
		if n >= s.opt.MaxBatch {
			break
		}
		runtime.Gosched()
		had := len(batch)
		if batch, n = s.take(batch, n); len(batch) == had {
			break
		}
	}
	return s.await(batch, n, expected)
}

// awaitRounds bounds the wait of await to that many GatherWait.
const awaitRounds = 4

// await adds to batch, which holds n events, the requests that arrive
// until it holds expected requests: keep-alive clients under load send
// again as soon as they are answered, and without the wait they fall in
// two cohorts that take turns, each commit (and its fsync) taking half of
// them while the other half is being answered and read. It sleeps
// GatherWait at a time, while requests keep arriving, up to awaitRounds
// times; a lone client (one request answered) is never kept waiting.
// Sleeping rather than waking at each arrival spares the requests a
// wake-up of the writer each. Measured with wrk, 64 clients on SQLite:
// about 57 events per commit instead of 30; 35-45% more requests per
// second (a first version, woken at each arrival) while commits took
// 2 ms on a busy disk, but 25-50% fewer (either version) when they took
// 1.5 ms and a round of answers and requests took longer than the commit
// it would share: hence off by default.
func (s *Service) await(batch []*job, n, expected int) []*job {
	if s.opt.GatherWait <= 0 || s.answered < 2 {
		return batch
	}
	for range awaitRounds {
		if len(batch) >= expected || n >= s.opt.MaxBatch {
			break
		}
		time.Sleep(s.opt.GatherWait)
		had := len(batch)
		if batch, n = s.take(batch, n); len(batch) == had {
			break
		}
	}
	return batch
}

// take appends queued jobs to batch, which holds n events, until it holds
// MaxBatch events or the queue is empty.
func (s *Service) take(batch []*job, n int) ([]*job, int) {
	for n < s.opt.MaxBatch {
		select {
		case j, ok := <-s.queue:
			if !ok {
				return batch, n
			}
			batch, n = append(batch, j), n+len(j.events)
		default:
			return batch, n
		}
	}
	return batch, n
}

// count folds the pending opens into the counts. When counting fails, the
// opens stay committed and pending, and the next tick counts them.
func (s *Service) count() {
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.CommitTimeout)
	defer cancel()
	s.uncounted.Store(0)
	start := time.Now()
	err := s.store.CountPending(ctx)
	s.m.countSeconds.Observe(time.Since(start).Seconds())
	if err != nil {
		s.uncounted.Add(1)
		s.opt.Logger.Error("telemetry: counting the committed opens failed; they stay pending", "err", err)
	}
}

// commit writes a batch and returns the number of events committed. When
// the batch fails, each request is retried alone, so one request that
// cannot be stored does not fail the others.
func (s *Service) commit(batch []*job) int {
	s.answered = len(batch)
	events := make([]quire.OpenEvent, 0, len(batch)) // one event per request is the usual case
	for _, j := range batch {
		events = append(events, j.events...)
	}
	err := s.commitEvents(events)
	if err != nil && len(batch) > 1 {
		s.opt.Logger.Warn("telemetry batch failed; retrying its requests one by one", "requests", len(batch), "err", err)
		n := 0
		for _, j := range batch {
			err := s.commitEvents(j.events)
			if err == nil {
				n += len(j.events)
			}
			j.done <- err
		}
		return n
	}
	for _, j := range batch {
		j.done <- err
	}
	if err != nil {
		return 0
	}
	return len(events)
}

func (s *Service) commitEvents(events []quire.OpenEvent) error {
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.CommitTimeout)
	defer cancel()
	start := time.Now()
	err := s.store.RecordOpens(ctx, events)
	s.m.commitSeconds.Observe(time.Since(start).Seconds())
	s.m.batchEvents.Observe(float64(len(events)))
	if err != nil {
		s.opt.Logger.Error("telemetry commit failed", "events", len(events), "err", err)
		return &quire.Error{Code: quire.CodeUnavailable, RetryAfter: 5 * time.Second,
			Message: "The events could not be stored; retry later."}
	}
	return nil
}

// Close stops taking events, commits what is queued and counts it, and
// stops the writer and the fold.
// Call it after the HTTP server has finished its requests.
func (s *Service) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
		close(s.quit)
	}
	s.mu.Unlock()
	<-s.stopped
	<-s.hostsDone
}

// Sweep drops raw events older than the retention; the counts stay.
func (s *Service) Sweep(ctx context.Context) error {
	n, err := s.store.DeleteEventsBefore(ctx, s.opt.Now().Add(-s.opt.Retention))
	if err != nil {
		return fmt.Errorf("telemetry retention: %w", err)
	}
	if n > 0 {
		s.opt.Logger.Info("telemetry retention: raw events dropped", "events", n)
	}
	return nil
}

type intakeMetrics struct {
	payloads                        *prometheus.CounterVec
	accepted, invalid, busy, failed prometheus.Counter // its children, resolved once
	events                          prometheus.Counter
	kinds                           *prometheus.CounterVec
	anonymous, otherHost            prometheus.Counter // its children
	hostReadFailures                prometheus.Counter
	batchEvents                     prometheus.Histogram
	commitSeconds, countSeconds     prometheus.Histogram
}

func newIntakeMetrics(reg prometheus.Registerer, queued func() float64) intakeMetrics {
	m := intakeMetrics{
		payloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_telemetry_payloads_total",
			Help: "Telemetry payloads by result: accepted, invalid, busy (queue full), failed (database error)."}, []string{"result"}),
		events: prometheus.NewCounter(prometheus.CounterOpts{Name: "quire_telemetry_events_total",
			Help: "Document-open events committed."}),
		kinds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "quire_telemetry_events_by_kind_total",
			Help: "Document-open events committed without a document id (anonymous) or from a host not in their license's list (other_host)."}, []string{"kind"}),
		hostReadFailures: prometheus.NewCounter(prometheus.CounterOpts{Name: "quire_telemetry_host_list_read_failures_total",
			Help: "Reads of the licenses' host lists that failed (the lists read before stay in use)."}),
		batchEvents: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "quire_telemetry_batch_events",
			Help: "Events per group commit.", Buckets: prometheus.ExponentialBuckets(1, 4, 8)}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "quire_telemetry_commit_seconds",
			Help: "Time of one group commit.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 10)}),
		countSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "quire_telemetry_count_seconds",
			Help: "Time of one count of the committed opens into the per-document figures.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 10)}),
	}
	m.accepted, m.invalid = m.payloads.WithLabelValues("accepted"), m.payloads.WithLabelValues("invalid")
	m.busy, m.failed = m.payloads.WithLabelValues("busy"), m.payloads.WithLabelValues("failed")
	m.anonymous, m.otherHost = m.kinds.WithLabelValues("anonymous"), m.kinds.WithLabelValues("other_host")
	if reg != nil {
		reg.MustRegister(m.payloads, m.events, m.kinds, m.hostReadFailures, m.batchEvents, m.commitSeconds, m.countSeconds,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "quire_telemetry_queue_length",
				Help: "Requests waiting for a group commit."}, queued))
	}
	return m
}

// countKinds counts the anonymous and other-host opens among events.
func (m intakeMetrics) countKinds(events []quire.OpenEvent) {
	for _, e := range events {
		if e.DocumentID == "" {
			m.anonymous.Inc()
		}
		if e.OtherHost {
			m.otherHost.Inc()
		}
	}
}
