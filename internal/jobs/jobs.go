// Package jobs runs API requests later (Prefer: respond-async): each is
// stored with its request, queued on River in the same transaction, run by
// any instance sharing the database, and its answer kept for a while; when
// it ends, a signed webhook is delivered to the address its request named.
//
// River (github.com/riverqueue/river) holds the queue: locking a job to
// one worker, retries, rescue of jobs whose instance died, periodic
// cleanup. quire's jobs table holds what River's does not: the request,
// the answer, and the job's state as the API shows it.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/groupcommit"
	"github.com/quire-dev/quire/internal/store"
)

// Runner answers a job's request as the synchronous route would. An
// error of type *Later puts the job back in the queue; another error is
// retried a few times, then fails the job.
type Runner func(ctx context.Context, j quire.Job, req quire.JobRequest) (quire.JobResult, error)

// Later is a Runner's error for work that cannot run now (a limit of the
// key, an engine's full queue): the job is queued again, waiting for the
// reason Result gives, and runs again after After; past Options.MaxWait,
// it ends with Result.
type Later struct {
	After  time.Duration
	Result quire.JobResult // the response that said "not now"
}

func (l *Later) Error() string { return fmt.Sprintf("not now: again in %s", l.After) }

// Options configure the Service.
type Options struct {
	Workers int           // jobs this instance runs at once; 0: none (submit and read only)
	Timeout time.Duration // the longest a job runs
	// OperationTimeouts are the operations' own limits (quire.OpConvert:
	// QUIRE_CONVERT_JOB_TIMEOUT, ...): a job of one runs for at most its
	// limit plus runMargin, and never longer than Timeout.
	OperationTimeouts map[string]time.Duration
	Lease             time.Duration  // PostgreSQL: how long an instance's jobs are its own without renewing its lease; 0: 10 s
	Retention         time.Duration  // how long an ended job and its answer are kept
	WebhookRetryFor   time.Duration  // how long a webhook is retried
	WebhookSecret     []byte         // the key of the webhooks' signatures (LoadSecret)
	Webhooks          *fetch.Fetcher // posts the webhooks, and checks their addresses at submission, under its network rules (required)
	// Callback, when set, reads from a job's request headers whether its
	// end is delivered as its answer itself (Gotenberg's webhooks) rather
	// than as the event of Standard Webhooks, and where.
	Callback     func(header http.Header) (Callback, bool)
	PollInterval time.Duration // how often an instance looks for work it was not told of; 0: 200 ms
	MaxQueued    int           // jobs of one key not yet ended (queued or running) at once (more: 429); 0: no limit
	MaxWait      time.Duration // how long after submission a job may still be sent back to wait (Later); past it, it fails with that answer; 0: no limit
	Logger       *slog.Logger
	Registerer   prometheus.Registerer // nil: no metrics
	Now          func() time.Time
}

// Service submits, reads and runs jobs.
type Service struct {
	db      *store.DB
	opt     Options
	river   *river.Client[*sql.Tx]
	fetcher *fetch.Fetcher
	pilot   *wakingPilot // wakes River when submissions are committed
	run     Runner
	metrics *metrics
	submits *groupcommit.Committer[store.NewJob, error]
	// turns are the Workers runs with a document on an engine at once;
	// turn takes and gives one (see runWorker.Work).
	turns chan struct{}
	turn  quire.EngineTurn
	lease *lease
	// unlock ends what startRunning took: the SQLite database's jobs, or
	// the PostgreSQL lease's renewals.
	unlock func()
}

// jobsHeld is how many jobs River runs at once per engine turn: while
// Workers of them convert, the others read their requests, check them,
// store their answers, or wait for a turn, so that an engine finishing
// finds the next job ready. With two, an engine often found none (the
// others were still storing their answers): bench jobs on SQLite gave
// 0.80-0.88x the throughput of synchronous clients, against 0.96-1.01x
// with four, on the same loaded machine. The cost is that an instance
// holds that many jobs that another instance, idle, cannot take.
const jobsHeld = 4

