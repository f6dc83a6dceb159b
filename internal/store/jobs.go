package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/quire-dev/quire"
)

// River returns the River driver over this database's own pool, so that a
// job's row and its place in River's queue are written in one transaction
// (InsertJob). On PostgreSQL that is riverdatabasesql rather than
// riverpgxv5: quire's pool is database/sql over pgx's stdlib, and a second
// pool only for River could not share the transaction. It polls for work
// instead of LISTEN/NOTIFY (see internal/jobs).
func (db *DB) River() riverdriver.Driver[*sql.Tx] {
	if db.dialect.name == "sqlite" {
		return riversqlite.New(db.sql)
	}
	return riverdatabasesql.New(db.sql)
}

// migrateRiverTx brings River's tables up to date within quire's
// migration transaction (SQLite).
func (db *DB) migrateRiverTx(ctx context.Context, tx *sql.Tx) error {
	m, err := rivermigrate.New(db.River(), nil)
	if err != nil {
		return err
	}
	if _, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river: %w", err)
	}
	return nil
}

// migrateRiver brings River's tables up to date on PostgreSQL, where some
// of River's migrations cannot share a transaction (a new enum value is
// used in the one that adds it): each in its own, while one connection
// holds a lock that instances starting at once wait for.
func (db *DB) migrateRiver(ctx context.Context) error {
	m, err := rivermigrate.New(db.River(), nil)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7261746368)`); err != nil { // any constant shared by all instances
			return err
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("river: %w", err)
		}
		return nil
	})
}

// The parts of job_bodies: a job's request body, and its answer's.
const (
	partRequest = "request"
	partResult  = "result"
)

// orEmpty is b, or an empty body for none: a body is never NULL.
func orEmpty(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

const jobColumns = `id, key_id, operation, status, created_at, started_at, finished_at, error, runs,
	webhook_url, webhook_attempts, webhook_delivered_at, webhook_last_error, waiting`

// scanJob reads a row of jobColumns, then the columns after them into more.
func scanJob(s scanner, more ...any) (quire.Job, error) {
	var j quire.Job
	var created int64
	var started, finished, delivered sql.NullInt64
	err := s.Scan(append([]any{&j.ID, &j.KeyID, &j.Operation, &j.Status, &created, &started, &finished, &j.Error, &j.Runs,
		&j.Webhook.URL, &j.Webhook.Attempts, &delivered, &j.Webhook.LastError, &j.Waiting}, more...)...)
	j.CreatedAt, j.StartedAt, j.FinishedAt = time.UnixMilli(created).UTC(), fromMS(started), fromMS(finished)
	j.Webhook.DeliveredAt = fromMS(delivered)
	return j, err
}

// NewJob is a job to store with the request it runs.
type NewJob struct {
	Job     quire.Job
	Request quire.JobRequest
}

// InsertJobs stores jobs with their requests and enqueues them (River's
// insert) in one transaction: a job is in the queue exactly when it is
// stored. enqueue is given the transaction and how many jobs of each of
// the batch's keys were already waiting; it returns the River job of
// each of jobs, in order, 0 for one it refused, which is not stored.
func (db *DB) InsertJobs(ctx context.Context, jobs []NewJob, enqueue func(tx *sql.Tx, waiting map[string]int) ([]int64, error)) error {
	headers := make([]string, len(jobs))
	for i, n := range jobs {
		h, err := json.Marshal(n.Request.Header)
		if err != nil {
			return err
		}
		headers[i] = string(h)
	}
	defer db.writeTurn()()
	return db.inTx(ctx, func(tx *sql.Tx) error {
		keys := make([]string, 0, len(jobs))
		for _, n := range jobs {
			keys = append(keys, n.Job.KeyID)
		}
		slices.Sort(keys) // every instance takes the keys' locks in one order: no deadlock
		waiting := map[string]int{}
		for _, k := range slices.Compact(keys) {
			c, err := db.waitingJobs(ctx, tx, k)
			if err != nil {
				return err
			}
			waiting[k] = c
		}
		riverIDs, err := enqueue(tx, waiting)
		if err != nil {
			return err
		}
		var rows, bodies []any
		for i, n := range jobs {
			if riverIDs[i] == 0 {
				continue
			}
			j, r := n.Job, n.Request
			rows = append(rows, j.ID, j.KeyID, j.Operation, j.Status, j.CreatedAt.UnixMilli(), r.Method, r.Target, headers[i], j.Webhook.URL, riverIDs[i])
			bodies = append(bodies, j.ID, partRequest, orEmpty(r.Body))
		}
		err = db.insertRows(ctx, tx, `INSERT INTO jobs (id, key_id, operation, status, created_at, method, target,
			request_header, webhook_url, river_id) VALUES `, "", 10, rows)
		if err != nil {
			return err
		}
		return db.insertRows(ctx, tx, `INSERT INTO job_bodies (job_id, part, body) VALUES `, "", 3, bodies)
	})
}

// jobSubmitLocks is the first key of PostgreSQL's advisory locks that
// serialise one key's submissions (waitingJobs); the second is the key's
// hash. Two-key advisory locks do not meet the one-key lock of migrations.
const jobSubmitLocks = 28

// waitingJobs counts the jobs of key keyID not yet ended, queued or
// running, after taking the key's turn to submit until tx ends: no other
// transaction, on any instance, adds a job of the key in between, so that
// a cap checked on the count is exact. Running jobs count because a limit
// sends them back to wait (RequeueJob): counted as they are, they never
// take a key past its cap (counting the queued ones only, 2,000
// submissions of one key under QUIRE_KEY_RATE left 1,005 waiting against
// a cap of 1,000). PostgreSQL: an advisory lock on the key's hash (not
// its api_keys row, which authentication updates); SQLite: tx began
// IMMEDIATE and holds the single writer's lock already.
func (db *DB) waitingJobs(ctx context.Context, tx *sql.Tx, keyID string) (int, error) {
	if db.dialect.name == "postgres" {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, jobSubmitLocks, keyID); err != nil {
			return 0, err
		}
	}
	// A statement of its own, after the lock: under READ COMMITTED it sees
	// what the lock's previous holder committed.
	var waiting int
	err := tx.QueryRowContext(ctx, db.q(`SELECT COUNT(*) FROM jobs WHERE key_id = ? AND status IN (?, ?)`), keyID, quire.JobQueued, quire.JobRunning).Scan(&waiting)
	return waiting, err
}

// Job returns job id; quire.ErrNotFound when there is none.
func (db *DB) Job(ctx context.Context, id string) (quire.Job, error) {
	j, err := scanJob(db.queryRow(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ?`, id))
	return j, notFound(err)
}

