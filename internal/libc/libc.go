// Package libc tunes the C library's allocator (glibc's malloc), which
// SQLite and the other C code linked into the server allocate from.
package libc

/*
#include <malloc.h>
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
)

// The thresholds KeepFreed sets.
const (
	// TrimThreshold is how much free memory each of malloc's heaps keeps
	// at its top instead of handing it back to the kernel.
	TrimThreshold = 8 << 20
	// MmapThreshold is the size from which a block gets a mapping of its
	// own, unmapped when freed.
	MmapThreshold = 4 << 20
)

// KeepFreed makes malloc keep memory freed at the top of its heaps, up to
// TrimThreshold, instead of handing it back to the kernel at once, and
// serve blocks under MmapThreshold from its heaps. It leaves malloc as it
// is when the operator tuned either threshold in GLIBC_TUNABLES.
//
// Why: by default (128 KiB, raised only once a large block is freed)
// glibc hands a heap's top back to the kernel with madvise as soon as it
// passes the threshold. Many of the server's SQLite statements build a
// temporary b-tree (River's fetch of jobs, with its IN list and
// RETURNING; DISTINCT; some sorts) whose page cache is freed when the
// statement ends: each of them then paid an madvise, which flushes the
// TLB of every core (dear on a virtual machine), and a page fault for
// each page of the next statement's cache. River's fetch from an empty
// queue took 0.6-1.4 ms of CPU so, and 0.1 ms with these thresholds; the
// server's CPU per conversion fell by 11-20% (bench/RESULTS.md). The
// cost is at most TrimThreshold of free memory kept per heap (malloc has
// a heap for each thread allocating at once, at most 8 per core).
func KeepFreed() error {
	if t := os.Getenv("GLIBC_TUNABLES"); strings.Contains(t, "malloc.trim_threshold") || strings.Contains(t, "malloc.mmap_threshold") {
		return nil
	}
	if C.mallopt(C.M_MMAP_THRESHOLD, MmapThreshold) != 1 || C.mallopt(C.M_TRIM_THRESHOLD, TrimThreshold) != 1 {
		return fmt.Errorf("libc: malloc refused the thresholds (mallopt)")
	}
	return nil
}
