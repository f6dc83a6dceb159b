package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/annotate/annotatetest"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// The tests of issue #32 against the built binary: the resident memory
// (RSS) of the server and every process under it, sampled from /proc,
// while the issue's hostile loads run with the default budget (1 GiB),
// stays within the budget plus memory.Margin.

const defaultBudget = 1 << 30

// treeRSS is the resident memory of pid and of its descendants.
func treeRSS(pid int) int64 {
	var total int64
	for _, p := range tree(pid) {
		if statm, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", p)); err == nil {
			if f := strings.Fields(string(statm)); len(f) > 1 {
				pages, _ := strconv.ParseInt(f[1], 10, 64)
				total += pages * int64(os.Getpagesize())
			}
		}
	}
	return total
}

// tree is pid and its descendants, from /proc.
func tree(pid int) []int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], p)
		}
	}
	all := []int{pid}
	for i := 0; i < len(all); i++ {
		all = append(all, children[all[i]]...)
	}
	return all
}

// peakRSS samples treeRSS(pid) every 20 ms while f runs and returns its
// peak.
func peakRSS(pid int, f func()) int64 {
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		var peak int64
		for {
			peak = max(peak, treeRSS(pid))
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	return <-done
}

// atOnce posts body to path n times at once with key and returns the
// statuses; each must be 200 or 503 with Retry-After.
func atOnce(t *testing.T, in *instance, n int, path, key string, body []byte) (ok, busy int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", in.base+path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("request %d: %v", i+1, err)
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case res.StatusCode == 200:
				ok++
			case res.StatusCode == 503 && res.Header.Get("Retry-After") != "":
				busy++
			default:
				t.Errorf("request %d: %d %.300s, want 200 or 503 with Retry-After", i+1, res.StatusCode, b)
			}
		})
	}
	wg.Wait()
	return ok, busy
}

