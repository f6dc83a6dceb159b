package engine

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"
)

// PoolOptions are the settings every supervised pool of confined engine
// processes has, whatever the engine: the LibreOffice workers of this
// package (Options) and the browsers of package chromium embed them, and
// each calls WithDefaults with its own defaults. A process of the pool is
// its worker. The zero value of a field selects its default.
type PoolOptions struct {
	// Workers is the number of engine processes (default
	// runtime.NumCPU()).
	Workers int
	// QueueLength is how many jobs may wait for a worker; past it a job
	// fails at once with ErrBusy (default 4 per worker).
	QueueLength int
	// JobTimeout bounds one job; past it the worker is killed and
	// replaced, and the job fails with ErrTimeout.
	JobTimeout time.Duration
	// StartTimeout bounds the start (and warm-up) of a worker.
	StartTimeout time.Duration
	// MaxJobsPerWorker replaces a worker after that many jobs, which
	// bounds an engine's slow leaks (negative: never).
	MaxJobsPerWorker int
	// MaxWorkerRSS replaces a worker whose resident memory exceeds it
	// after a job, in bytes (negative: never).
	MaxWorkerRSS int64
	// MaxWorkerMemory bounds what a job grows its worker's memory by:
	// past it the worker is killed and replaced, and the job fails with
	// ErrMemoryLimit (negative: no limit). See memory.go (WatchJobMemory).
	MaxWorkerMemory int64
	// Executable is the program that starts a confined worker (default
	// os.Executable()), with WorkerArgs (default ["convert-worker"]): this
	// program's mode that calls RunWorker.
	Executable string
	WorkerArgs []string
	// Logger receives worker starts, replacements and the engines'
	// messages (default slog.Default()).
	Logger *slog.Logger
}

// DefaultPoolOptions are the defaults of the LibreOffice workers, and of
// any engine that does not set its own (WithDefaults).
var DefaultPoolOptions = PoolOptions{
	JobTimeout:       60 * time.Second,
	StartTimeout:     60 * time.Second,
	MaxJobsPerWorker: 200,
	MaxWorkerRSS:     1 << 30,
	MaxWorkerMemory:  1536 << 20,
}

// WithDefaults returns o with its unset fields set to the engine's
// defaults, def, or, where def leaves one zero too, to the common default
// (Workers: runtime.NumCPU(), QueueLength: 4 per worker, Executable and
// WorkerArgs: this program's worker mode, Logger: slog.Default()). Unset
// is zero, or also negative for Workers, QueueLength and the timeouts,
// which have no "never".
func (o PoolOptions) WithDefaults(def PoolOptions) (PoolOptions, error) {
	notPositive(&o.Workers, cmp.Or(def.Workers, runtime.NumCPU()))
	notPositive(&o.QueueLength, cmp.Or(def.QueueLength, 4*o.Workers))
	notPositive(&o.JobTimeout, def.JobTimeout)
	notPositive(&o.StartTimeout, def.StartTimeout)
	o.MaxJobsPerWorker = cmp.Or(o.MaxJobsPerWorker, def.MaxJobsPerWorker)
	o.MaxWorkerRSS = cmp.Or(o.MaxWorkerRSS, def.MaxWorkerRSS)
	o.MaxWorkerMemory = cmp.Or(o.MaxWorkerMemory, def.MaxWorkerMemory)
	if o.WorkerArgs == nil {
		o.WorkerArgs = def.WorkerArgs
	}
	o.Logger = cmp.Or(o.Logger, def.Logger, slog.Default())
	var err error
	o.Executable, o.WorkerArgs, err = workerProgram(cmp.Or(o.Executable, def.Executable), o.WorkerArgs)
	return o, err
}

// notPositive sets *v to def when it is zero or negative.
func notPositive[T int | int64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// workerProgram is the program and arguments that start a confined
// engine process (a LibreOffice worker, a browser): exe and args when set,
// else this program in its "convert-worker" mode, which must call RunWorker.
func workerProgram(exe string, args []string) (string, []string, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return "", nil, fmt.Errorf("cannot find this program to confine the engine: %w", err)
		}
	}
	if args == nil {
		args = []string{"convert-worker"}
	}
	return exe, args, nil
}
