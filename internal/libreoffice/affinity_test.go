package libreoffice

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"golang.org/x/sys/unix"
)

func TestWorkerCPUs(t *testing.T) {
	var four unix.CPUSet // CPUs 0, 2, 3 and 5, as a cpuset may leave them
	for _, c := range []int{0, 2, 3, 5} {
		four.Set(c)
	}
	for _, c := range []struct {
		workers int
		want    []int
	}{
		{1, nil}, // one worker: left to the scheduler
		{2, []int{0, 2}},
		{4, []int{0, 2, 3, 5}},
		{5, nil}, // more workers than CPUs
	} {
		if got := workerCPUs(c.workers, four); !slices.Equal(got, c.want) {
			t.Errorf("workerCPUs(%d, {0,2,3,5}) = %v, want %v", c.workers, got, c.want)
		}
	}
	var none unix.CPUSet
	if got := workerCPUs(2, none); got != nil {
		t.Errorf("workerCPUs(2, {}) = %v, want nil", got)
	}
}

// TestWorkersRunOnCPUsOfTheirOwn reads the affinity of the workers'
// threads from /proc: the thread that runs the engine must be on its
// worker's CPU only.
func TestWorkersRunOnCPUsOfTheirOwn(t *testing.T) {
	allowed := allowedCPUs()
	want := workerCPUs(2, allowed)
	if allowed.Count() < 2 {
		// Every thread runs on the one CPU: nothing to tell pinned from not.
		if want != nil {
			t.Fatalf("workerCPUs(2, one CPU) = %v, want nil", want)
		}
		t.Logf("this process may use one CPU: workers are not pinned")
		return
	}
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 2}})
	for i, w := range p.Status().Details {
		if pinned := pinnedCPUs(t, w.PID); !slices.Equal(pinned, []int{want[i]}) {
			t.Errorf("worker %d: threads pinned to %v, want the engine's thread on CPU %d", w.ID, pinned, want[i])
		}
	}
}

// pinnedCPUs returns the CPUs to which threads of process pid are
// restricted one each, without repeats.
func pinnedCPUs(t *testing.T, pid int) []int {
	t.Helper()
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "status"))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no threads of pid %d in /proc: %v", pid, err)
	}
	var cpus []int
	for _, status := range tasks {
		f, err := os.Open(status)
		if err != nil {
			continue // the thread ended
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
				if cpu, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && !slices.Contains(cpus, cpu) {
					cpus = append(cpus, cpu)
				}
			}
		}
		f.Close()
	}
	slices.Sort(cpus)
	return cpus
}