// StartJob marks job id running (again, after a crash) under lease,
// counts the start, and returns the job with the request it runs, in one
// statement; false when it has ended: cancelled, or ended before a crash
// kept River from knowing. The run is {lease, the job's Runs}.
func (db *DB) StartJob(ctx context.Context, id, lease string, now time.Time) (quire.Job, quire.JobRequest, bool, error) {
	defer db.writeTurn()()
	var r quire.JobRequest
	var header string
	j, err := scanJob(db.queryRow(ctx, `UPDATE jobs SET status = 'running', started_at = ?, runs = runs + 1, waiting = '', lease = ?
		WHERE id = ? AND status IN ('queued', 'running')
		RETURNING `+jobColumns+`, method, target, request_header,
			(SELECT body FROM job_bodies WHERE job_id = jobs.id AND part = ?)`, now.UnixMilli(), lease, id, partRequest),
		&r.Method, &r.Target, &header, &r.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return j, r, false, nil
	}
	if err != nil {
		return j, r, false, err
	}
	return j, r, true, json.Unmarshal([]byte(header), &r.Header)
}

// RequeueJob takes back the start of run of job id, whose request was
// answered "not now" (a limit, a full engine): it is queued again, not
// started and not counted as a run, waiting for reason. It does nothing
// unless run still holds the job.
func (db *DB) RequeueJob(ctx context.Context, id string, run Run, reason string) error {
	defer db.writeTurn()()
	_, err := db.exec(ctx, `UPDATE jobs SET status = 'queued', started_at = NULL, runs = runs - 1, waiting = ?, lease = ''
		WHERE id = ? AND `+db.heldBy(), append([]any{reason, id}, run.args()...)...)
	return err
}

