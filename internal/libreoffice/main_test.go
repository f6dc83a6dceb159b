package libreoffice

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/engine/enginetest"
	"github.com/quire-dev/quire/internal/libreoffice/lok"
)

// The test binary doubles as the worker program: the pools of these tests
// start it with the arguments "quire-test-worker lok" (the real engine,
// RunWorker) or "quire-test-worker script" (scriptEngine below).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "quire-test-worker" {
		switch os.Args[2] {
		case "lok":
			os.Exit(RunWorker(os.Stdin, os.Stdout))
		case "script": // unconfined, to reach the test's files
			if code, asked := engine.RunConfined(true); asked {
				os.Exit(code)
			}
			os.Exit(serveWorker(os.Stdin, os.Stdout, startScript, nil))
		case "pool":
			os.Exit(holdPool())
		case "grow":
			grow(600)
		}
	}
	code := m.Run()
	if coldProfiles.dir != "" {
		os.RemoveAll(coldProfiles.dir)
	}
	os.Exit(code)
}

// shared is the LibreOffice pool of the tests that need only a warm
// engine with the default options (two workers). The tests that count the
// pool's jobs, kill its workers or change its options start their own.
var shared = enginetest.Shared[*Pool]{
	Start: func(dir string) (*Pool, error) {
		p, err := NewPool(Options{PoolOptions: engine.PoolOptions{Workers: 2, Executable: os.Args[0], WorkerArgs: []string{"quire-test-worker", "lok"}}, Dir: dir})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if err := p.WaitReady(ctx); err != nil {
			p.Close(context.Background())
			return nil, err
		}
		return p, nil
	},
	Close: func(p *Pool) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return p.Close(ctx)
	},
}

// sharedPool returns the shared pool, held by t (see enginetest.Shared).
func sharedPool(t *testing.T) *Pool {
	t.Helper()
	requireLibreOffice(t)
	return shared.Get(t)
}

// sharedSerial returns the shared pool to a serial test, with a function
// returning what the pool's counters have gained since. While the serial
// tests run, the parallel tests that hold the pool wait, so the gain is the
// test's own: the test needs no pool of its own (a worker's start costs
// seconds) to count what reached the workers. It must not call t.Parallel.
// Every worker is ready when it returns: none replacing one that an earlier
// test's job retired is still starting.
func sharedSerial(t *testing.T) (*Pool, func() engine.Counters) {
	t.Helper()
	p := sharedPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	before := p.Counters()
	return p, func() engine.Counters { return gained(before, p.Counters()) }
}

// gained returns after less before, counter by counter.
func gained(before, after engine.Counters) engine.Counters {
	d := reflect.ValueOf(&after).Elem()
	b := reflect.ValueOf(before)
	for i := range d.NumField() {
		d.Field(i).SetUint(d.Field(i).Uint() - b.Field(i).Uint())
	}
	return after
}

// grow makes the process resident in mib more MiB of memory, a page at a
// time, as a document that LibreOffice expands does, and then hangs.
func grow(mib int) {
	held := allocate(mib)
	time.Sleep(time.Hour) // and then holds it until killed
	runtime.KeepAlive(held)
}

// kept is what "keep" jobs left in the worker, for the jobs after them.
var kept [][]byte

// allocate takes mib MiB, resident, a MiB a millisecond.
func allocate(mib int) [][]byte {
	var held [][]byte
	for range mib {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
		time.Sleep(time.Millisecond) // a worker that grows over time: the behaviour under test
	}
	return held
}

// holdPool is the main function of "quire-test-worker pool": it opens a
// pool of script workers in a work directory of its own, prints the
// directory once the workers are ready, and waits until stdin closes or
// it is killed.
func holdPool() int {
	p, err := NewPool(Options{PoolOptions: engine.PoolOptions{Workers: 1, Executable: os.Args[0], WorkerArgs: []string{"quire-test-worker", "script"}}, hostNamespaces: true})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = p.WaitReady(ctx)
		cancel()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(p.dir)
	io.Copy(io.Discard, os.Stdin)
	p.Close(context.Background())
	return 0
}

// scriptEngine stands in for LibreOffice in the supervisor's tests. It
// obeys commands written in the input document:
//
//	sleep DURATION      take that long
//	crash               die by SIGKILL (a SIGSEGV would be caught by Go)
//	crash-once PATH     die the first time (creating PATH), succeed after
//	touch PATH          create PATH (proves the job reached a worker)
//	refuse              fail like a document LibreOffice cannot export
//	unloadable          fail like a document LibreOfficeKit cannot load,
//	                    so that soffice in the program directory runs (cold.go)
//	grow MiB            use that much more memory, then hang
//
// Otherwise it writes a tiny PDF. The engine's start obeys the same
// commands, read from the file script-start in the program directory if
// there is one ("refuse" then fails the start).
type scriptEngine struct{}

