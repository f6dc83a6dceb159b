package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// slowDocument serves a PDF after delay: a signing job that downloads it
// is running for that long.
func slowDocument(t *testing.T, delay time.Duration) string {
	pdf := pdftest.OnePage("jobs")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay) // a slow server: the behaviour under test
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(pdf)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/doc.pdf"
}

// hooks receives webhooks on loopback, answering 204, keeping each
// delivery's webhook-id by job.
type hooks struct {
	*httptest.Server
	mu  sync.Mutex
	ids map[string][]string // job id -> webhook-ids received
}

func newHooks(t *testing.T) *hooks {
	h := &hooks{ids: map[string][]string{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct{ Data struct{ ID, Status string } }
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &ev) != nil {
			w.WriteHeader(400)
			return
		}
		h.mu.Lock()
		h.ids[ev.Data.ID] = append(h.ids[ev.Data.ID], r.Header.Get("webhook-id"))
		h.mu.Unlock()
		w.WriteHeader(204)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hooks) received(id string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids[id]...)
}

// submitSign asks in for a signing job of the document at docURL and
// returns the job's id.
func submitSign(t *testing.T, in *instance, key, docURL, webhook string, i int) string {
	t.Helper()
	body := fmt.Sprintf(`{"document":{"url":%q},"signer":{"email":"s@example.com","name":"Sam"},"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}],"eventId":"job-%d"}`, docURL, i)
	header := []string{"Authorization", "Bearer " + key, "Prefer", "respond-async"}
	if webhook != "" {
		header = append(header, "Quire-Webhook-Url", webhook)
	}
	st, b := in.do("POST", "/v1/sign", strings.NewReader(body), header...)
	var j struct{ ID, Status string }
	if st != 202 || json.Unmarshal(b, &j) != nil || j.Status != "queued" {
		t.Fatalf("submit: %d %s", st, b)
	}
	return j.ID
}

// jobsCLI reads quire jobs list --json.
func jobsCLI(t *testing.T, data string, env []string) map[string]struct {
	Status string
	Runs   int
	Error  *string
} {
	t.Helper()
	out, err := runCLI(t, data, env, "jobs", "list", "--json", "--limit", "1000")
	if err != nil {
		t.Fatalf("quire jobs list: %v\n%s", err, out)
	}
	var list []struct {
		ID, Status string
		Runs       int
		Error      *string
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("quire jobs list --json: %v\n%s", err, out)
	}
	m := map[string]struct {
		Status string
		Runs   int
		Error  *string
	}{}
	for _, j := range list {
		m[j.ID] = struct {
			Status string
			Runs   int
			Error  *string
		}{j.Status, j.Runs, j.Error}
	}
	return m
}

// waitJobs waits until every job of ids has ended, reading the database
// through the CLI.
func waitJobs(t *testing.T, data string, env []string, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for tick := time.Tick(time.Second); ; <-tick {
		all, ended := jobsCLI(t, data, env), 0
		for _, id := range ids {
			if s := all[id].Status; s == quire.JobSucceeded || s == quire.JobFailed {
				ended++
			}
		}
		if ended == len(ids) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d jobs ended within %s", ended, len(ids), within)
		}
	}
}

// A kill -9 with jobs queued and running loses none, and costs the jobs
// that were running seconds, not their timeout (10 minutes here): the
// restarted instance makes them available again before its queue starts,
// and every job succeeds, its answer stored once, its webhook delivered
// once (twice at most, with one webhook-id).
func TestJobsSurviveKill(t *testing.T) {
	t.Parallel()
	for _, backend := range storetest.Backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			data, db := t.TempDir(), storetest.URL(t, backend)
			env := []string{"QUIRE_DATABASE_URL=" + db, "QUIRE_FETCH_ALLOW_PRIVATE=true",
				"QUIRE_JOB_WORKERS=2", "QUIRE_JOB_TIMEOUT=10m", "QUIRE_KEY_RATE=0", "QUIRE_SIGN_MAX_BYTES=1MiB"}
			in := start(t, data, env...)
			key := issueKey(t, in, in, "kill@example.com")
			doc, hk := slowDocument(t, 700*time.Millisecond), newHooks(t)
			var ids []string
			for i := range 12 {
				ids = append(ids, submitSign(t, in, key, doc, hk.URL+"/hook", i))
			}
			killWhileRunning(t, in, db)
			restarted := time.Now()
			again := start(t, data, env...)
			waitJobs(t, data, env, ids, 5*time.Minute)
			t.Logf("every job ended %s after the restart (QUIRE_JOB_TIMEOUT 10m)", time.Since(restarted).Round(100*time.Millisecond))
			checkEndedOnce(t, data, env, db, ids, hk, again)
		})
	}
}