// heldBy is the condition that a job is running and held by a run (its
// arguments: Run.args): the run's instance, and the run itself, for the
// job may have been run again since, on this instance or another; and on
// PostgreSQL, the instance's lease not expired, for another instance may
// take the job at any time after.
func (db *DB) heldBy() string {
	cond := `status = 'running' AND lease = ? AND runs = ?`
	if db.dialect.name == "postgres" {
		cond += ` AND (lease = '' OR EXISTS (SELECT 1 FROM job_leases WHERE job_leases.id = jobs.lease AND expires_at > ` + db.dialect.nowMS + `))`
	}
	return cond
}

func (r Run) args() []any { return []any{r.Lease, r.Number} }

// FinishJob stores the answer of run of job id, ending it as status,
// and runs then (the webhook's enqueueing), when not nil, in the same
// transaction. It reports false, storing nothing, when run no longer
// holds the job (it ended, or another run took it: heldBy).
func (db *DB) FinishJob(ctx context.Context, id string, run Run, status, reason string, res quire.JobResult, now, expires time.Time, then func(*sql.Tx) error) (bool, error) {
	defer db.writeTurn()()
	header, err := json.Marshal(res.Header)
	if err != nil {
		return false, err
	}
	ending := append([]any{status, reason, now.UnixMilli(), expires.UnixMilli(), res.Status, string(header), id}, run.args()...)
	endJob := endJob + db.heldBy()
	body := []any{partResult, orEmpty(res.Body)}
	if then == nil && db.dialect.name == "postgres" {
		// One statement, committed alone: as a transaction it took four
		// round trips (BEGIN, the two statements, COMMIT), and each costs
		// the database server and quire CPU that the engines, on the same
		// cores, lose (bench jobs).
		r, err := db.exec(ctx, `WITH ended AS (`+endJob+` RETURNING id)
			INSERT INTO job_bodies (job_id, part, body) SELECT id, ?, ? FROM ended`, append(ending, body...)...)
		if err != nil {
			return false, err
		}
		n, err := r.RowsAffected()
		return n == 1, err
	}
	done := false
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, db.q(endJob), ending...)
		if err != nil {
			return err
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.q(`INSERT INTO job_bodies (job_id, part, body) VALUES (?, ?, ?)`), append([]any{id}, body...)...); err != nil {
			return err
		}
		done = true
		return andThen(tx, then)
	})
	return done && err == nil, err
}

// endJob ends a job with its answer's status and headers; heldBy follows.
const endJob = `UPDATE jobs SET status = ?, error = ?, finished_at = ?, expires_at = ?,
	result_status = ?, result_header = ? WHERE id = ? AND `

// JobRequestHeader returns the headers kept of job id's request.
func (db *DB) JobRequestHeader(ctx context.Context, id string) (map[string][]string, error) {
	var header string
	if err := db.queryRow(ctx, `SELECT request_header FROM jobs WHERE id = ?`, id).Scan(&header); err != nil {
		return nil, notFound(err)
	}
	var h map[string][]string
	return h, json.Unmarshal([]byte(header), &h)
}

// JobResult returns the answer of job id; quire.ErrNotFound when it has none.
func (db *DB) JobResult(ctx context.Context, id string) (quire.JobResult, error) {
	var r quire.JobResult
	var status sql.NullInt64
	var header sql.NullString
	err := db.queryRow(ctx, `SELECT j.result_status, j.result_header, b.body FROM jobs j
		LEFT JOIN job_bodies b ON b.job_id = j.id AND b.part = ? WHERE j.id = ?`, partResult, id).Scan(&status, &header, &r.Body)
	if err != nil {
		return r, notFound(err)
	}
	if !status.Valid {
		return r, quire.ErrNotFound
	}
	r.Status = int(status.Int64)
	return r, json.Unmarshal([]byte(header.String), &r.Header)
}

