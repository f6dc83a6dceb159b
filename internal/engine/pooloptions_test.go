package engine

import (
	"log/slog"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// TestPoolOptionsDefaults: a zero field takes the engine's default, or
// the common one; a set field, or a negative "never", stays.
func TestPoolOptionsDefaults(t *testing.T) {
	def := DefaultPoolOptions
	def.StartTimeout = 30 * time.Second // an engine's own, as package chromium's
	o, err := PoolOptions{}.WithDefaults(def)
	if err != nil {
		t.Fatal(err)
	}
	want := PoolOptions{Workers: runtime.NumCPU(), QueueLength: 4 * runtime.NumCPU(), JobTimeout: time.Minute, StartTimeout: 30 * time.Second,
		MaxJobsPerWorker: 200, MaxWorkerRSS: 1 << 30, MaxWorkerMemory: 1536 << 20}
	if o.Executable == "" || len(o.WorkerArgs) != 1 || o.WorkerArgs[0] != "convert-worker" || o.Logger != slog.Default() {
		t.Errorf("program %q %q, logger %v: want this program's convert-worker mode and slog.Default()", o.Executable, o.WorkerArgs, o.Logger)
	}
	o.Executable, o.WorkerArgs, o.Logger = "", nil, nil
	if !reflect.DeepEqual(o, want) {
		t.Errorf("defaults %+v, want %+v", o, want)
	}

	set := PoolOptions{Workers: 3, QueueLength: -1, JobTimeout: time.Second, StartTimeout: -time.Second,
		MaxJobsPerWorker: -1, MaxWorkerRSS: -1, MaxWorkerMemory: 5 << 20, Executable: "/bin/engine", WorkerArgs: []string{}}
	o, err = set.WithDefaults(DefaultPoolOptions)
	if err != nil {
		t.Fatal(err)
	}
	want = PoolOptions{Workers: 3, QueueLength: 12, JobTimeout: time.Second, StartTimeout: time.Minute,
		MaxJobsPerWorker: -1, MaxWorkerRSS: -1, MaxWorkerMemory: 5 << 20, Executable: "/bin/engine", WorkerArgs: []string{}}
	o.Logger = nil
	if !reflect.DeepEqual(o, want) {
		t.Errorf("with settings %+v, want %+v", o, want)
	}
}
