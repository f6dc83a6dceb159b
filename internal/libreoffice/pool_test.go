package libreoffice

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// The supervisor's tests run the script engine (main_test.go): documents
// are Markdown whose text tells the fake engine what to do.

// convertAsync runs a conversion in the background.
func convertAsync(p *Pool, ctx context.Context, doc string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := p.Convert(ctx, []byte(doc), "md")
		done <- err
	}()
	return done
}

// waitFor polls p's status until cond holds, or fails the test after 30 s.
func waitFor(t *testing.T, p *Pool, what string, cond func(engine.Status) bool) engine.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for tick := time.Tick(10 * time.Millisecond); ; <-tick {
		st := p.Status()
		if cond(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s; status %+v", what, st)
		}
	}
}

func TestTimeoutKillsOnlyItsWorker(t *testing.T) {
	t.Parallel() // seconds of waiting for the job's time limit
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 2, JobTimeout: 5 * time.Second}})
	slow := convertAsync(p, context.Background(), "sleep 30s")
	waitFor(t, p, "the slow job runs", func(s engine.Status) bool { return s.Busy == 1 })
	if _, err := p.Convert(context.Background(), []byte("quick"), "md"); err != nil {
		t.Fatalf("a job on the other worker failed while the slow one ran: %v", err)
	}
	select {
	case err := <-slow:
		t.Fatalf("the quick job was answered after the slow one ended (%v): it waited for it", err)
	default: // the slow one still runs (until its 5 s limit)
	}
	// Not stopped, the slow job would succeed after its 30 s.
	if err := <-slow; !errors.Is(err, engine.ErrTimeout) || !errors.Is(err, engine.ErrUnprocessable) {
		t.Fatalf("slow job: %v, want ErrTimeout", err)
	}
	st := waitFor(t, p, "the killed worker is replaced", func(s engine.Status) bool { return s.Ready == 2 })
	if st.Timeouts != 1 || st.Restarts != 1 {
		t.Errorf("counters %+v, want 1 timeout and 1 restart", st.Counters)
	}
	if _, err := p.Convert(context.Background(), []byte("after"), "md"); err != nil {
		t.Errorf("job after the timeout: %v", err)
	}
}

func TestCrashIsRetriedOnceOnAnotherWorker(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	marker := filepath.Join(t.TempDir(), "crashed")
	r, err := p.ConvertTimed(context.Background(), []byte("crash-once "+marker), "md")
	if err != nil || r.Attempts != 2 {
		t.Fatalf("crash-once job: attempts %d, err %v; want success on the second attempt", r.Attempts, err)
	}
	_, err = p.Convert(context.Background(), []byte("crash"), "md")
	if !errors.Is(err, engine.ErrCrashed) {
		t.Fatalf("job that always crashes: %v, want ErrCrashed", err)
	}
	if !strings.Contains(err.Error(), "signal: killed") {
		t.Errorf("the crash error does not say how the worker died: %v", err)
	}
	if _, err := p.Convert(context.Background(), []byte("after"), "md"); err != nil {
		t.Errorf("job after the crashes: %v", err)
	}
	if c := p.Status().Counters; c.Crashes != 3 || c.Retried != 2 || c.Restarts != 3 {
		t.Errorf("counters %+v, want 3 crashes, 2 retries, 3 restarts", c)
	}
}

func TestWorkerKilledMidJob(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	done := convertAsync(p, context.Background(), "sleep 1s")
	st := waitFor(t, p, "the job runs", func(s engine.Status) bool { return s.Busy == 1 })
	if err := syscall.Kill(st.Details[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("job whose worker was killed: %v, want success after a retry", err)
	}
	for i := range 3 {
		if _, err := p.Convert(context.Background(), []byte("next"), "md"); err != nil {
			t.Errorf("job %d after the kill: %v", i, err)
		}
	}
	if c := p.Status().Counters; c.Crashes != 1 || c.Retried != 1 || c.Converted != 4 {
		t.Errorf("counters %+v, want 1 crash, 1 retry, 4 converted", c)
	}
}

func TestFullQueueIsBusy(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, QueueLength: 1}})
	running := convertAsync(p, context.Background(), "sleep 1s")
	waitFor(t, p, "the first job runs", func(s engine.Status) bool { return s.Busy == 1 })
	queued := convertAsync(p, context.Background(), "queued")
	waitFor(t, p, "the second job waits", func(s engine.Status) bool { return s.Queued == 1 })
	_, err := p.Convert(context.Background(), []byte("third"), "md")
	if !errors.Is(err, engine.ErrBusy) {
		t.Fatalf("third job: %v, want ErrBusy", err)
	}
	select { // immediate: answered while the first job still runs
	case err := <-running:
		t.Errorf("ErrBusy came only once the running job had ended (%v); it must be immediate", err)
	default:
	}
	if ra := p.RetryAfter(); ra < time.Second {
		t.Errorf("RetryAfter = %v, want at least 1s", ra)
	}
	if err := <-running; err != nil {
		t.Error(err)
	}
	if err := <-queued; err != nil {
		t.Error(err)
	}
}

