package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// request builds the i-th request of a load run.
type request func(i int64) (*http.Request, error)

// stats summarises one load run.
type stats struct {
	requests, failures int64
	elapsed            time.Duration
	p50, p95, p99      time.Duration
	// CPU time per request of the server process and of this process (the
	// load generator), when measured (see process.load): on a machine that
	// the load saturates, rates follow these.
	serverCPU, clientCPU time.Duration
}

func (s stats) rate() float64 { return float64(s.requests) / s.elapsed.Seconds() }

// load sends requests from conns keep-alive connections for d and records
// every latency. A response whose status is not want counts as a failure.
func load(conns int, d time.Duration, want int, next request) stats {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var seq, failures atomic.Int64
	lat := make([][]time.Duration, conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < conns; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, err := next(seq.Add(1))
				if err != nil {
					panic(err)
				}
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				lat[c] = append(lat[c], time.Since(t0))
				if res.StatusCode != want {
					failures.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	s := stats{requests: int64(len(all)), failures: failures.Load(), elapsed: time.Since(start)}
	if len(all) > 0 {
		s.p50, s.p95, s.p99 = all[len(all)/2], all[len(all)*95/100], all[len(all)*99/100]
	}
	return s
}

// load runs load against the server p and measures the CPU time it and
// the load generator spend per request.
func (p *process) load(conns int, d time.Duration, want int, next request) stats {
	server, client := cpuTime(p.cmd.Process.Pid), selfCPUTime()
	s := load(conns, d, want, next)
	if s.requests > 0 {
		s.serverCPU = (cpuTime(p.cmd.Process.Pid) - server) / time.Duration(s.requests)
		s.clientCPU = (selfCPUTime() - client) / time.Duration(s.requests)
	}
	return s
}

// cpuTime returns the user and system CPU time that process pid has used
// (Linux: /proc/PID/stat, in clock ticks of 1/100 s).
func cpuTime(pid int) time.Duration { return statTicks(pid, 2) }

// statTicks sums the first n of the CPU times of /proc/PID/stat (utime,
// stime, cutime, cstime: 4 adds the children it has waited for).
func statTicks(pid, n int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(b, ')') // the command name, in parentheses, may hold spaces
	if err != nil || i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state); the times are fields 14 to 17
	if len(f) < 15 {
		return 0
	}
	var ticks int64
	for _, v := range f[11 : 11+n] {
		t, _ := strconv.ParseInt(v, 10, 64)
		ticks += t
	}
	return time.Duration(ticks) * time.Second / 100
}

// treeCPU is the CPU time of process pid and of every process under it,
// with the children each has waited for: a browser's renderers that
// ended count through the process that reaped them.
func treeCPU(pid int) time.Duration {
	var t time.Duration
	for _, p := range engine.ProcessTree(pid) {
		t += statTicks(p, 4)
	}
	return t
}

func selfCPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