// killWhileRunning kills in (SIGKILL: no shutdown) once, in the database
// of dbURL, some jobs have ended and some run under in's lease (the id of
// its River client).
func killWhileRunning(t *testing.T, in *instance, dbURL string) {
	t.Helper()
	m := regexp.MustCompile(`"msg":"River client started","client_id":"([^"]+)"`).FindStringSubmatch(in.logs.String())
	if m == nil {
		t.Fatalf("the instance's River client id is not in its logs\n%s", in.logs)
	}
	db := storetest.SQL(t, dbURL)
	var ended, running, queued int
	for deadline, tick := time.Now().Add(time.Minute), time.Tick(50*time.Millisecond); ; <-tick {
		err := db.QueryRow(`SELECT
			(SELECT COUNT(*) FROM jobs WHERE status = 'succeeded'),
			(SELECT COUNT(*) FROM jobs WHERE status = 'running' AND lease = $1),
			(SELECT COUNT(*) FROM jobs WHERE status = 'queued')`, m[1]).Scan(&ended, &running, &queued)
		if err != nil {
			t.Fatal(err)
		}
		if ended > 0 && running > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no job ended while others ran on the instance\n%s", in.logs)
		}
	}
	in.cmd.Process.Kill()
	<-in.done
	t.Logf("at the kill: %d ended, %d running on the instance killed, %d queued", ended, running, queued)
}

// checkEndedOnce checks that every job of ids succeeded, that its answer
// was stored once (the database of dbURL holds one webhook delivery per
// job: a second end would have queued another), and that each webhook
// arrived once, or twice at most with one webhook-id (a delivery the
// crash interrupted).
func checkEndedOnce(t *testing.T, data string, env []string, dbURL string, ids []string, hk *hooks, in *instance) {
	t.Helper()
	after := jobsCLI(t, data, env)
	for _, id := range ids {
		if j := after[id]; j.Status != quire.JobSucceeded {
			t.Errorf("job %s: %s (%s)", id, j.Status, deref(j.Error))
		}
	}
	arg := "args->>'job_id'"
	if strings.HasPrefix(dbURL, "sqlite:") {
		arg = "json_extract(args, '$.job_id')"
	}
	db := storetest.SQL(t, dbURL)
	for _, id := range ids {
		var results, deliveries int
		err := db.QueryRow(`SELECT (SELECT COUNT(*) FROM job_bodies WHERE job_id = $1 AND part = 'result'),
			(SELECT COUNT(*) FROM river_job WHERE kind = 'quire_webhook' AND `+arg+` = $1)`, id).Scan(&results, &deliveries)
		if err != nil || results != 1 || deliveries != 1 {
			t.Errorf("job %s: %d results and %d webhook deliveries queued (%v), want 1 and 1", id, results, deliveries, err)
		}
	}
	for deadline, tick := time.Now().Add(time.Minute), time.Tick(200*time.Millisecond); ; <-tick {
		missing := 0
		for _, id := range ids {
			if len(hk.received(id)) == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d webhooks not delivered\n%s", missing, len(ids), in.logs)
		}
	}
	for _, id := range ids {
		got := hk.received(id)
		if len(got) > 2 {
			t.Errorf("job %s: %d webhooks, want 1 (2 at most after a crash)", id, len(got))
		}
		for _, w := range got {
			if w != got[0] || w == "" {
				t.Errorf("job %s: webhook-ids %v", id, got)
			}
		}
	}
}

// Two instances on one PostgreSQL, one killed while it runs jobs: the
// other runs them again once the dead one's lease (QUIRE_JOB_LEASE, 10 s)
// has expired, long before their timeout (10 minutes here), and every job
// succeeds once.
func TestJobsOfAKilledInstanceRunOnTheOther(t *testing.T) {
	t.Parallel()
	db := storetest.URL(t, "postgres")
	env := []string{"QUIRE_DATABASE_URL=" + db, "QUIRE_FETCH_ALLOW_PRIVATE=true", "QUIRE_JOB_WORKERS=2", "QUIRE_KEY_RATE=0",
		"QUIRE_JOB_TIMEOUT=10m", "QUIRE_SIGN_MAX_BYTES=1MiB", "QUIRE_SECRET=" + strings.Repeat("ab", 32), "QUIRE_WEBHOOK_SECRET=whsec_" + strings.Repeat("A", 40)}
	dataA, dataB := t.TempDir(), t.TempDir()
	a := start(t, dataA, env...)
	key := issueKey(t, a, a, "killed@example.com")
	// Every third job's document comes at once, the others' after 10 s:
	// the instance runs up to 8 jobs at once (4 per engine slot, which a
	// download does not take), and the kill must find some of its jobs
	// ended and others running, whatever the order they were taken in.
	quick, slow, hk := slowDocument(t, 100*time.Millisecond), slowDocument(t, 10*time.Second), newHooks(t)
	var ids []string
	for i := range 12 {
		doc := slow
		if i%3 == 0 {
			doc = quick
		}
		ids = append(ids, submitSign(t, a, key, doc, hk.URL+"/hook", i))
	}
	b := start(t, dataB, env...)
	killWhileRunning(t, a, db)
	killed := time.Now()
	waitJobs(t, dataB, env, ids, 5*time.Minute)
	t.Logf("every job ended %s after the kill (QUIRE_JOB_LEASE 10s, QUIRE_JOB_TIMEOUT 10m)", time.Since(killed).Round(100*time.Millisecond))
	checkEndedOnce(t, dataB, env, db, ids, hk, b)
	m := regexp.MustCompile(`"time":"([^"]+)","level":"WARN","msg":"jobs of an instance that ended made available again"`).FindStringSubmatch(b.logs.String())
	if m == nil {
		t.Fatalf("the surviving instance did not rescue the killed one's jobs\n%s", b.logs)
	}
	if at, err := time.Parse(time.RFC3339Nano, m[1]); err == nil {
		t.Logf("the killed instance's jobs were made available again %s after the kill", at.Sub(killed).Round(100*time.Millisecond))
	}
}