func TestCancelledJobNeverStarts(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	running := convertAsync(p, context.Background(), "sleep 1s")
	waitFor(t, p, "the first job runs", func(s engine.Status) bool { return s.Busy == 1 })
	marker := filepath.Join(t.TempDir(), "started")
	ctx, cancel := context.WithCancel(context.Background())
	cancelled := convertAsync(p, ctx, "touch "+marker)
	waitFor(t, p, "the second job waits", func(s engine.Status) bool { return s.Queued == 1 })
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled job: %v, want context.Canceled", err)
	}
	if q := p.Status().Queued; q != 0 {
		t.Errorf("the cancelled job still occupies the queue (%d queued)", q)
	}
	if err := <-running; err != nil {
		t.Fatal(err)
	}
	if _, err := p.Convert(context.Background(), []byte("after"), "md"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the cancelled job reached a worker")
	}
}

func TestRecycleAfterNJobs(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, MaxJobsPerWorker: 2}})
	pids := map[int]bool{}
	for i := range 5 {
		st := waitFor(t, p, "a worker is ready", func(s engine.Status) bool { return s.Ready == 1 })
		pids[st.Details[0].PID] = true
		if _, err := p.Convert(context.Background(), []byte("job"), "md"); err != nil {
			t.Fatalf("job %d: %v", i, err)
		}
	}
	if c := p.Status().Counters; c.Recycled != 2 || len(pids) != 3 {
		t.Errorf("5 jobs at 2 per worker: %d recycled, %d processes; want 2 and 3", c.Recycled, len(pids))
	}
}

func TestRecycleAboveMemoryThreshold(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, MaxWorkerRSS: 1 << 20}}) // any process holds more than 1 MiB
	for range 2 {
		if _, err := p.Convert(context.Background(), []byte("job"), "md"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, p, "recycled twice", func(s engine.Status) bool { return s.Recycled == 2 && s.Ready == 1 })
}

// TestEngineRefusalIsUnprocessable: a document LibreOffice refuses is
// the client's 422, in quire's words; LibreOffice's own are logged.
func TestEngineRefusalIsUnprocessable(t *testing.T) {
	var log lockedBuffer
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, Logger: slog.New(slog.NewTextHandler(&log, nil))}})
	_, err := p.Convert(context.Background(), []byte("refuse"), "md")
	if !errors.Is(err, engine.ErrUnprocessable) || !strings.HasSuffix(err.Error(), "LibreOffice could not save the document") {
		t.Fatalf("refused document: %v, want quire's message and nothing of LibreOffice's", err)
	}
	if !strings.Contains(log.String(), "scripted refusal") {
		t.Errorf("LibreOffice's reason is not in the log:\n%s", log.String())
	}
	if c := p.Status().Counters; c.Crashes != 0 || c.Failed != 1 {
		t.Errorf("counters %+v: a refusal is no crash", c)
	}
}

func TestInputLimits(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}, MaxInputBytes: 10})
	if _, err := p.Convert(context.Background(), []byte("eleven byte"), "md"); !errors.Is(err, engine.ErrTooLarge) {
		t.Errorf("oversized input: %v, want ErrTooLarge", err)
	}
	if _, err := p.Convert(context.Background(), []byte("%PDF-1.7"), "docx"); !errors.Is(err, engine.ErrInvalidFormat) {
		t.Errorf("PDF as DOCX: %v, want ErrInvalidFormat", err)
	}
	var invalid *quire.Error // a format quire does not know is the request's fault, as the API answers it
	if _, err := p.Convert(context.Background(), []byte("x"), "pages"); !errors.As(err, &invalid) || invalid.Code != quire.CodeValidation ||
		len(invalid.Details) != 1 || invalid.Details[0].Field != "from" {
		t.Errorf("from=pages: %v, want a VALIDATION_ERROR naming from", err)
	}
}