// rescueMargin is how long past its timeout a running job is taken for
// lost (its instance died) and run again: the time a job cancelled by its
// timeout takes to return.
const rescueMargin = 10 * time.Second

// runAttempts bounds the runs of a job whose runner fails unexpectedly.
const runAttempts = 3

// webhookPolls is how many polls of the default queue make one of the
// webhooks' queue.
const webhookPolls = 5

// webhookQueue keeps deliveries, which wait on other people's servers,
// from holding the slots of the engines' work.
const webhookQueue = "webhooks"

// New returns the service over db. Its workers run only after Start.
func New(db *store.DB, o Options) (*Service, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	s := &Service{db: db, opt: o, fetcher: o.Webhooks, metrics: newMetrics(db, o.Registerer), turns: make(chan struct{}, max(o.Workers, 0)),
		lease: &lease{id: newLeaseID(), ttl: positiveOr(o.Lease, defaultLease), held: map[int]context.CancelFunc{}}, unlock: func() {}}
	s.turn = quire.EngineTurn{Take: s.takeTurn, Give: func() { <-s.turns }}
	// River learns of jobs inserted in a transaction (InsertManyTx, as
	// submissions are) only by polling, and fetches again after a job
	// ends only when its last fetch was full: a burst of submissions to
	// an idle instance waits for the next poll. At River's default (1 s),
	// bench jobs on SQLite gave 0.79x the throughput of synchronous
	// clients, against 0.85-0.96x at 200 ms on the same loaded machine;
	// each poll of each queue is a fetch, which costs CPU even when idle
	// (0.1 ms on SQLite under quire serve's malloc, libc.KeepFreed; 0.6-1.4
	// ms without), which is why it is not shorter.
	poll := positiveOr(o.PollInterval, 200*time.Millisecond)
	cfg := &river.Config{ID: s.lease.id, Logger: o.Logger, PollOnly: true, CompletedJobRetentionPeriod: o.Retention, JobTimeout: o.Timeout,
		// A running job is taken for lost once it has run longer than any
		// job may: a run that hangs (an instance that ends has its jobs
		// rescued at once: lease.go).
		RescueStuckJobsAfter: o.Timeout + rescueMargin,
		// River's own fetch cooldown (100 ms; no longer than a poll): each
		// fetch costs CPU taken from the engines, and with jobsHeld jobs
		// held per turn, the engines do not wait for the next one (bench
		// jobs).
		FetchPollInterval: poll, FetchCooldown: min(100*time.Millisecond, poll)}
	if o.Workers > 0 {
		workers := river.NewWorkers()
		river.AddWorker(workers, &runWorker{s: s})
		river.AddWorker(workers, &webhookWorker{s: s})
		river.AddWorker(workers, &cleanupWorker{s: s})
		cfg.Workers = workers
		cfg.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: jobsHeld * o.Workers},
			// Deliveries and the cleanup are looked for less often (a
			// second by default): each poll is a fetch, which costs the
			// database CPU even when idle, and the default queue polls
			// often only because the engines wait on it.
			webhookQueue: {MaxWorkers: 4, FetchPollInterval: webhookPolls * poll},
		}
		cfg.PeriodicJobs = []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
			func() (river.JobArgs, *river.InsertOpts) {
				return cleanupArgs{}, &river.InsertOpts{Queue: webhookQueue}
			},
			&river.PeriodicJobOpts{RunOnStart: true})}
	}
	s.pilot = &wakingPilot{}
	c, err := river.NewClient[*sql.Tx](&wakingDriver{Driver: db.River(), pilot: s.pilot}, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	s.river = c
	s.submits = groupcommit.New(maxSubmitBatch, s.insert)
	return s, nil
}

