package pdftools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// hugePages is the issue #46 file: 200,000 pages (20 MB), which pdfcpu
// takes minutes and gigabytes over. Under the race detector, whose shadow
// memory keeps the RSS from being asserted (stopped), a tenth of it
// proves the rest: pdfcpu's worker is still at work when its charge, the
// timeout or the hang-up ends it, and after the answer nothing runs. It
// costs a tenth of quire's reading, the slowest part under the detector.
var hugePages = map[bool]int{false: 200_000, true: 20_000}[raceDetector]

// workService is a service whose requests carry a memory reservation as
// the server's do, logging its workers' figures to log.
func workService(timeout time.Duration, log *bytes.Buffer) *Service {
	return New(Options{Limits: pdf.DefaultLimits(), MaxBytes: 50 << 20, MaxFiles: 20, RenderMaxPixels: 40_000_000, Timeout: timeout,
		Worker: testWorker, Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))}, nil)
}

// charged is ctx with a reservation of n bytes, as the server's requests
// carry.
func charged(t *testing.T, ctx context.Context, n int64) context.Context {
	r, err := memory.NewBudget(4<<30, 1).Reserve(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Release)
	return memory.With(ctx, r)
}

func TestTimeoutStopsTheWork(t *testing.T) {
	big := pdftest.WidePageTree(hugePages)
	for _, req := range []Request{{Op: OpSplit, Every: 1}, {Op: OpRotate, Angle: 90}} {
		t.Run(req.Op, func(t *testing.T) {
			// The timeout counts from the request's start: on a loaded
			// machine quire's reader may use it all before pdfcpu's worker
			// starts, so it is longer each time until a worker ran.
			for _, timeout := range []time.Duration{20 * time.Second, time.Minute, 3 * time.Minute} {
				var log bytes.Buffer
				s := workService(timeout, &log)
				before := settle(t)
				req.Files = one("huge.pdf", big)
				// The server's first charge: the worker reaches it, or the
				// timeout, whichever comes first on this machine; both are 422.
				_, err := s.Do(charged(t, t.Context(), int64(len(big))*memory.PerBodyByte), req)
				if quire.ErrorCode(err) != quire.CodeUnprocessable || !strings.Contains(err.Error(), "took longer") && !strings.Contains(err.Error(), "more memory") {
					t.Fatalf("%s of %d pages: %v, want a 422 for the timeout or the memory", req.Op, hugePages, err)
				}
				if !strings.Contains(log.String(), "pdf worker ended") {
					t.Logf("%v before pdfcpu's worker started", err)
					continue
				}
				t.Log(err)
				stopped(t, s, &log, before)
				return
			}
			t.Fatal("pdfcpu's worker never started")
		})
	}
}

func TestClientLeavingStopsTheWork(t *testing.T) {
	big := pdftest.WidePageTree(hugePages)
	var log bytes.Buffer
	s := workService(time.Hour, &log)
	ended := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // as the server does: then it notices the client leaving
		// A charge the worker cannot reach before the client leaves: the
		// worker ends by the hang-up, not by its memory.
		_, err := s.Do(charged(t, r.Context(), 2<<30), Request{Op: OpSplit, Every: 1, Files: one("huge.pdf", big)})
		ended <- err
	}))
	defer srv.Close()
	before := settle(t)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.Close()
	ctx, hangUp := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, &body)
	go http.DefaultClient.Do(req)
	waitFor(t, "a worker at work", func() bool { return s.workers.Load() > 0 })
	hangUp()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("after the client left: %v, want context.Canceled", err)
	}
	stopped(t, s, &log, before)
}

// stopped checks that, once the operation has answered, no worker runs,
// the process's CPU time stops growing within 2 s and its RSS comes back
// within 100 MB of before; it logs the worker's figures.
func stopped(t *testing.T, s *Service, log *bytes.Buffer, before int64) {
	t.Helper()
	answered := time.Now()
	if n := s.workers.Load(); n != 0 {
		t.Fatalf("%d workers still running after the answer", n)
	}
	t.Log(regexp.MustCompile(`limit_bytes=\d+ cpu=\S+`).FindString(log.String()))
	var rss int64
	for still := false; !still; {
		c0 := cpuTime(t)
		time.Sleep(250 * time.Millisecond) // a window over which to measure the CPU time, not a synchronisation
		rss = settle(t)
		// The race detector's shadow memory of what the reader allocated
		// is not given back to the system: under it, RSS says nothing of
		// the work's own memory, and only the CPU time is asserted.
		still = cpuTime(t)-c0 < 100*time.Millisecond && (rss < before+100<<20 || raceDetector)
		if !still && time.Since(answered) > 2*time.Second {
			t.Fatalf("2 s after the answer the process still works: CPU +%s in 250 ms, RSS %d MiB (before: %d MiB)", cpuTime(t)-c0, rss>>20, before>>20)
		}
	}
	t.Logf("RSS before %d MiB, after %d MiB, %s after the answer", before>>20, rss>>20, time.Since(answered).Round(time.Millisecond))
}

// settle collects the garbage, returns it to the system and answers the
// process's resident size.
func settle(t *testing.T) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var kb int64
	fmt.Sscan(regexp.MustCompile(`VmRSS:\s+(\d+)`).FindStringSubmatch(string(b))[1], &kb)
	return kb << 10
}

// cpuTime is the process's user and system time (clock ticks of 10 ms).
func cpuTime(t *testing.T) time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	var user, sys int64
	fmt.Sscan(f[11], &user)
	fmt.Sscan(f[12], &sys)
	return time.Duration(user+sys) * 10 * time.Millisecond
}

// waitFor polls cond until it holds, failing after a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) { // the poll between checks of a condition with a deadline, not a synchronisation
		if time.Now().After(deadline) {
			t.Fatalf("no %s after a minute", what)
		}
	}
}