func TestClientLeavingStopsTheWorker(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, JobTimeout: 5 * time.Minute}})
	ctx, cancel := context.WithCancel(context.Background())
	running := convertAsync(p, ctx, "sleep 10m")
	st := waitFor(t, p, "the job runs", func(s engine.Status) bool { return s.Busy == 1 })
	cancel()
	if err := <-running; !errors.Is(err, context.Canceled) {
		t.Fatalf("job whose client left: %v, want context.Canceled", err)
	}
	// Not killed, the worker would sleep for 10 minutes, past waitFor's 30 s.
	waitFor(t, p, "the worker replaced", func(s engine.Status) bool { return s.Counters.Restarts == 1 && s.Ready == 1 })
	if err := syscall.Kill(st.Details[0].PID, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the abandoned job's worker (pid %d) still exists: %v", st.Details[0].PID, err)
	}
	if c := p.Status().Counters; c.Timeouts != 0 || c.Failed != 1 {
		t.Errorf("counters %+v, want 1 failed and no timeout", c)
	}
	if _, err := p.Convert(context.Background(), []byte("next"), "md"); err != nil {
		t.Errorf("job after the abandoned one: %v", err)
	}
}

func TestCloseFinishesRunningJobs(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	running := convertAsync(p, context.Background(), "sleep 500ms")
	waitFor(t, p, "the job runs", func(s engine.Status) bool { return s.Busy == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-running; err != nil {
		t.Errorf("job running at Close: %v, want it finished", err)
	}
	if _, err := p.Convert(context.Background(), []byte("late"), "md"); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("job after Close: %v, want ErrUnavailable", err)
	}
	if st := p.Status(); st.Details[0].State != engine.StateStopped {
		t.Errorf("worker state after Close: %s", st.Details[0].State)
	}
}

func TestCloseDeadlineKillsWorkers(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	running := convertAsync(p, context.Background(), "sleep 30s")
	waitFor(t, p, "the job runs", func(s engine.Status) bool { return s.Busy == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want DeadlineExceeded", err)
	}
	// Not killed, the job would succeed after its 30 s.
	if err := <-running; !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("job killed by Close: %v, want ErrUnavailable", err)
	}
}

func TestMissingLibreOfficeIsUnavailable(t *testing.T) {
	o := Options{PoolOptions: engine.PoolOptions{Workers: 1, Executable: os.Args[0], WorkerArgs: []string{"quire-test-worker", "lok"}}, ProgramDir: "/nonexistent/libreoffice/program", Dir: t.TempDir()}
	p, err := NewPool(o)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = p.WaitReady(ctx)
	if !errors.Is(err, engine.ErrUnavailable) || !strings.Contains(err.Error(), "libreoffice-writer-nogui") {
		t.Fatalf("WaitReady: %v, want ErrUnavailable naming the Debian package", err)
	}
	if _, err := p.Convert(context.Background(), []byte("x"), "md"); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("Convert with no engine: %v, want ErrUnavailable", err)
	}
}

func TestWorkerRefusesToRunWithPreemption(t *testing.T) {
	cmd := exec.Command(os.Args[0], "quire-test-worker", "script")
	cmd.Env = append(os.Environ(), "GODEBUG=asyncpreemptoff=0")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "GODEBUG=asyncpreemptoff=1") {
		t.Errorf("worker without asyncpreemptoff=1: err %v, output %q", err, out)
	}
}

// fakeProgramDir returns a program directory whose soffice is the shell
// script body (cold.go runs it when a document is "unloadable").
func fakeProgramDir(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "soffice"), []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitForFile waits until path exists, or fails the test after 30 s.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for tick := time.Tick(10 * time.Millisecond); ; <-tick {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", path)
		}
	}
}

// receive waits for a conversion's outcome, failing the test after 10 s.
func receive(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was never answered", what)
		return nil
	}
}

// closeByDeadline closes p with a deadline of limit and expects Close to
// give up (DeadlineExceeded). Its callers' processes sleep for an hour: a
// Close that waited for them would hang the test.
func closeByDeadline(t *testing.T, p *Pool, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want DeadlineExceeded", err)
	}
}

