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

// queueJobs stores one queued job per id, of key keyID, created a second
// apart from at in the order given, each enqueued as River job 100+i.
func queueJobs(t *testing.T, db *store.DB, keyID string, at time.Time, ids ...string) {
	t.Helper()
	var batch []store.NewJob
	var riverIDs []int64
	for i, id := range ids {
		batch = append(batch, store.NewJob{
			Job:     quire.Job{ID: id, KeyID: keyID, Operation: quire.OpSign, Status: quire.JobQueued, CreatedAt: at.Add(time.Duration(i) * time.Second)},
			Request: quire.JobRequest{Method: "POST", Target: "/v1/sign"},
		})
		riverIDs = append(riverIDs, int64(100+i))
	}
	err := db.InsertJobs(ctx, batch, func(*sql.Tx, map[string]int) ([]int64, error) { return riverIDs, nil })
	if err != nil {
		t.Fatal(err)
	}
}

// startJob starts job id under lease and returns its run.
func startJob(t *testing.T, db *store.DB, id, lease string, now time.Time) store.Run {
	t.Helper()
	j, _, ok, err := db.StartJob(ctx, id, lease, now)
	if !ok || err != nil {
		t.Fatalf("start %s: %v %v", id, ok, err)
	}
	return store.Run{Lease: lease, Number: j.Runs}
}

// TestRequeueJob: a run answered "not now" puts its job back in the queue,
// not counted as a run, with the reason it waits; a run that no longer
// holds the job changes nothing.
func TestRequeueJob(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		queueJobs(t, db, "k", now, "j")
		if err := db.RenewLease(ctx, "L", time.Minute); err != nil {
			t.Fatal(err)
		}
		run := startJob(t, db, "j", "L", now)
		stale := store.Run{Lease: "L", Number: run.Number - 1}
		if err := db.RequeueJob(ctx, "j", stale, "stale"); err != nil {
			t.Fatal(err)
		}
		if j, err := db.Job(ctx, "j"); err != nil || j.Status != quire.JobRunning || j.Waiting != "" {
			t.Fatalf("after a stale run's requeue: %+v (%v), want running still", j, err)
		}
		if err := db.RequeueJob(ctx, "j", run, "the key's rate"); err != nil {
			t.Fatal(err)
		}
		j, err := db.Job(ctx, "j")
		if err != nil || j.Status != quire.JobQueued || j.Runs != 0 || !j.StartedAt.IsZero() || j.Waiting != "the key's rate" {
			t.Fatalf("requeued: %+v (%v), want queued, no run, no start, waiting for the key's rate", j, err)
		}
		if run := startJob(t, db, "j", "L", now); run.Number != 1 {
			t.Errorf("the start after a requeue is run %d, want 1", run.Number)
		}
	})
}

// TestCancelJob: a queued or running job ends as failed with the reason,
// its River job returned and the caller's work done in the same
// transaction; an ended job is left as it is, and the work is not done.
func TestCancelJob(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		queueJobs(t, db, "k", now, "queued", "running")
		startJob(t, db, "running", "", now)
		for i, id := range []string{"queued", "running"} {
			ran := false
			riverID, cancelled, err := db.CancelJob(ctx, id, "cancelled by its key", now.Add(time.Minute), now.Add(time.Hour),
				func(*sql.Tx) error { ran = true; return nil })
			if err != nil || !cancelled || riverID != int64(100+i) || !ran {
				t.Fatalf("cancel %s: river job %d, %v, %v, then ran %v; want %d, true, nil, true", id, riverID, cancelled, err, ran, 100+i)
			}
			j, err := db.Job(ctx, id)
			if err != nil || j.Status != quire.JobFailed || j.Error != "cancelled by its key" || !j.FinishedAt.Equal(now.Add(time.Minute)) {
				t.Errorf("%s after cancel: %+v (%v), want failed at %v with the reason", id, j, err, now.Add(time.Minute))
			}
		}
		ran := false
		_, cancelled, err := db.CancelJob(ctx, "queued", "again", now, now, func(*sql.Tx) error { ran = true; return nil })
		if err != nil || cancelled || ran {
			t.Errorf("cancel of an ended job: %v, %v, then ran %v; want false, nil, false", cancelled, err, ran)
		}
		if j, _ := db.Job(ctx, "queued"); j.Error != "cancelled by its key" {
			t.Errorf("an ended job's reason became %q", j.Error)
		}
		// The caller's work failing undoes the cancel.
		queueJobs(t, db, "k2", now, "kept")
		refused := errors.New("the webhook could not be queued")
		if _, _, err := db.CancelJob(ctx, "kept", "r", now, now, func(*sql.Tx) error { return refused }); !errors.Is(err, refused) {
			t.Errorf("cancel whose work failed: %v, want %v", err, refused)
		}
		if j, _ := db.Job(ctx, "kept"); j.Status != quire.JobQueued {
			t.Errorf("a cancel whose work failed left the job %s, want queued", j.Status)
		}
	})
}