func (s *Service) takeTurn(ctx context.Context) error {
	select {
	case s.turns <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// positiveOr is v when it is set (positive), else def.
func positiveOr(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// defaultLease is Options.Lease's default.
const defaultLease = 10 * time.Second

// Start runs queued jobs with run until Stop, after making the jobs that
// an earlier end of an instance left running available again (lease.go).
func (s *Service) Start(ctx context.Context, run Runner) error {
	if s.opt.Workers <= 0 {
		return nil
	}
	s.run = run
	if err := s.startRunning(ctx); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	return s.river.Start(context.WithoutCancel(ctx))
}

// Stop lets the jobs in progress finish within ctx, then stops.
func (s *Service) Stop(ctx context.Context) error {
	if s.opt.Workers <= 0 {
		return nil
	}
	err := s.river.Stop(ctx)
	s.unlock()
	return err
}

// Close commits the submissions queued and stops taking more; call it
// after the HTTP server has finished its requests.
func (s *Service) Close() { s.submits.Close() }

// Submit stores and queues the request of key keyID for operation op;
// webhook, when not empty, is where its end is delivered (already
// checked with CheckWebhook). It returns once the job is committed, in
// one transaction with the submissions that came at the same time.
func (s *Service) Submit(ctx context.Context, keyID, op, webhook string, req quire.JobRequest) (quire.Job, error) {
	j := quire.Job{ID: uuid.NewString(), KeyID: keyID, Operation: op, Status: quire.JobQueued,
		CreatedAt: s.opt.Now().UTC().Truncate(time.Millisecond), Webhook: quire.JobWebhook{URL: webhook}}
	refused, err := s.submits.Do(ctx, store.NewJob{Job: j, Request: req})
	if err == nil {
		err = refused
	}
	if err != nil {
		return quire.Job{}, fmt.Errorf("jobs: submit: %w", err)
	}
	s.metrics.submitted.WithLabelValues(op).Inc()
	return j, nil
}

// maxSubmitBatch bounds the submissions stored in one transaction.
const maxSubmitBatch = 128

// insert stores and queues a batch of submissions in one transaction, and
// returns for each the error that refused it, if any.
func (s *Service) insert(batch []store.NewJob) ([]error, error) {
	ctx := context.Background() // the batch's, not one client's
	s.metrics.batch.Observe(float64(len(batch)))
	refused := make([]error, len(batch))
	err := s.db.InsertJobs(ctx, batch, func(tx *sql.Tx, waiting map[string]int) ([]int64, error) {
		var params []river.InsertManyParams
		var admitted []int
		for i, n := range batch {
			w := waiting[n.Job.KeyID] // the batch's own admitted submissions count too
			if refused[i] = s.checkQueued(w, 1); refused[i] != nil {
				continue
			}
			waiting[n.Job.KeyID]++
			params = append(params, river.InsertManyParams{Args: runArgs{JobID: n.Job.ID, Operation: n.Job.Operation},
				InsertOpts: &river.InsertOpts{MaxAttempts: runAttempts, Priority: priorityFor(w)}})
			admitted = append(admitted, i)
		}
		riverIDs := make([]int64, len(batch))
		if len(params) == 0 {
			return riverIDs, nil
		}
		res, err := s.river.InsertManyTx(ctx, tx, params)
		if err != nil {
			return nil, err
		}
		for k, i := range admitted {
			riverIDs[i] = res[k].Job.ID
		}
		return riverIDs, nil
	})
	if err == nil && slices.ContainsFunc(refused, func(e error) bool { return e == nil }) {
		s.pilot.committed(ctx)
	}
	return refused, err
}

// checkQueued is the per-key cap: it refuses (429) adding more jobs to a
// key that has waiting jobs not yet ended, beyond QUIRE_JOB_MAX_QUEUED. waiting
// must be counted under the key's turn to submit (store: waitingJobs),
// with its batch's submissions admitted before, for the cap to be exact.
func (s *Service) checkQueued(waiting, more int) error {
	if s.opt.MaxQueued <= 0 || waiting+more <= s.opt.MaxQueued {
		return nil
	}
	e := quire.Errorf(quire.CodeRateLimit, "This key already has %d jobs waiting or running (QUIRE_JOB_MAX_QUEUED is %d); submit again when some have ended.", waiting, s.opt.MaxQueued)
	e.RetryAfter = queuedRetryAfter
	return e
}

// queuedRetryAfter is the wait suggested to a key over QUIRE_JOB_MAX_QUEUED.
const queuedRetryAfter = 10 * time.Second

// priorityFor is the River priority (1 first, 4 last) of a key's job
// submitted while waiting others of the same key wait: a key's first jobs
// go first, its flood after them, so that one key's thousands of jobs do
// not hold every other key's first job behind them (River works jobs in
// order of priority, then of submission).
func priorityFor(waiting int) int {
	switch {
	case waiting < 2:
		return 1
	case waiting < 8:
		return 2
	case waiting < 32:
		return 3
	}
	return 4
}

// errNoJob is the answer for a job that does not exist or is another key's.
var errNoJob = quire.Errorf(quire.CodeNotFound, "There is no such job.")

// Get returns job id of key keyID (any key's when keyID is empty).
func (s *Service) Get(ctx context.Context, keyID, id string) (quire.Job, error) {
	j, err := s.db.Job(ctx, id)
	if errors.Is(err, quire.ErrNotFound) || (err == nil && keyID != "" && j.KeyID != keyID) {
		return quire.Job{}, errNoJob
	}
	return j, err
}

// Result returns the answer of job id of key keyID; a job that has not
// ended has none (409 would be as true; 404 says "not here yet").
func (s *Service) Result(ctx context.Context, keyID, id string) (quire.JobResult, error) {
	j, err := s.Get(ctx, keyID, id)
	if err != nil {
		return quire.JobResult{}, err
	}
	res, err := s.db.JobResult(ctx, j.ID)
	if errors.Is(err, quire.ErrNotFound) {
		return res, quire.Errorf(quire.CodeNotFound, "Job %s has no result: it is %s.", j.ID, j.Status)
	}
	return res, err
}

// List returns the newest jobs, at most limit, of key keyID (every key's
// when empty).
func (s *Service) List(ctx context.Context, keyID string, limit int) ([]quire.Job, error) {
	return s.db.Jobs(ctx, keyID, limit)
}

// Cancel ends job id as failed, unless it has ended already, takes it
// out of the queue and delivers its webhook (job.failed) as for any end;
// a run in progress is cancelled by River (at once on this instance, at
// its next check for cancellations on another), and whatever it answers
// is dropped.
func (s *Service) Cancel(ctx context.Context, id string) (quire.Job, error) {
	j, err := s.Get(ctx, "", id)
	if err != nil {
		return quire.Job{}, err
	}
	now := s.opt.Now()
	riverID, cancelled, err := s.db.CancelJob(ctx, id, "cancelled", now, now.Add(s.opt.Retention), s.queueWebhook(ctx, j))
	if err != nil {
		return quire.Job{}, err
	}
	if cancelled {
		s.ended(j, quire.JobFailed, now)
		if _, err := s.river.JobCancel(ctx, riverID); err != nil && !errors.Is(err, river.ErrNotFound) {
			return quire.Job{}, fmt.Errorf("jobs: cancel %s in the queue: %w", id, err)
		}
	}
	return s.Get(ctx, "", id)
}

// CheckWebhook refuses a webhook address, given in the request header
// named header, that is not a valid http(s) URL (400) or that reaches a
// private address (422), as document.url.
func (s *Service) CheckWebhook(ctx context.Context, header, rawURL string) error {
	err := s.fetcher.Check(ctx, rawURL)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fetch.ErrInvalidURL):
		return quire.Invalid("The webhook address is not valid.", quire.Detail{Field: header, Issue: err.Error()})
	default:
		s.opt.Logger.Info("webhook address refused", "err", err)
		return &quire.Error{Code: quire.CodeUnprocessable, Message: "The webhook address must be reachable on the public internet.",
			Details: []quire.Detail{{Field: header, Issue: "not a public address"}}}
	}
}

// Counts are the jobs of every instance waiting and running now.
func (s *Service) Counts(ctx context.Context) (store.JobCounts, error) { return s.db.CountJobs(ctx) }