func TestCloseDuringWorkerStart(t *testing.T) {
	programDir := t.TempDir()
	started := filepath.Join(t.TempDir(), "started")
	if err := os.WriteFile(filepath.Join(programDir, "script-start"), []byte("touch "+started+" sleep 1h"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startTestPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, StartTimeout: 2 * time.Minute}, ProgramDir: programDir})
	waitForFile(t, started) // the worker is in its handshake
	queued := convertAsync(p, context.Background(), "queued")
	waitFor(t, p, "the job waits", func(s engine.Status) bool { return s.Queued == 1 })
	closeByDeadline(t, p, 500*time.Millisecond)
	if err := receive(t, queued, "the queued job"); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("job queued at Close: %v, want ErrUnavailable", err)
	}
	if st := p.Status(); st.Details[0].State != engine.StateStopped || st.Queued != 0 {
		t.Errorf("after Close: worker %s, %d queued", st.Details[0].State, st.Queued)
	}
}

func TestCloseFailsJobsLeftInQueue(t *testing.T) {
	programDir := t.TempDir()
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 2}, ProgramDir: programDir})
	marker := filepath.Join(t.TempDir(), "crashed")
	job := convertAsync(p, context.Background(), "sleep 1s crash-once "+marker)
	waitFor(t, p, "the job runs", func(s engine.Status) bool { return s.Busy == 1 })
	// The idle worker stops at Close, the queue being empty; the busy one
	// crashes, its job is queued again for a retry, and its replacement
	// cannot start: no worker is left to take the job.
	if err := os.WriteFile(filepath.Join(programDir, "script-start"), []byte("refuse"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := receive(t, job, "the job left in the queue"); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("job left in the queue at Close: %v, want ErrUnavailable", err)
	}
	if c := p.Counters(); c.Crashes != 1 || c.Retried != 1 {
		t.Errorf("counters %+v, want 1 crash and 1 retry", c)
	}
}

func TestNoReplacementAfterClose(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, MaxJobsPerWorker: 1}})
	running := convertAsync(p, context.Background(), "sleep 500ms")
	waitFor(t, p, "the job runs", func(s engine.Status) bool { return s.Busy == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-running; err != nil {
		t.Errorf("job running at Close: %v", err)
	}
	if c := p.Counters(); c.Recycled != 1 || c.Restarts != 0 {
		t.Errorf("counters %+v: the retired worker of a closed pool was replaced", c)
	}
}

func TestCloseKillsColdSoffice(t *testing.T) {
	started := filepath.Join(t.TempDir(), "soffice-started")
	programDir := fakeProgramDir(t, "touch '"+started+"'\nexec sleep 3600")
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}, ProgramDir: programDir})
	job := convertAsync(p, context.Background(), "unloadable")
	waitForFile(t, started)
	closeByDeadline(t, p, 500*time.Millisecond)
	if err := receive(t, job, "the cold job"); !errors.Is(err, engine.ErrUnavailable) {
		t.Errorf("cold job at Close: %v, want ErrUnavailable", err)
	}
}

// TestColdErrorHidesPaths: the error of a document neither engine
// converts names no path and carries quire's words only; what
// LibreOfficeKit and soffice said goes to the log.
func TestColdErrorHidesPaths(t *testing.T) {
	programDir := fakeProgramDir(t, `echo "convert $* failed; HOME=$HOME, in $(pwd)" >&2; exit 1`)
	var log lockedBuffer
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1, Logger: slog.New(slog.NewTextHandler(&log, nil))}, ProgramDir: programDir})
	_, err := p.Convert(context.Background(), []byte("unloadable"), "md")
	if !errors.Is(err, engine.ErrUnprocessable) || errors.Is(err, engine.ErrTimeout) {
		t.Fatalf("document neither engine converts: %v, want ErrUnprocessable", err)
	}
	msg := err.Error()
	cwd, _ := os.Getwd()
	for _, leak := range []string{p.dir, programDir, cwd, "file:", "cold-", "input.", "worker-"} {
		if strings.Contains(msg, leak) {
			t.Errorf("the error shows %q: %s", leak, msg)
		}
	}
	for _, want := range []string{"LibreOffice could not load the document", "soffice could not convert it either"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	for _, engine := range []string{"failed; HOME", "scripted load failure"} {
		if strings.Contains(msg, engine) || !strings.Contains(log.String(), engine) {
			t.Errorf("the engine's output %q should be in the log only; error: %s\nlog: %s", engine, msg, log.String())
		}
	}
	if c := p.Counters(); c.Failed != 1 || c.Cold != 0 || c.Crashes != 0 {
		t.Errorf("counters %+v, want 1 failure", c)
	}
}

// lockedBuffer is a bytes.Buffer that a logger may write from several
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
