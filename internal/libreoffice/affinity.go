package libreoffice

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Each worker runs on a CPU of its own when there are at least two workers
// and no more workers than CPUs the process may use (its affinity mask,
// which cgroups and taskset narrow). A worker pins the thread that starts
// LibreOffice, and so every thread LibreOffice starts, before it starts
// it. Left to the scheduler, two busy workers on two cores move between
// them, and each then finds the other's data in its core's cache. In runs
// of the conversion benchmark taken in turn on two cores, two clients
// converted 38.96, 38.48 and 39.72 documents per second pinned against
// 35.27, 35.74 and 36.48 unpinned (9% more), at a median engine time of
// 18.1 ms against 20.6 ms; one client converted as fast either way. One
// worker, or more workers than CPUs, are left to the scheduler, which can
// then move them away from a busy core.

// allowedCPUs returns the CPUs this process may run on, or an empty set
// if the kernel does not tell.
func allowedCPUs() unix.CPUSet {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		set.Zero()
	}
	return set
}

// workerCPUs returns the CPU of each of workers workers among allowed, or
// nil when they are not to be pinned.
func workerCPUs(workers int, allowed unix.CPUSet) []int {
	if workers < 2 || workers > allowed.Count() {
		return nil
	}
	cpus := make([]int, 0, workers)
	for cpu := 0; len(cpus) < workers; cpu++ {
		if allowed.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

// pinThread runs the calling thread, and the threads it starts from now
// on, on cpu only. A failure is reported on stderr and otherwise ignored:
// the worker runs as well unpinned.
func pinThread(cpu int) {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		fmt.Fprintf(os.Stderr, "quire convert-worker[%d]: cannot run on CPU %d only: %v\n", os.Getpid(), cpu, err)
	}
}
