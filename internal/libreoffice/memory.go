package libreoffice

import (
	"fmt"

	"github.com/quire-dev/quire/internal/engine"
)

// How a conversion's memory is bounded. A document can make LibreOffice
// allocate far more than its size: a DOCX of 1 MB whose one text run holds
// 1000 MiB of spaces, or 200 KB of two million empty paragraphs, took
// gigabytes. Two bounds stop that:
//
//   - before a job, the expanded size of a ZIP package (DOCX, ODT) and of
//     the packages nested in it is measured by inflating it, which bounds
//     what LibreOffice can be asked to read (safeinput/expand.go);
//   - during a job, the supervisor (engine.Supervisor) samples the worker's
//     resident memory and kills it once the job has grown it by more than
//     Options.MaxWorkerMemory (engine.WatchJobMemory: what the worker held
//     before, what earlier documents left in LibreOffice's caches, is not
//     the job's, so that a document that converts alone converts after
//     others); the job fails with ErrMemoryLimit (422), is not retried (the
//     document, not the worker, is at fault), and a new worker takes the
//     slot. The cold soffice (cold.go), a process of its own, is watched
//     from its start, its child processes included.
//
// An address-space limit (RLIMIT_AS) was not used: a warm worker maps
// 1.8 GB of virtual memory for 170-250 MB resident (libraries, jemalloc's
// and Go's reservations), so such a limit says little about the memory
// really used, and LibreOffice answers a failed allocation by aborting or
// by a load error that would send the document on to the cold soffice.

// LibreOffice runs at a lower priority than the supervisor
// (engine.LowPriority): where the cores are busy, the memory sampling
// waits for one, and LibreOffice waits longer, so it cannot run far past
// its limit meanwhile. The growth reported is the higher of the samples'
// and the kernel's own count (the worker's VmHWM, reset before each job,
// less what the worker held then).

// memoryError is ErrMemoryLimit with its figures.
type memoryError struct {
	limit   int64 // bytes
	peak    int64 // the highest of sampled and kernel
	sampled int64 // the highest sample of the job's growth
	kernel  int64 // the job's growth as the kernel counted it (VmHWM since the job began), 0 if unknown
}

func (e *memoryError) Error() string {
	return fmt.Sprintf("%v of %d MiB (the conversion was stopped at %d MiB)", engine.ErrMemoryLimit, e.limit>>20, e.peak>>20)
}

func (e *memoryError) Unwrap() error { return engine.ErrMemoryLimit }

// treeRSS returns the resident memory of process pid and of all its
// descendants.
func treeRSS(pid int) int64 {
	var total int64
	for _, p := range engine.ProcessTree(pid) {
		total += engine.RSS(p)
	}
	return total
}
