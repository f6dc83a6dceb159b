package pdftools

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"

	"github.com/pdfcpu/pdfcpu/pkg/api"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/memory"
)

// pdfcpu takes no context: a call cannot be stopped, and on a hostile
// file (200,000 pages) it runs for minutes holding a gigabyte. So every
// pdfcpu call runs in a worker process, the quire binary started again
// with workerEnv set, that is killed when the request's or job's context
// ends (timeout, client gone, job cancelled) and whose memory is bounded
// by the request's charge. The task goes to its stdin and the answer
// comes from its stdout, gob-encoded.

// workerEnv, set to the worker's memory limit in bytes, makes the process
// a worker: RunWorkerIfAsked, first thing in main (and in TestMain of the
// test binaries that run PDF tools), serves one task and exits.
const workerEnv = "QUIRE_PDFTOOLS_WORKER"

// workerSlack is what the worker's data may hold beyond its memory limit:
// the Go runtime's own, and room for a small file's pdfcpu (the runtime
// collects from half of it, so as not to spin the collector on a limit
// of a few kilobytes).
const workerSlack = 128 << 20

// RunWorkerIfAsked makes this process the PDF worker it was started as,
// if it was: it serves the task and exits.
func RunWorkerIfAsked() {
	limit := os.Getenv(workerEnv)
	if limit == "" {
		return
	}
	n, _ := strconv.ParseInt(limit, 10, 64)
	os.Exit(serveWorker(n, os.Stdin, os.Stdout))
}

// The tasks of the worker: pdfcpu's operations.
const (
	taskMerge     = "merge"
	taskSplit     = "split"
	taskRotate    = "rotate"
	taskEncrypt   = "encrypt"
	taskWatermark = "watermark" // an image watermark
	taskRewrite   = "rewrite"   // write the file anew from its catalog

	taskBookmarks    = "bookmarks"     // read the outline, as JSON
	taskSetBookmarks = "set-bookmarks" // replace the outline
)

// task is one call of pdfcpu: its inputs, and the request's options.
type task struct {
	Kind   string
	Inputs [][]byte
	Spans  [][2]int // split
	Req    Request  // without its files
}

// answer is the worker's result, or the failure of pdfcpu on one input.
type answer struct {
	Data   []byte
	Parts  []Part
	Failed int    // the input pdfcpu refused, -1 for the output
	Err    string // "" on success
}

// serveWorker reads a task from r, runs it within limit bytes and writes
// its answer to w. A limit it cannot keep ends the process (the runtime's
// "out of memory"), which the service answers as a 422.
func serveWorker(limit int64, r io.Reader, w io.Writer) int {
	api.DisableConfigDir()
	if limit > 0 {
		debug.SetMemoryLimit(limit + workerSlack/2)
		syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: uint64(limit + workerSlack), Max: uint64(limit + workerSlack)})
	}
	var t task
	if err := gob.NewDecoder(r).Decode(&t); err != nil {
		fmt.Fprintln(os.Stderr, "pdftools worker:", err)
		return 2
	}
	if err := gob.NewEncoder(w).Encode(t.run()); err != nil {
		fmt.Fprintln(os.Stderr, "pdftools worker:", err)
		return 2
	}
	return 0
}

// inWorker runs t in a worker process under ctx. The worker may use what
// the request's memory reservation holds (all of it: the input read by
// quire's model is garbage once its bytes are sent); without a
// reservation (command line, tests) it is bounded by the process's own
// runtime limit, if any.
func (s *Service) inWorker(ctx context.Context, t task, names []string) (answer, error) {
	if os.Getenv(workerEnv) != "" {
		// A program that starts workers without serving them (no
		// RunWorkerIfAsked) would otherwise start them without end.
		return answer{}, errors.New("pdftools: this process was started as a PDF worker but did not call RunWorkerIfAsked")
	}
	exe, err := s.workerExecutable()
	if err != nil {
		return answer{}, err
	}
	var in bytes.Buffer
	t.Req.Files = nil
	if err := gob.NewEncoder(&in).Encode(t); err != nil {
		return answer{}, err
	}
	limit := memory.HeldBy(ctx)
	var out bytes.Buffer
	stderr := &limitedBuffer{max: 4 << 10}
	cmd := exec.CommandContext(ctx, exe)
	// atexit_sleep_ms: a binary built with the race detector (the tests')
	// would otherwise wait a second at each worker's exit.
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", workerEnv, limit), "GOMEMLIMIT=",
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &out, stderr
	s.workers.Add(1)
	s.metrics.workers.Inc()
	err = cmd.Run()
	s.workers.Add(-1)
	s.metrics.workers.Dec()
	if cmd.ProcessState != nil {
		s.opt.Logger.Debug("pdf worker ended", "op", t.Req.Op, "limit_bytes", limit,
			"cpu", cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime(), "cancelled", ctx.Err() != nil)
	}
	switch {
	case ctx.Err() != nil:
		return answer{}, ctx.Err()
	case err != nil:
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return answer{}, fmt.Errorf("pdftools: starting the worker: %w", err)
		}
		s.opt.Logger.Warn("pdf worker failed", "op", t.Req.Op, "err", err, "limit", limit, "stderr", stderr.String())
		return answer{}, quire.Errorf(quire.CodeUnprocessable,
			"The PDF %s needed more memory than its charge allows (%d MiB for this request) or failed.", t.Req.Op, limit>>20)
	}
	var a answer
	if err := gob.NewDecoder(&out).Decode(&a); err != nil {
		return answer{}, fmt.Errorf("pdftools: the worker's answer: %w", err)
	}
	if a.Err != "" {
		name := ""
		if a.Failed >= 0 && a.Failed < len(names) {
			name = names[a.Failed]
		}
		return answer{}, s.libraryError(name, t.Req.Op, errors.New(a.Err))
	}
	return a, nil
}

// workerExecutable is the program run as the worker: the one of the
// options, or else this one.
func (s *Service) workerExecutable() (string, error) {
	if s.opt.Worker != "" {
		return s.opt.Worker, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("pdftools: the worker's executable: %w", err)
	}
	return exe, nil
}

// limitedBuffer keeps the first max bytes written to it: the worker's
// panic or runtime error, for the log.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
