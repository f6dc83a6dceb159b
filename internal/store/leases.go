package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Run names one run of a job: the lease of the instance that started it
// (empty on SQLite, which keeps none) and the job's count of runs at its
// start. Only the run that holds the job ends or requeues it.
type Run struct {
	Lease  string
	Number int
}

// RenewLease sets the lease id of an instance running jobs to expire ttl
// from now by the database's clock, creating it if needed. An instance
// whose renewal came too late may find its jobs already taken by another
// (RescueJobs): it must stop their runs before renewing (internal/jobs).
func (db *DB) RenewLease(ctx context.Context, id string, ttl time.Duration) error {
	_, err := db.exec(ctx, `INSERT INTO job_leases (id, expires_at) VALUES (?, `+db.dialect.nowMS+` + ?)
		ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`, id, ttl.Milliseconds())
	return err
}

// leaseGone is how long the row of a lease is kept after it expired: its
// jobs were made available again within seconds, the row is kept only
// for an instance that comes back and renews it.
const leaseGone = 24 * time.Hour

// forgetLeases deletes the leases gone for ? milliseconds (leaseGone).
func (db *DB) forgetLeases() string {
	return `DELETE FROM job_leases WHERE expires_at < ` + db.dialect.nowMS + ` - ?`
}

// RescueJobs makes available again the jobs that River's rows show running
// under a lease that has expired (every running job when all is true: on
// SQLite, when the one instance starts), in one transaction: rescue is
// given their River ids, locked, to make them available (River's own
// query), and quire's rows of those jobs are queued again, their run no
// longer held by anyone. It returns how many River jobs were rescued.
func (db *DB) RescueJobs(ctx context.Context, all bool, rescue func(tx *sql.Tx, riverIDs []int64) error) (int, error) {
	var rescued int
	defer db.writeTurn()()
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		query := `SELECT id FROM river_job WHERE state = 'running' ORDER BY id`
		if !all {
			// River appends the id of the client that fetches a job to its
			// attempted_by; the client's id is its instance's lease.
			query = `SELECT id FROM river_job WHERE state = 'running'
				AND attempted_by[array_upper(attempted_by, 1)] IN (SELECT id FROM job_leases WHERE expires_at < ` + db.dialect.nowMS + `)
				ORDER BY id FOR UPDATE`
		}
		ids, err := riverIDs(ctx, tx, query)
		if err != nil {
			return err
		}
		if !all {
			if _, err := tx.ExecContext(ctx, db.q(db.forgetLeases()), leaseGone.Milliseconds()); err != nil {
				return err
			}
		}
		if len(ids) == 0 {
			return nil
		}
		if err := rescue(tx, ids); err != nil {
			return err
		}
		rescued = len(ids)
		for chunk := range slices.Chunk(ids, 500) {
			args := make([]any, len(chunk))
			for i, id := range chunk {
				args[i] = id
			}
			_, err := tx.ExecContext(ctx, db.q(`UPDATE jobs SET status = 'queued', started_at = NULL, lease = ''
				WHERE status = 'running' AND river_id IN (`+strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ")+`)`), args...)
			if err != nil {
				return err
			}
		}
		return nil
	})
	return rescued, err
}

// riverIDs runs query, which selects River job ids, in tx.
func riverIDs(ctx context.Context, tx *sql.Tx, query string) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ErrNotAlone is LockJobRunner's answer when another process runs the jobs
// of the same SQLite database.
var ErrNotAlone = errors.New("another process runs jobs on this SQLite database")

// LockJobRunner makes this process the one that runs the jobs of its
// SQLite database until release (or its end, however it ends: the lock is
// the kernel's, on a file beside the database), so that it may take every
// job still running for one orphaned by a crash. PostgreSQL, where
// instances share the jobs under leases, needs none: release does nothing.
func (db *DB) LockJobRunner() (release func(), err error) {
	if db.dialect.name != "sqlite" {
		return func() {}, nil
	}
	f, err := os.OpenFile(db.path+"-jobs.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: jobs lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrNotAlone
		}
		return nil, fmt.Errorf("store: jobs lock: %w", err)
	}
	return func() { f.Close() }, nil
}