// tableRequest is an annotate request filling annotatetest.TableTemplate(10)
// with rows rows of 10 short values ("r0c0"). The values, 33 MB of JSON
// for the tests' tables, are appended as text: formatting and marshalling
// millions of strings took most of a test's time under the race detector.
func tableRequest(t *testing.T, rows int) []byte {
	t.Helper()
	values := []byte{'['}
	for i := range rows {
		if i > 0 {
			values = append(values, ',')
		}
		values = append(values, '[')
		for j := range 10 {
			if j > 0 {
				values = append(values, ',')
			}
			values = strconv.AppendInt(append(values, `"r`...), int64(i), 10)
			values = append(strconv.AppendInt(append(values, 'c'), int64(j), 10), '"')
		}
		values = append(values, ']')
	}
	values = append(values, ']')
	body, err := json.Marshal(map[string]any{
		"document": map[string]string{"base64": base64.StdEncoding.EncodeToString(annotatetest.TableTemplate(10))},
		"fields":   []map[string]any{{"id": annotatetest.TableID, "type": "table", "value": json.RawMessage(values)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// withinBudget fails t when peak passes the default budget plus
// memory.Margin.
func withinBudget(t *testing.T, what string, peak int64) {
	t.Helper()
	t.Logf("%s: peak RSS of the server and its children %d MiB; budget %d MiB + margin %d MiB", what, peak>>20, defaultBudget>>20, memory.Margin>>20)
	if peak > defaultBudget+memory.Margin {
		t.Errorf("%s: peak RSS %d MiB, more than the budget (%d MiB) plus the margin (%d MiB)", what, peak>>20, defaultBudget>>20, memory.Margin>>20)
	}
}

// TestLargeTablesRSSWithinTheBudget (issue #32): three annotate requests
// at once, each a table of 260,000 rows of 10 short cells (a 33 MB
// request), on the default budget: each is answered 200 or 503, the
// server's resident memory stays within the budget plus the margin, and
// one such request alone is filled (200).
func TestLargeTablesRSSWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("fills tables of 2.6 million cells; not in -short")
	}
	in := start(t, t.TempDir())
	key := issueKey(t, in, in, "tables@example.com")
	body := tableRequest(t, 260_000)
	var ok, busy int
	peak := peakRSS(in.cmd.Process.Pid, func() { ok, busy = atOnce(t, in, 3, "/v1/annotate", key, body) })
	t.Logf("three at once: %d filled, %d answered 503", ok, busy)
	withinBudget(t, "three 260,000-row tables", peak)
	peak = peakRSS(in.cmd.Process.Pid, func() { ok, busy = atOnce(t, in, 1, "/v1/annotate", key, body) })
	if ok != 1 {
		t.Errorf("one 260,000-row table alone: %d filled, %d answered 503; want it filled within the default budget", ok, busy)
	}
	withinBudget(t, "one 260,000-row table", peak)
}

// TestWidePageTreesRSSWithinTheBudget (issue #32): eight signings at once,
// with the certificate page, of a PDF whose one /Pages node has 200,000
// tiny pages: each is answered 200 or 503, the server's resident memory
// stays within the budget plus the margin, and one such signing alone is
// signed (200).
func TestWidePageTreesRSSWithinTheBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("signs 200,000-page PDFs; not in -short")
	}
	in := start(t, t.TempDir())
	key := issueKey(t, in, in, "pages@example.com")
	body := []byte(`{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdftest.WidePageTree(200_000)) + `"},
		"signer":{"email":"s@example.com","name":"Sam Signer"},"certificate":{"enabled":true},
		"auditTrail":[{"type":"submit","timestamp":"2026-11-22T10:00:00Z"}]}`)
	var ok, busy int
	peak := peakRSS(in.cmd.Process.Pid, func() { ok, busy = atOnce(t, in, 8, "/v1/sign", key, body) })
	t.Logf("eight at once: %d signed, %d answered 503", ok, busy)
	withinBudget(t, "eight 200,000-page signings", peak)
	peak = peakRSS(in.cmd.Process.Pid, func() { ok, busy = atOnce(t, in, 1, "/v1/sign", key, body) })
	if ok != 1 {
		t.Errorf("one 200,000-page signing alone: %d signed, %d answered 503; want it signed within the default budget", ok, busy)
	}
	withinBudget(t, "one 200,000-page signing", peak)
}

// TestCancelledAnnotateStops (issue #32): when the client of a large fill
// goes away once the fill has started (its rows charged to the budget),
// the server stops working on it: the request ends as cancelled (logged
// 503), not as a fill carried to its end (200), and the budget holds
// nothing afterwards.
func TestCancelledAnnotateStops(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a table of 2.6 million cells; not in -short")
	}
	in := start(t, t.TempDir())
	key := issueKey(t, in, in, "cancel@example.com")
	body := tableRequest(t, 260_000)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", in.base+"/v1/annotate", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	sent := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			err = fmt.Errorf("answered %d before the client left", res.StatusCode)
		}
		sent <- err
	}()
	firstCharge := int64(len(body)) * memory.PerBodyByte
	for held := int64(0); held <= firstCharge; held = heldBytes(t, in) {
		select {
		case err := <-sent:
			t.Fatalf("the fill never started: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel() // the rows are charged: the fill runs
	<-sent
	line := waitForLog(t, in, regexp.MustCompile(`"msg":"request".*"path":"/v1/annotate".*"status":(\d+)`))
	if status := line[1]; status != "503" {
		t.Errorf("the fill whose client left ended with status %s, want 503 (cancelled): it was carried to its end", status)
	}
	if held := heldBytes(t, in); held != 0 {
		t.Errorf("the budget holds %d bytes after the cancelled fill ended", held)
	}
}

// heldBytes reads quire_memory_budget_held_bytes from /metrics.
func heldBytes(t *testing.T, in *instance) int64 {
	t.Helper()
	st, b := in.get("/metrics")
	m := regexp.MustCompile(`(?m)^quire_memory_budget_held_bytes (\S+)$`).FindSubmatch(b)
	if st != 200 || m == nil {
		t.Fatalf("/metrics: %d, no quire_memory_budget_held_bytes", st)
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return int64(v)
}

// waitForLog waits up to a minute for a line of the server's log that re
// matches, and returns the match's submatches.
func waitForLog(t *testing.T, in *instance, re *regexp.Regexp) []string {
	t.Helper()
	for deadline, tick := time.Now().Add(time.Minute), time.Tick(50*time.Millisecond); time.Now().Before(deadline); <-tick {
		if m := re.FindStringSubmatch(in.logs.String()); m != nil {
			return m
		}
	}
	t.Fatalf("no log line matches %s:\n%s", re, in.logs)
	return nil
}