func startScript(programDir, profileDir string) (officeEngine, error) {
	start := filepath.Join(programDir, "script-start")
	if src, err := os.ReadFile(start); err == nil {
		if err := obeyScript(string(src), start); err != nil {
			return nil, err
		}
	}
	return scriptEngine{}, nil
}

func (scriptEngine) version() string { return "script" }

var scriptCommand = regexp.MustCompile(`(sleep|crash-once|crash|touch|refuse|unloadable|grow|keep) ?([^\s<]*)`)

// scriptWords are the names scriptCommand starts with. A document naming
// none of them is no script, and need not go through the regexp, which
// takes many seconds under the race detector over the megabytes of the
// large documents some tests send (a plain substring search does not).
var scriptWords = []string{"sleep", "crash", "touch", "refuse", "unloadable", "grow", "keep"}

func (scriptEngine) convert(in, out, filter, password string) (func(), error) {
	src, err := os.ReadFile(in)
	if err != nil {
		return func() {}, err
	}
	if err := obeyScript(string(src), in); err != nil {
		return func() {}, err
	}
	return func() {}, os.WriteFile(out, []byte("%PDF-1.4\n% script engine\n"), 0o600)
}

// obeyScript runs the commands in src, a script read from the file in.
func obeyScript(src, in string) error {
	if !slices.ContainsFunc(scriptWords, func(w string) bool { return strings.Contains(src, w) }) {
		return nil
	}
	for _, c := range scriptCommand.FindAllStringSubmatch(src, -1) {
		switch c[1] {
		case "sleep":
			d, _ := time.ParseDuration(c[2])
			time.Sleep(d) // a slow engine: the behaviour the script asks for
		case "crash":
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Hour) // until the signal lands: a crash is the behaviour the script asks for
		case "crash-once":
			if _, err := os.Stat(c[2]); err != nil {
				os.WriteFile(c[2], nil, 0o600)
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				time.Sleep(time.Hour) // as for crash
			}
		case "touch":
			os.WriteFile(c[2], nil, 0o600)
		case "refuse":
			return &lok.Error{Op: "save", URL: in, Detail: "scripted refusal"}
		case "unloadable":
			return &lok.Error{Op: "load", URL: fileURL(in), Detail: "scripted load failure of " + fileURL(in)}
		case "grow":
			mib, _ := strconv.Atoi(c[2])
			grow(mib)
		case "keep": // a job that leaves memory behind, as LibreOffice's caches do
			mib, _ := strconv.Atoi(c[2])
			kept = append(kept, allocate(mib)...)
		}
	}
	return nil
}

// Debian packages the LibreOffice tests need.
const debianPackages = "libreoffice-writer-nogui libreoffice-calc libreoffice-impress-nogui libreofficekit-dev fonts-crosextra-carlito fonts-crosextra-caladea fonts-liberation2 fonts-dejavu poppler-utils qpdf"

// requireLibreOffice fails the test (it does not skip: a machine without
// the engine cannot vouch for it) when LibreOffice or the PDF tools the
// tests use are missing.
func requireLibreOffice(t *testing.T) {
	t.Helper()
	var missing []string
	if _, err := os.Stat(DefaultProgramDir + "/libmergedlo.so"); err != nil {
		missing = append(missing, DefaultProgramDir+"/libmergedlo.so")
	}
	for _, tool := range []string{"soffice", "qpdf", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("LibreOffice tests need %s; install the Debian packages: apt-get install %s",
			strings.Join(missing, ", "), debianPackages)
	}
}

// testPool starts a pool whose workers are this test binary in the given
// mode ("lok" or "script"), waits until they are ready, and closes it
// when the test ends.
func testPool(t *testing.T, mode string, o Options) *Pool {
	t.Helper()
	p := startTestPool(t, mode, o)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := p.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return p
}

// startTestPool is testPool without the wait for the workers.
func startTestPool(t *testing.T, mode string, o Options) *Pool {
	t.Helper()
	o.Executable = os.Args[0]
	o.WorkerArgs = []string{"quire-test-worker", mode}
	o.hostNamespaces = o.hostNamespaces || mode == "script"
	o.Dir = t.TempDir()
	if o.Workers == 0 {
		o.Workers = 1
	}
	p, err := NewPool(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("close pool: %v", err)
		}
	})
	return p
}
