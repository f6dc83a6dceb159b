package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
)

// runArgs is River's job of running one of quire's.
type runArgs struct {
	JobID     string `json:"job_id"`
	Operation string `json:"operation,omitempty"` // quire.OpConvert...; empty in jobs queued before it was kept
}

func (runArgs) Kind() string { return "quire_request" }

type runWorker struct {
	river.WorkerDefaults[runArgs]
	s *Service
}

// Timeout is the job's operation's own limit plus runMargin, at most
// QUIRE_JOB_TIMEOUT: River ends the run's context then.
func (w *runWorker) Timeout(rj *river.Job[runArgs]) time.Duration {
	own, ok := w.s.opt.OperationTimeouts[rj.Args.Operation]
	if !ok {
		return w.s.opt.Timeout
	}
	return min(own+runMargin, w.s.opt.Timeout)
}

// runMargin is a job's time beyond its operation's own limit: to read its
// request, wait for an engine turn behind the others of its instance
// (jobsHeld per turn), and store its answer.
const runMargin = time.Minute

// Work runs one job. River runs jobsHeld times as many at once as
// Workers, and Workers of them at most have a document on an engine
// (Service.turn): storing a job's start (which reads its request in the
// same statement), its request's checks, storing its answer and River's
// next fetch happen while other jobs convert, so that the engines wait
// for none of them.
func (w *runWorker) Work(ctx context.Context, rj *river.Job[runArgs]) error {
	s := w.s
	ctx, release := s.lease.hold(ctx)
	defer release()
	if s.lease.isLost() {
		return river.JobSnooze(s.lease.ttl) // for any instance, this one once it renews its lease
	}
	j, req, ok, err := s.db.StartJob(ctx, rj.Args.JobID, s.lease.id, s.opt.Now())
	if err != nil || !ok { // !ok: cancelled (or ended before a crash kept River from knowing)
		return err
	}
	run := store.Run{Lease: s.lease.id, Number: j.Runs}
	res, err := s.run(quire.WithEngineTurn(ctx, s.turn), j, req)
	if s.lease.isLost() {
		// The run was stopped (or may be): its job may be another
		// instance's already. Snoozed, it runs again after a lease's time
		// if no other instance took and ended it meanwhile; a snooze spends
		// none of its attempts.
		return river.JobSnooze(s.lease.ttl)
	}
	// What the run answered is stored even when its time ran out meanwhile
	// (QUIRE_JOB_TIMEOUT): with ctx, the job would stay running, unended.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bookkeepingTimeout)
	defer cancel()
	var later *Later
	switch {
	case errors.As(err, &later) && s.opt.MaxWait > 0 && s.opt.Now().Sub(j.CreatedAt) >= s.opt.MaxWait:
		return s.finish(ctx, j, run, quire.JobFailed, errorMessage(later.Result), later.Result)
	case errors.As(err, &later):
		if err := s.db.RequeueJob(ctx, j.ID, run, errorMessage(later.Result)); err != nil {
			return err
		}
		return river.JobSnooze(later.After)
	case err != nil && rj.Attempt < rj.MaxAttempts:
		return err
	case err != nil:
		s.opt.Logger.Error("job failed", "job_id", j.ID, "err", err)
		return s.finish(ctx, j, run, quire.JobFailed, "The job could not be run.", quire.JobResult{})
	case res.Status >= 400:
		return s.finish(ctx, j, run, quire.JobFailed, errorMessage(res), res)
	}
	return s.finish(ctx, j, run, quire.JobSucceeded, "", res)
}

// finish stores the answer of run of job j and, in the same transaction,
// queues its webhook; nothing if run no longer holds j (its lease expired,
// and another instance may have run it since). River completes its own
// job once Work returns: doing that
// in this transaction too (JobCompleteTx) saved no commit, since River's
// completer still updates every job it ran, and on SQLite it then ran a
// second query for each (the fallback for a job no longer running).
func (s *Service) finish(ctx context.Context, j quire.Job, run store.Run, status, reason string, res quire.JobResult) error {
	now := s.opt.Now()
	done, err := s.db.FinishJob(ctx, j.ID, run, status, reason, res, now, now.Add(s.opt.Retention), s.queueWebhook(ctx, j))
	if err != nil {
		return fmt.Errorf("jobs: finish %s: %w", j.ID, err)
	}
	if done {
		s.ended(j, status, now)
		return nil
	}
	if now, err := s.db.Job(ctx, j.ID); err == nil && (now.Status == quire.JobQueued || now.Status == quire.JobRunning) {
		// Not ended, and not this run's: River runs it again, unless
		// another instance took it and ends it first.
		return fmt.Errorf("jobs: %s: the lease %s expired during its run %d; the answer was not stored", j.ID, run.Lease, run.Number)
	}
	return nil
}

// ended logs and counts the end of job j, run or cancelled.
func (s *Service) ended(j quire.Job, status string, now time.Time) {
	s.opt.Logger.Info("job ended", "job_id", j.ID, "operation", j.Operation, "status", status, "wait_ms", now.Sub(j.CreatedAt).Milliseconds())
	s.metrics.finished.WithLabelValues(j.Operation, status).Inc()
	s.metrics.wait.Observe(now.Sub(j.CreatedAt).Seconds())
}

// bookkeepingTimeout bounds the writes that end a run (its answer, its
// requeueing), which do not share the run's deadline.
const bookkeepingTimeout = 30 * time.Second

// queueWebhook returns the queueing of j's webhook in the transaction
// that ends j; nil when j has none.
func (s *Service) queueWebhook(ctx context.Context, j quire.Job) func(*sql.Tx) error {
	if j.Webhook.URL == "" {
		return nil
	}
	return func(tx *sql.Tx) error {
		_, err := s.river.InsertTx(ctx, tx, webhookArgs{JobID: j.ID}, &river.InsertOpts{Queue: webhookQueue, MaxAttempts: webhookAttempts})
		return err
	}
}

// errorMessage is the message of an answer in the API's error body.
func errorMessage(res quire.JobResult) string {
	var body struct{ Message string }
	if json.Unmarshal(res.Body, &body) == nil && body.Message != "" {
		return body.Message
	}
	return fmt.Sprintf("The operation answered %d.", res.Status)
}

// cleanupArgs is River's periodic job of removing expired jobs.
type cleanupArgs struct{}

func (cleanupArgs) Kind() string { return "quire_jobs_cleanup" }

type cleanupWorker struct {
	river.WorkerDefaults[cleanupArgs]
	s *Service
}

func (w *cleanupWorker) Work(ctx context.Context, _ *river.Job[cleanupArgs]) error {
	n, err := w.s.db.DeleteExpiredJobs(ctx, w.s.opt.Now())
	if n > 0 {
		w.s.opt.Logger.Info("expired jobs removed", "jobs", n)
	}
	return err
}
