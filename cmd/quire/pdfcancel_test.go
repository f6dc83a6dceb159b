package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// The tests of issue #46 against the built binary, which runs without the
// race detector, so that its resident memory tells what the work holds.

// TestPDFWorkStopsWithItsRequest: a 200,000-page split that passes its
// time limit (or its memory charge) answers 422, and one whose client
// leaves once its worker runs ends as cancelled; within 2 s of either,
// the server and its children no longer work (their CPU time stands
// still) and hold at most 100 MB more than before the request.
func TestPDFWorkStopsWithItsRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("splits 200,000-page PDFs; not in -short")
	}
	body, contentType := splitRequest(t, pdftest.WidePageTree(200_000))
	// post sends the split to in with key.
	post := func(ctx context.Context, in *instance, key string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", in.base+"/v1/pdf/split?every=1", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", contentType)
		return http.DefaultClient.Do(req)
	}

	t.Run("timeout", func(t *testing.T) {
		in := start(t, t.TempDir(), "QUIRE_CONVERT_JOB_TIMEOUT=2s")
		key, pid := issueKey(t, in, in, "split@example.com"), in.cmd.Process.Pid
		before := treeRSS(pid)
		res, err := post(t.Context(), in, key)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(res.Body)
		res.Body.Close()
		// pdfcpu needs more than the file's charge: on an idle machine
		// its worker reaches the cap before the time limit.
		if res.StatusCode != 422 || !bytes.Contains(answer, []byte("longer than 2s")) && !bytes.Contains(answer, []byte("more memory than its charge")) {
			t.Fatalf("the split past its time limit: %d %.300s, want 422 naming the limit or the charge", res.StatusCode, answer)
		}
		t.Logf("422 %s", regexp.MustCompile(`"message":"[^"]*"`).Find(answer))
		workStopped(t, pid, before)
	})
	t.Run("client leaves", func(t *testing.T) {
		// A time limit the split cannot reach on a loaded machine before
		// its worker starts.
		in := start(t, t.TempDir(), "QUIRE_CONVERT_JOB_TIMEOUT=10m")
		key, pid := issueKey(t, in, in, "split@example.com"), in.cmd.Process.Pid
		before := treeRSS(pid)
		ctx, hangUp := context.WithCancel(t.Context())
		defer hangUp()
		sent := make(chan error, 1)
		go func() {
			res, err := post(ctx, in, key)
			if err == nil {
				res.Body.Close()
				err = fmt.Errorf("answered %d before the client left", res.StatusCode)
			}
			sent <- err
		}()
		for pdfWorkers(t, in) == 0 {
			select {
			case err := <-sent:
				t.Fatalf("no PDF worker started: %v", err)
			case <-time.After(20 * time.Millisecond):
			}
		}
		hangUp()
		<-sent
		for deadline := time.Now().Add(time.Minute); pdfWorkers(t, in) != 0; <-time.After(20 * time.Millisecond) {
			if time.Now().After(deadline) { // the server's side of the hang-up
				t.Fatal("a minute after the client left, its PDF worker still runs")
			}
		}
		workStopped(t, pid, before)
	})
}

// splitRequest is a multipart body holding pdf as its file.
func splitRequest(t *testing.T, pdf []byte) ([]byte, string) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	f, err := w.CreateFormFile("file", "huge.pdf")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(pdf)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// workStopped fails t unless, within 2 s, the CPU time of pid and its
// children stands still over 250 ms and their resident memory is within
// 100 MB of before.
func workStopped(t *testing.T, pid int, before int64) {
	t.Helper()
	answered := time.Now()
	for {
		c0 := treeCPU(pid)
		time.Sleep(250 * time.Millisecond) // the window over which the CPU time is measured, not a synchronisation
		worked, rss := treeCPU(pid)-c0, treeRSS(pid)
		if worked < 100*time.Millisecond && rss < before+100<<20 {
			t.Logf("RSS before %d MiB, after %d MiB, %s after the answer", before>>20, rss>>20, time.Since(answered).Round(time.Millisecond))
			return
		}
		if time.Since(answered) > 2*time.Second {
			t.Fatalf("2 s after the answer the server still works: CPU +%s in 250 ms, RSS %d MiB (before: %d MiB)", worked, rss>>20, before>>20)
		}
	}
}

// treeCPU is the user and system time of pid and of its living
// descendants (clock ticks of 10 ms).
func treeCPU(pid int) time.Duration {
	var ticks int64
	for _, p := range tree(pid) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue // ended since the listing
		}
		// After "pid (comm)": state is field 0, utime 11 and stime 12.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + s
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// pdfWorkers reads quire_pdf_workers from /metrics.
func pdfWorkers(t *testing.T, in *instance) int {
	t.Helper()
	st, b := in.get("/metrics")
	m := regexp.MustCompile(`(?m)^quire_pdf_workers (\S+)$`).FindSubmatch(b)
	if st != 200 || m == nil {
		t.Fatalf("/metrics: %d, no quire_pdf_workers", st)
	}
	n, _ := strconv.ParseFloat(string(m[1]), 64)
	return int(n)
}