// TestRecordWebhookAttempt counts every attempt, keeps the last failure's
// error and the time of the delivery.
func TestRecordWebhookAttempt(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		queueJobs(t, db, "k", now, "j")
		if err := db.RecordWebhookAttempt(ctx, "j", false, "connection refused", now); err != nil {
			t.Fatal(err)
		}
		j, _ := db.Job(ctx, "j")
		if j.Webhook.Attempts != 1 || j.Webhook.LastError != "connection refused" || !j.Webhook.DeliveredAt.IsZero() {
			t.Fatalf("after a failed attempt: %+v, want one attempt, its error, no delivery", j.Webhook)
		}
		if err := db.RecordWebhookAttempt(ctx, "j", true, "", now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		j, _ = db.Job(ctx, "j")
		if j.Webhook.Attempts != 2 || j.Webhook.LastError != "" || !j.Webhook.DeliveredAt.Equal(now.Add(time.Minute)) {
			t.Errorf("after the delivery: %+v, want two attempts, delivered at %v", j.Webhook, now.Add(time.Minute))
		}
	})
}

// TestJobsListAndCount: the list is newest first, of one key or of all,
// bounded; the counts are of the jobs not ended, with the oldest waiting.
func TestJobsListAndCount(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		if c, err := db.CountJobs(ctx); err != nil || c != (store.JobCounts{}) {
			t.Fatalf("counts of no jobs: %+v (%v), want zero", c, err)
		}
		queueJobs(t, db, "a", now, "a1", "a2", "a3")
		queueJobs(t, db, "b", now.Add(time.Hour), "b1")
		ids := func(keyID string, limit int) []string {
			t.Helper()
			jobs, err := db.Jobs(ctx, keyID, limit)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, j := range jobs {
				out = append(out, j.ID)
			}
			return out
		}
		for _, tt := range []struct {
			key   string
			limit int
			want  []string
		}{
			{"a", 10, []string{"a3", "a2", "a1"}},
			{"a", 2, []string{"a3", "a2"}},
			{"", 10, []string{"b1", "a3", "a2", "a1"}},
			{"c", 10, nil},
		} {
			if got := ids(tt.key, tt.limit); !slices.Equal(got, tt.want) {
				t.Errorf("jobs of key %q, at most %d: %v, want %v", tt.key, tt.limit, got, tt.want)
			}
		}

		startJob(t, db, "a1", "", now)
		if _, _, err := db.CancelJob(ctx, "a2", "r", now, now.Add(time.Hour), nil); err != nil {
			t.Fatal(err)
		}
		want := store.JobCounts{Queued: 2, Running: 1, OldestQueued: now.Add(2 * time.Second)} // a3's; a1 runs, a2 ended
		if c, err := db.CountJobs(ctx); err != nil || c.Queued != want.Queued || c.Running != want.Running || !c.OldestQueued.Equal(want.OldestQueued) {
			t.Errorf("counts: %+v (%v), want %+v", c, err, want)
		}
	})
}
