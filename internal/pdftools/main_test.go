package pdftools

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// testWorker is the worker executable of the tests' services.
var testWorker string

// TestMain builds the worker the tests' services start: without the race
// detector, under which pdfcpu runs several times slower (the corpus test
// makes thousands of calls) and which finds nothing in a process of one
// goroutine; the service's side of every call stays under it. The test
// binary still serves as a worker, for a service the tests would start
// without one.
func TestMain(m *testing.M) {
	RunWorkerIfAsked()
	// Once, as the server does: pdfcpu's setting is a global that the
	// tests' in-process merges (Merge) read in parallel.
	DisableConfigDir()
	flag.Parse()
	dir, err := os.MkdirTemp("", "pdftools-worker-")
	if err == nil {
		err = buildWorker(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildWorker builds testWorker in dir. Without -cover it is the program
// of testdata/worker. Under -cover it is this package's test binary,
// built with this one's coverage mode: started as a worker, its TestMain
// serves the task, and at its exit the coverage runtime writes its
// counters into GOCOVERDIR under the same meta-data hash as this
// binary's, which merges them into the package's figure when this binary
// ends. testdata/worker built with -coverpkg would not do: Go writes no
// counters for a program whose main package is not covered, and covering
// it changes the hash, so that its counters are left out.
func buildWorker(dir string) error {
	testWorker = filepath.Join(dir, "worker")
	args := []string{"build", "-o", testWorker, "./testdata/worker"}
	if mode := testing.CoverMode(); mode != "" {
		if err := shareCoverDir(dir); err != nil {
			return err
		}
		args = []string{"test", "-c", "-cover", "-covermode=" + mode, "-o", testWorker, "."}
	}
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("building the PDF worker of the tests (go %v, needs the go command on PATH): %v\n%s", args, err, out)
	}
	return nil
}

// shareCoverDir makes the workers, which inherit this process's
// environment, write their counters where this binary reads its own: the
// directory of -test.gocoverdir, one in dir if the binary was started
// without it (go test gives it, and GOCOVERDIR the same).
func shareCoverDir(dir string) error {
	f := flag.Lookup("test.gocoverdir")
	if f.Value.String() == "" {
		cover := filepath.Join(dir, "cover")
		if err := os.Mkdir(cover, 0o755); err != nil {
			return err
		}
		f.Value.Set(cover)
	}
	return os.Setenv("GOCOVERDIR", f.Value.String())
}
