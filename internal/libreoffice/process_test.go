package libreoffice

import (
	"slices"
	"testing"
)

// TestWorkerEnv: a worker's environment turns asynchronous preemption
// and the race detector's wait at exit off, keeping the operator's other
// settings of the same variables, and an LD_PRELOAD of the operator's in
// place of jemalloc; HOME and TMPDIR are the worker's directory, and
// LibreOffice's fsyncs are off whatever the operator's environment says.
func TestWorkerEnv(t *testing.T) {
	env := workerEnv([]string{"GODEBUG=madvdontneed=1", "GORACE=halt_on_error=1", "LD_PRELOAD=/opt/alloc.so",
		"HOME=/root", "TMPDIR=/var/tmp", "SAL_USE_VCLPLUGIN=gtk3", "SAL_DISABLE_FSYNC=", "PATH=/usr/bin"}, "/work/worker-1")
	want := []string{"GODEBUG=madvdontneed=1,asyncpreemptoff=1", "GORACE=halt_on_error=1 atexit_sleep_ms=0", "LD_PRELOAD=/opt/alloc.so",
		"HOME=/work/worker-1", "TMPDIR=/work/worker-1", "SAL_USE_VCLPLUGIN=svp", "SAL_DISABLE_FSYNC=1", "PATH=/usr/bin"}
	slices.Sort(env)
	slices.Sort(want)
	if !slices.Equal(env, want) {
		t.Errorf("workerEnv = %q, want %q", env, want)
	}
	for _, kv := range workerEnv(nil, "/w") {
		if kv == "GORACE=atexit_sleep_ms=0" {
			return
		}
	}
	t.Error("without a GORACE of the operator's, the race detector's wait at exit is not turned off")
}