// Two instances on one PostgreSQL drain one queue: every job runs once,
// and both instances run some.
func TestTwoInstancesDrainOneQueue(t *testing.T) {
	t.Parallel()
	db := storetest.URL(t, "postgres")
	env := []string{"QUIRE_DATABASE_URL=" + db, "QUIRE_FETCH_ALLOW_PRIVATE=true", "QUIRE_JOB_WORKERS=2", "QUIRE_KEY_RATE=0",
		"QUIRE_SECRET=" + strings.Repeat("ab", 32)}
	dataA, dataB := t.TempDir(), t.TempDir()
	a, b := start(t, dataA, env...), start(t, dataB, env...)
	key := issueKey(t, a, b, "drain@example.com")
	doc := slowDocument(t, 100*time.Millisecond)
	var ids []string
	for i := range 40 {
		in := a
		if i%2 == 1 {
			in = b
		}
		ids = append(ids, submitSign(t, in, key, doc, "", i))
	}
	waitJobs(t, dataA, env, ids, 2*time.Minute)
	all := jobsCLI(t, dataA, env)
	for _, id := range ids {
		if j := all[id]; j.Status != quire.JobSucceeded || j.Runs != 1 {
			t.Errorf("job %s: %s, run %d times (%v)", id, j.Status, j.Runs, deref(j.Error))
		}
	}
	ranA, ranB := strings.Count(a.logs.String(), `"msg":"job ended"`), strings.Count(b.logs.String(), `"msg":"job ended"`)
	t.Logf("jobs run: %d by one instance, %d by the other", ranA, ranB)
	if ranA+ranB != len(ids) || ranA == 0 || ranB == 0 {
		t.Errorf("jobs run: %d and %d, want %d in all, some by each", ranA, ranB, len(ids))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// quire jobs cancel ends a queued job as failed, and it never runs; quire
// jobs show prints it.
func TestJobsCancelCLI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	env := []string{"QUIRE_JOB_WORKERS=-1"} // nothing runs: the job stays queued
	in := start(t, data, env...)
	key := issueKey(t, in, in, "cancel@example.com")
	id := submitSign(t, in, key, "https://example.com/doc.pdf", "", 1)
	if out, err := runCLI(t, data, env, "jobs", "cancel", id); err != nil || !strings.Contains(out, id+" failed cancelled") {
		t.Fatalf("quire jobs cancel: %v\n%s", err, out)
	}
	st, body := in.get("/v1/jobs/"+id, "Authorization", "Bearer "+key)
	var j struct{ Status, Error string }
	if st != 200 || json.Unmarshal(body, &j) != nil || j.Status != quire.JobFailed || j.Error != "cancelled" {
		t.Fatalf("after cancel: %d %s", st, body)
	}
	out, err := runCLI(t, data, env, "jobs", "show", id)
	if err != nil || !strings.Contains(out, `"status": "failed"`) || !strings.Contains(out, `"runs": 0`) {
		t.Fatalf("quire jobs show: %v\n%s", err, out)
	}
	if out, err := runCLI(t, data, env, "jobs", "show", "no-such-job"); err == nil || !strings.Contains(out, "no such job") {
		t.Errorf("quire jobs show of no job: %v\n%s", err, out)
	}
}

// The list tells a queued job that ran into a limit from one not yet
// tried; show gives why it waits.
func TestJobsListShowsWaiting(t *testing.T) {
	t.Parallel()
	var list, show strings.Builder
	waiting := quire.Job{ID: "j1", KeyID: "k", Operation: quire.OpConvert, Status: quire.JobQueued, Waiting: "The conversion engine is busy or unavailable; retry later."}
	printJobs(&list, []quire.Job{waiting, {ID: "j2", KeyID: "k", Operation: quire.OpSign, Status: quire.JobQueued}})
	lines := strings.Split(list.String(), "\n")
	if len(lines) < 3 || !strings.Contains(lines[1], "queued, waiting") || strings.Contains(lines[2], "waiting") {
		t.Errorf("quire jobs list:\n%s", list.String())
	}
	if err := printJobJSON(&show, waiting); err != nil || !strings.Contains(show.String(), `"waiting": "The conversion engine is busy`) {
		t.Errorf("quire jobs show: %v\n%s", err, show.String())
	}
}
