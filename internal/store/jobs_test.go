package store_test

import (
	"bytes"
	"database/sql"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestJobBodiesMigrationKeepsThem upgrades a database with jobs stored
// before migration 0015, their bodies in their rows: a queued job still
// starts with its request, an ended one still answers its result, and
// its bodies go when it expires.
func TestJobBodiesMigrationKeepsThem(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			u := storetest.URL(t, backend)
			old := openAt(t, u, 14)
			raw := storetest.SQL(t, u)
			const columns = `INSERT INTO jobs (id, key_id, operation, status, created_at, method, target, request_header, request_body,
				result_status, result_header, result_body, expires_at) VALUES `
			for _, q := range []string{
				columns + `('q', 'k', 'convert', 'queued', 1, 'POST', '/v1/convert', '{}', 'request q', NULL, NULL, NULL, NULL)`,
				columns + `('e', 'k', 'convert', 'succeeded', 1, 'POST', '/v1/convert', '{}', 'request e', 200, '{}', 'result e', 9000000000000)`,
			} {
				if _, err := raw.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			old.Close()

			db := storetest.Open(t, u)
			_, req, ok, err := db.StartJob(ctx, "q", "", time.Now())
			if err != nil || !ok || string(req.Body) != "request q" || req.Target != "/v1/convert" {
				t.Errorf("queued job started: %v %v, request %q %q; want its request body", ok, err, req.Target, req.Body)
			}
			res, err := db.JobResult(ctx, "e")
			if err != nil || res.Status != 200 || !bytes.Equal(res.Body, []byte("result e")) {
				t.Errorf("ended job's result: %d %q (%v), want 200 %q", res.Status, res.Body, err, "result e")
			}
			if n, err := db.DeleteExpiredJobs(ctx, time.UnixMilli(9000000000001)); err != nil || n != 1 {
				t.Errorf("expired jobs removed: %d (%v), want 1 (the ended one)", n, err)
			}
			var left int
			if err := raw.QueryRow(`SELECT COUNT(*) FROM job_bodies WHERE job_id = 'e'`).Scan(&left); err != nil || left != 0 {
				t.Errorf("bodies of the expired job left: %d (%v), want 0", left, err)
			}
		})
	}
}

// TestFinishJob stores a running job's answer, with work of its own in the
// transaction (a webhook to queue) and without (PostgreSQL then ends it in
// one statement), and stores nothing for a job no longer running.
func TestFinishJob(t *testing.T) {
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			db := storetest.Open(t, storetest.URL(t, backend))
			now := time.Now().Truncate(time.Millisecond)
			var batch []store.NewJob
			for _, id := range []string{"plain", "hooked"} {
				batch = append(batch, store.NewJob{Job: quire.Job{ID: id, KeyID: "k", Operation: quire.OpConvert, Status: quire.JobQueued, CreatedAt: now},
					Request: quire.JobRequest{Method: "POST", Target: "/v1/convert", Body: []byte("request " + id)}})
			}
			err := db.InsertJobs(ctx, batch, func(_ *sql.Tx, _ map[string]int) ([]int64, error) { return []int64{1, 2}, nil })
			if err != nil {
				t.Fatal(err)
			}
			if err := db.RenewLease(ctx, "L", time.Minute); err != nil {
				t.Fatal(err)
			}
			ran := false
			for _, id := range []string{"plain", "hooked"} {
				j, _, ok, err := db.StartJob(ctx, id, "L", now)
				if !ok || err != nil {
					t.Fatalf("start %s: %v %v", id, ok, err)
				}
				run := store.Run{Lease: "L", Number: j.Runs}
				var then func(*sql.Tx) error
				if id == "hooked" {
					then = func(*sql.Tx) error { ran = true; return nil }
				}
				res := quire.JobResult{Status: 200, Header: map[string][]string{"Content-Type": {"application/pdf"}}, Body: []byte("%PDF " + id)}
				// A run before this one (the job ran again since) stores nothing.
				if done, err := db.FinishJob(ctx, id, store.Run{Lease: "L", Number: j.Runs - 1}, quire.JobFailed, "stale", res, now, now.Add(time.Hour), nil); done || err != nil {
					t.Fatalf("a stale run finished %s: %v %v", id, done, err)
				}
				done, err := db.FinishJob(ctx, id, run, quire.JobSucceeded, "", res, now, now.Add(time.Hour), then)
				if !done || err != nil {
					t.Fatalf("finish %s: %v %v, want done", id, done, err)
				}
				got, err := db.JobResult(ctx, id)
				if err != nil || got.Status != 200 || string(got.Body) != "%PDF "+id || len(got.Header["Content-Type"]) != 1 || got.Header["Content-Type"][0] != "application/pdf" {
					t.Errorf("result of %s: %d %v %q (%v)", id, got.Status, got.Header, got.Body, err)
				}
				if j, err := db.Job(ctx, id); err != nil || j.Status != quire.JobSucceeded {
					t.Errorf("%s: %+v (%v), want succeeded", id, j, err)
				}
				// Ended already: nothing is stored again, nothing runs (each
				// job through its own path again).
				ran2 := false
				if then != nil {
					then = func(*sql.Tx) error { ran2 = true; return nil }
				}
				done, err = db.FinishJob(ctx, id, run, quire.JobFailed, "late", quire.JobResult{Status: 500, Body: []byte("late")}, now, now.Add(time.Hour), then)
				if done || err != nil || ran2 {
					t.Errorf("finishing %s again: done %v, err %v, then ran %v; want false, nil, false", id, done, err, ran2)
				}
				if got, _ := db.JobResult(ctx, id); string(got.Body) != "%PDF "+id {
					t.Errorf("result of %s after a second finish: %q", id, got.Body)
				}
			}
			if !ran {
				t.Error("the webhook's queueing did not run in the hooked job's transaction")
			}
		})
	}
}

