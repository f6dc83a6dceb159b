package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// wrkLoad posts telemetry events (bench/collect.lua; payload: its
// arguments after the run's prefix, see there) to the servers with
// wrk for d, conns keep-alive connections in all, shared evenly among
// them (one wrk per server, run together), and measures the CPU time per
// request of the servers together and of wrk. wrk's own latency
// percentiles are per wrk; with several servers the highest is kept.
func wrkLoad(servers []*process, path string, conns int, d time.Duration, payload ...string) stats {
	if _, err := exec.LookPath("wrk"); err != nil {
		panic("bench: wrk not found: install it (apt-get install wrk, or scripts/setup --test)")
	}
	threads := 2
	if len(servers) > 1 {
		threads = 1
	}
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	before := make([]time.Duration, len(servers))
	for i, p := range servers {
		before[i] = cpuTime(p.cmd.Process.Pid)
	}
	var mu sync.Mutex
	var total stats
	var wg sync.WaitGroup
	for i, p := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := conns / len(servers)
			if i < conns%len(servers) {
				c++
			}
			cmd := exec.Command("wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(c),
				"-d", fmt.Sprintf("%ds", int(d.Seconds())), "--timeout", "10s", "--latency", "-s", "bench/collect.lua", p.url+path, "--", fmt.Sprintf("%s-%d", run, i))
			cmd.Args = append(cmd.Args, payload...)
			out, err := cmd.Output()
			if err != nil {
				panic(fmt.Sprintf("bench: wrk: %v\n%s", err, out))
			}
			s := parseWrk(out)
			s.clientCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			mu.Lock()
			defer mu.Unlock()
			total.requests += s.requests
			total.failures += s.failures
			total.elapsed = max(total.elapsed, s.elapsed)
			total.p50, total.p99 = max(total.p50, s.p50), max(total.p99, s.p99)
			total.clientCPU += s.clientCPU
		}()
	}
	wg.Wait()
	if total.requests > 0 {
		for i, p := range servers {
			total.serverCPU += cpuTime(p.cmd.Process.Pid) - before[i]
		}
		total.serverCPU /= time.Duration(total.requests)
		total.clientCPU /= time.Duration(total.requests)
	}
	return total
}

// parseWrk reads the summary line that bench/collect.lua writes.
func parseWrk(out []byte) stats {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "wrk-summary ")
		if !ok {
			continue
		}
		v := map[string]int64{}
		for _, f := range strings.Fields(line) {
			k, n, _ := strings.Cut(f, "=")
			v[k], _ = strconv.ParseInt(n, 10, 64)
		}
		us := func(k string) time.Duration { return time.Duration(v[k]) * time.Microsecond }
		return stats{requests: v["requests"], failures: v["failures"], elapsed: us("duration_us"), p50: us("p50_us"), p99: us("p99_us")}
	}
	panic(fmt.Sprintf("bench: no summary in wrk's output:\n%s", out))
}
