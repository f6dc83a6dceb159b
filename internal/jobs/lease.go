package jobs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/quire-dev/quire/internal/store"
)

// A job whose instance died is run again at once, not after its timeout.
// On SQLite one instance runs the jobs (store.LockJobRunner): when it
// starts, every job still running was orphaned by its end, and is made
// available before the queue starts. On PostgreSQL each instance keeps a
// lease in the database, renewed leaseRenewals times per QUIRE_JOB_LEASE;
// its River client's id is the lease's, so River's rows name the lease
// of each running job, and every instance, at each renewal, makes
// available again the jobs of leases that expired (store.RescueJobs,
// with River's own rescue query). An instance that could not renew its
// lease in time stops its runs before another can take their jobs, and a
// run stores its answer only while its lease holds (store.FinishJob), so
// that a job is never run twice at once nor its answer stored twice.
//
// River's own rescuer (a job running longer than QUIRE_JOB_TIMEOUT +
// rescueMargin) is kept for what a lease cannot see: a run that hangs on
// an instance that lives.

// leaseRenewals is how many times an instance renews its lease per lease
// period: it keeps its jobs through one failed renewal.
const leaseRenewals = 3

// lease is this instance's: its id, and the runs that hold jobs under it,
// which are cancelled if it is lost.
type lease struct {
	id  string
	ttl time.Duration

	mu    sync.Mutex
	next  int // the token of the next run held
	held  map[int]context.CancelFunc
	lost  bool        // not renewed in time: no run may hold a job under it until renewed
	timer *time.Timer // loses the lease at the end of its last renewal's term
}

// newLeaseID names an instance's lease (and its River client) uniquely:
// the host, for the operator reading River's rows, and random bytes.
func newLeaseID() string {
	host, _ := os.Hostname()
	b := make([]byte, 8)
	rand.Read(b)
	return fmt.Sprintf("%s-%x", host, b)
}

// hold returns ctx for a run under the lease, cancelled if the lease is
// lost, and its release.
func (l *lease) hold(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	l.mu.Lock()
	token := l.next
	l.next++
	if l.lost {
		cancel()
	}
	l.held[token] = cancel
	l.mu.Unlock()
	return ctx, func() {
		l.mu.Lock()
		delete(l.held, token)
		l.mu.Unlock()
		cancel()
	}
}

// isLost reports whether the lease was lost and not renewed since.
func (l *lease) isLost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

// lose stops every run held under the lease: another instance may take
// their jobs from now on.
func (l *lease) lose() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lost = true
	for _, cancel := range l.held {
		cancel()
	}
}

// renew renews the lease in db. Here its term ends a renewal period
// before it ends in the database, counted from before the renewal was
// sent: the runs it stops have that long to end, and River to record
// their end, before another instance may take their jobs.
func (l *lease) renew(ctx context.Context, db *store.DB) error {
	sent := time.Now()
	ctx, cancel := context.WithTimeout(ctx, l.ttl/leaseRenewals)
	defer cancel()
	if err := db.RenewLease(ctx, l.id, l.ttl); err != nil {
		return fmt.Errorf("jobs: renew the lease %s: %w", l.id, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	left := l.ttl - l.ttl/leaseRenewals - time.Since(sent)
	if left <= 0 {
		return fmt.Errorf("jobs: the lease %s was renewed too late", l.id)
	}
	if l.timer == nil {
		l.timer = time.AfterFunc(left, l.lose)
	} else {
		l.timer.Reset(left) // if it fired, the runs it stopped stay stopped
	}
	l.lost = false
	return nil
}

// keepLease renews the lease and rescues the jobs of expired leases until
// ctx ends.
func (s *Service) keepLease(ctx context.Context) {
	t := time.NewTicker(s.lease.ttl / leaseRenewals)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.lease.renew(ctx, s.db); err != nil && ctx.Err() == nil {
			s.opt.Logger.Error("job lease not renewed", "err", err)
		}
		if err := s.rescue(ctx, false); err != nil && ctx.Err() == nil {
			s.opt.Logger.Error("jobs of expired leases not rescued", "err", err)
		}
	}
}

// rescue makes available again the jobs orphaned by an instance's end:
// those of expired leases, or every running job (all, on SQLite at start).
func (s *Service) rescue(ctx context.Context, all bool) error {
	n, err := s.db.RescueJobs(ctx, all, s.makeAvailable)
	if n > 0 {
		s.opt.Logger.Warn("jobs of an instance that ended made available again", "river_jobs", n)
		s.metrics.rescued.Add(float64(n))
	}
	return err
}

// makeAvailable makes River's running jobs ids available at once, with
// River's own rescue query (which appends to each job's errors and counts
// its rescues), in tx, where they are locked.
func (s *Service) makeAvailable(tx *sql.Tx, ids []int64) error {
	now := time.Now().UTC()
	why, err := json.Marshal(rivertype.AttemptError{At: now, Error: "the instance running it ended: made available again"})
	if err != nil {
		return err
	}
	p := &riverdriver.JobRescueManyParams{StuckHorizon: now.Add(leaseGrace)}
	for _, id := range ids {
		p.ID = append(p.ID, id)
		p.Error = append(p.Error, why)
		p.FinalizedAt = append(p.FinalizedAt, nil)
		p.ScheduledAt = append(p.ScheduledAt, now)
		p.State = append(p.State, string(rivertype.JobStateAvailable))
	}
	_, err = s.db.River().UnwrapExecutor(tx).JobRescueMany(context.Background(), p)
	return err
}

// leaseGrace puts the horizon of River's rescue query (it rescues only
// jobs started before it) past any start: the jobs given are locked in
// the transaction, and all of them are to be rescued.
const leaseGrace = 24 * time.Hour

// startRunning prepares the instance to run jobs: on SQLite it takes the
// database's jobs and makes every running job available again; on
// PostgreSQL it takes its lease, then keeps it until Stop.
func (s *Service) startRunning(ctx context.Context) error {
	if s.db.Backend() == "sqlite" {
		release, err := s.db.LockJobRunner()
		if errors.Is(err, store.ErrNotAlone) {
			s.opt.Logger.Warn("another process runs this SQLite database's jobs: the jobs it leaves running when it ends run again after QUIRE_JOB_TIMEOUT")
			return nil
		}
		if err != nil {
			return err
		}
		s.unlock = release
		return s.rescue(ctx, true)
	}
	if err := s.lease.renew(ctx, s.db); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.keepLease(ctx)
	}()
	// Renewals end with Stop; runs that Stop left going are stopped at the
	// end of the lease's term, when another instance may take their jobs.
	s.unlock = func() {
		cancel()
		<-done
	}
	return nil
}