// TestRunOfAnExpiredLeaseStoresNothing: on PostgreSQL, a run whose
// instance's lease has expired (another instance may have taken the job)
// stores no answer, even while the job still shows it as running.
func TestRunOfAnExpiredLeaseStoresNothing(t *testing.T) {
	db := storetest.Open(t, storetest.URL(t, "postgres"))
	now := time.Now().Truncate(time.Millisecond)
	err := db.InsertJobs(ctx, []store.NewJob{{Job: quire.Job{ID: "j", KeyID: "k", Operation: quire.OpSign, Status: quire.JobQueued, CreatedAt: now},
		Request: quire.JobRequest{Method: "POST", Target: "/v1/sign"}}}, func(*sql.Tx, map[string]int) ([]int64, error) { return []int64{1}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RenewLease(ctx, "gone", -time.Second); err != nil { // expired already
		t.Fatal(err)
	}
	j, _, ok, err := db.StartJob(ctx, "j", "gone", now)
	if !ok || err != nil {
		t.Fatalf("start: %v %v", ok, err)
	}
	run := store.Run{Lease: "gone", Number: j.Runs}
	if done, err := db.FinishJob(ctx, "j", run, quire.JobSucceeded, "", quire.JobResult{Status: 200}, now, now.Add(time.Hour), nil); done || err != nil {
		t.Fatalf("a run of an expired lease finished the job: %v %v", done, err)
	}
	if err := db.RenewLease(ctx, "gone", time.Minute); err != nil { // the instance came back
		t.Fatal(err)
	}
	if done, err := db.FinishJob(ctx, "j", run, quire.JobSucceeded, "", quire.JobResult{Status: 200}, now, now.Add(time.Hour), nil); !done || err != nil {
		t.Fatalf("the run under a renewed lease: %v %v, want done", done, err)
	}
}

// TestJobBodiesStoredUncompressed: on PostgreSQL the bodies are stored
// as they are (migration 0016), compressed files being what they hold.
func TestJobBodiesStoredUncompressed(t *testing.T) {
	u := storetest.URL(t, "postgres")
	storetest.Open(t, u)
	var storage string
	err := storetest.SQL(t, u).QueryRow(`SELECT a.attstorage FROM pg_attribute a
		WHERE a.attrelid = 'job_bodies'::regclass AND a.attname = 'body'`).Scan(&storage)
	if err != nil || storage != "e" {
		t.Errorf("job_bodies.body storage %q (%v), want e (EXTERNAL)", storage, err)
	}
}
