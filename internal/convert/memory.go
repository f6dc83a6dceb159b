package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// How a conversion's memory is bounded. A document can make LibreOffice
// allocate far more than its size: a DOCX of 1 MB whose one text run holds
// 1000 MiB of spaces, or 200 KB of two million empty paragraphs, took
// gigabytes. Two bounds stop that:
//
//   - before a job, the expanded size of a ZIP package (DOCX, ODT) and of
//     the packages nested in it is measured by inflating it, which bounds
//     what LibreOffice can be asked to read (expand.go);
//   - during a job, the supervisor samples the worker's resident memory
//     (engine.WatchMemory) and kills its process group past
//     Options.MaxWorkerMemory; the job fails with ErrMemoryLimit (422), is
//     not retried (the document, not the worker, is at fault), and a new
//     worker takes the slot. The cold soffice (cold.go) is watched the same
//     way, its child processes included.
//
// An address-space limit (RLIMIT_AS) was not used: a warm worker maps
// 1.8 GB of virtual memory for 170-250 MB resident (libraries, jemalloc's
// and Go's reservations), so such a limit says little about the memory
// really used, and LibreOffice answers a failed allocation by aborting or
// by a load error that would send the document on to the cold soffice.

// LibreOffice runs at a lower priority than the supervisor (lowPriority):
// where the cores are busy, the memory sampling waits for one, and
// LibreOffice waits longer, so it cannot run far past its limit
// meanwhile. The peak reported is the kernel's own count (the worker's
// VmHWM, reset before each job).
//
// workerNice is the scheduling priority of LibreOffice (19 is the lowest),
// set on the thread that starts it and so inherited by every thread it
// starts. It also keeps conversions from slowing the HTTP service.
const workerNice = 10

// lowPriority lowers the calling thread's priority to workerNice.
func lowPriority() {
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, workerNice) // 0: this thread, on Linux
}

// resetPeak resets the kernel's count of the peak resident memory of
// process pid (its VmHWM), so that the peak read after a job is the job's.
func resetPeak(pid int) {
	os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// memoryError is ErrMemoryLimit with its figures.
type memoryError struct {
	limit   int64 // bytes
	peak    int64 // the highest of sampled and kernelPeak
	sampled int64 // the highest sample
	kernel  int64 // the kernel's count (VmHWM since the job began), 0 if unknown
}

func (e *memoryError) Error() string {
	return fmt.Sprintf("%v of %d MiB (the conversion was stopped at %d MiB)", ErrMemoryLimit, e.limit>>20, e.peak>>20)
}

func (e *memoryError) Unwrap() error { return ErrMemoryLimit }

// rssOf returns the resident memory of process pid in bytes, read from
// /proc/PID/statm, or 0 if it cannot be read.
func rssOf(pid int) int64 {
	resident, _ := statm(pid)
	return resident
}

// privateRSSOf returns the resident memory of process pid that is not
// shared with other processes through files (its program and libraries),
// in bytes, or 0 if it cannot be read.
func privateRSSOf(pid int) int64 {
	resident, shared := statm(pid)
	return resident - shared
}

// statm reads the resident and the file-backed or shared resident memory
// of process pid from /proc/PID/statm, in bytes.
func statm(pid int) (resident, shared int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
	if err != nil {
		return 0, 0
	}
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return 0, 0
	}
	resident, _ = strconv.ParseInt(fields[1], 10, 64)
	shared, _ = strconv.ParseInt(fields[2], 10, 64)
	page := int64(os.Getpagesize())
	return resident * page, shared * page
}

// treeRSS returns the resident memory of process pid and of all its
// descendants.
func treeRSS(pid int) int64 { return treeSum(pid, rssOf) }

// treeSum returns the sum of of(p) over process pid and all its descendants p.
func treeSum(pid int, of func(pid int) int64) int64 {
	var total int64
	for _, p := range processTree(pid, nil) {
		total += of(p)
	}
	return total
}

// processTree appends process pid and all its descendants to pids: it
// reads the children of each of their threads.
func processTree(pid int, pids []int) []int {
	pids = append(pids, pid)
	lists, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, list := range lists {
		b, _ := os.ReadFile(list)
		for _, c := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(c); err == nil {
				pids = processTree(child, pids)
			}
		}
	}
	return pids
}
