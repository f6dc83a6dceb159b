package store_test

import (
	"database/sql"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestLockJobRunner: on SQLite one process at a time runs a database's
// jobs, until it releases the lock; PostgreSQL needs no such lock.
func TestLockJobRunner(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			// Two handles stand for two processes: the lock is on an open
			// file, so two opens of it in one process exclude each other too.
			first, second := storetest.Open(t, u), storetest.Open(t, u)
			release, err := first.LockJobRunner()
			if err != nil {
				t.Fatal(err)
			}
			again, err := second.LockJobRunner()
			if backend == "postgres" {
				if err != nil {
					t.Fatalf("PostgreSQL: a second runner refused: %v", err)
				}
				again()
				release()
				return
			}
			if !errors.Is(err, store.ErrNotAlone) {
				t.Fatalf("a second runner while the first holds the lock: %v, want ErrNotAlone", err)
			}
			release()
			again, err = second.LockJobRunner()
			if err != nil {
				t.Fatalf("a runner after the first released the lock: %v", err)
			}
			again()
		})
	}
}

// insertRiverJob adds through raw a River job running for the client
// lease, as River's fetch leaves it, and returns its id.
func insertRiverJob(t *testing.T, raw *sql.DB, backend, lease string) int64 {
	t.Helper()
	q := `INSERT INTO river_job (state, max_attempts, kind, args, attempted_by) VALUES ('running', 5, 'quire', '{}', ARRAY['` + lease + `']) RETURNING id`
	if backend == "sqlite" {
		q = `INSERT INTO river_job (state, max_attempts, kind, args, attempted_by) VALUES ('running', 5, 'quire', '{}', json_array('` + lease + `')) RETURNING id`
	}
	var id int64
	if err := raw.QueryRow(q).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestRescueJobs: the jobs that River shows running under an expired
// lease (every running one when all is true) are handed to rescue, and
// quire's rows of them are queued again; a job under a live lease is left
// to its instance. A rescue that fails changes nothing.
func TestRescueJobs(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			db, raw := storetest.Open(t, u), storetest.SQL(t, u)
			now := time.UnixMilli(1_700_000_000_000).UTC()
			if err := db.RenewLease(ctx, "gone", -time.Second); err != nil {
				t.Fatal(err)
			}
			if err := db.RenewLease(ctx, "live", time.Hour); err != nil {
				t.Fatal(err)
			}
			byLease := map[string]int64{}
			for _, lease := range []string{"gone", "live"} {
				riverID := insertRiverJob(t, raw, backend, lease)
				byLease[lease] = riverID
				err := db.InsertJobs(ctx, []store.NewJob{{Job: quire.Job{ID: lease, KeyID: "k", Operation: quire.OpSign, Status: quire.JobQueued, CreatedAt: now},
					Request: quire.JobRequest{Method: "POST", Target: "/v1/sign"}}}, func(*sql.Tx, map[string]int) ([]int64, error) { return []int64{riverID}, nil })
				if err != nil {
					t.Fatal(err)
				}
				startJob(t, db, lease, lease, now)
			}

			refused := errors.New("River refused")
			if _, err := db.RescueJobs(ctx, backend == "sqlite", func(*sql.Tx, []int64) error { return refused }); !errors.Is(err, refused) {
				t.Fatalf("a failed rescue: %v, want %v", err, refused)
			}
			if j, _ := db.Job(ctx, "gone"); j.Status != quire.JobRunning {
				t.Fatalf("after a failed rescue the job is %s, want running still", j.Status)
			}

			// SQLite has one instance, which at its start rescues every
			// running job; PostgreSQL rescues those of expired leases.
			all := backend == "sqlite"
			want := []int64{byLease["gone"]}
			if all {
				want = []int64{byLease["gone"], byLease["live"]}
			}
			var handed []int64
			n, err := db.RescueJobs(ctx, all, func(_ *sql.Tx, ids []int64) error { handed = ids; return nil })
			if err != nil || n != len(want) || !slices.Equal(handed, want) {
				t.Fatalf("rescued %d (%v), River jobs %v; want %v", n, err, handed, want)
			}
			for _, lease := range []string{"gone", "live"} {
				wantStatus := quire.JobRunning
				if slices.Contains(want, byLease[lease]) {
					wantStatus = quire.JobQueued
				}
				if j, _ := db.Job(ctx, lease); j.Status != wantStatus || (wantStatus == quire.JobQueued) != j.StartedAt.IsZero() {
					t.Errorf("job of lease %s: %s, started %v; want %s", lease, j.Status, j.StartedAt, wantStatus)
				}
			}
		})
	}
}
