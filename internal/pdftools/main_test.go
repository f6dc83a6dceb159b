package pdftools

import (
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
	dir, err := os.MkdirTemp("", "pdftools-worker-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testWorker = filepath.Join(dir, "worker")
	if out, err := exec.Command("go", "build", "-o", testWorker, "./testdata/worker").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the PDF worker of the tests (needs the go command on PATH): %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