// CancelJob ends job id as failed with reason, unless it has ended
// already (false), runs then (the webhook's enqueueing), when not nil,
// in the same transaction, and returns its River job for the queue to cancel.
func (db *DB) CancelJob(ctx context.Context, id, reason string, now, expires time.Time, then func(*sql.Tx) error) (riverID int64, cancelled bool, err error) {
	defer db.writeTurn()()
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, db.q(`UPDATE jobs SET status = 'failed', error = ?, finished_at = ?, expires_at = ?
			WHERE id = ? AND status IN ('queued', 'running')`), reason, now.UnixMilli(), expires.UnixMilli(), id)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		if err != nil || n == 0 {
			return err
		}
		cancelled = true
		if err := tx.QueryRowContext(ctx, db.q(`SELECT river_id FROM jobs WHERE id = ?`), id).Scan(&riverID); err != nil {
			return err
		}
		return andThen(tx, then)
	})
	return riverID, cancelled, err
}

// andThen runs then, if not nil, in tx.
func andThen(tx *sql.Tx, then func(*sql.Tx) error) error {
	if then == nil {
		return nil
	}
	return then(tx)
}

// RecordWebhookAttempt counts an attempt to deliver job id's webhook;
// a delivered one sets the time of delivery, a failed one its error.
func (db *DB) RecordWebhookAttempt(ctx context.Context, id string, delivered bool, failure string, now time.Time) error {
	defer db.writeTurn()()
	_, err := db.exec(ctx, `UPDATE jobs SET webhook_attempts = webhook_attempts + 1, webhook_last_error = ?,
		webhook_delivered_at = CASE WHEN ? THEN ? ELSE webhook_delivered_at END WHERE id = ?`,
		failure, delivered, now.UnixMilli(), id)
	return err
}

// Jobs lists the newest jobs first, at most limit: of key keyID, or of
// every key when keyID is empty.
func (db *DB) Jobs(ctx context.Context, keyID string, limit int) ([]quire.Job, error) {
	var out []quire.Job
	err := db.scan(ctx, `SELECT `+jobColumns+` FROM jobs WHERE ? = '' OR key_id = ? ORDER BY created_at DESC, id LIMIT ?`,
		[]any{keyID, keyID, limit}, func(s scanner) error {
			j, err := scanJob(s)
			out = append(out, j)
			return err
		})
	return out, err
}

// JobCounts are the jobs waiting and running, and when the oldest
// waiting one was submitted (zero when none waits).
type JobCounts struct {
	Queued, Running int
	OldestQueued    time.Time
}

// CountJobs counts the jobs not yet ended.
func (db *DB) CountJobs(ctx context.Context) (JobCounts, error) {
	var c JobCounts
	var oldest sql.NullInt64
	err := db.queryRow(ctx, `SELECT
		COALESCE(SUM(CASE WHEN status = 'queued' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN status = 'running' THEN 1 ELSE 0 END), 0),
		MIN(CASE WHEN status = 'queued' THEN created_at END)
		FROM jobs WHERE status IN ('queued', 'running')`).Scan(&c.Queued, &c.Running, &oldest)
	c.OldestQueued = fromMS(oldest)
	return c, err
}

// DeleteExpiredJobs removes the jobs whose results have been kept long enough.
func (db *DB) DeleteExpiredJobs(ctx context.Context, now time.Time) (int64, error) {
	defer db.writeTurn()()
	var n int64
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, db.q(`DELETE FROM job_bodies WHERE job_id IN (SELECT id FROM jobs WHERE expires_at < ?)`), now.UnixMilli())
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, db.q(`DELETE FROM jobs WHERE expires_at < ?`), now.UnixMilli())
		if err == nil {
			n, err = res.RowsAffected()
		}
		return err
	})
	return n, err
}
