package chromium

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// largePage is an HTML page of 134 A4 pages: a report of sections, each
// on a page of its own, of paragraphs and a small table.
func largePage() Page {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><style>
section { page-break-after: always } td { border: 1px solid #888; padding: 2px 4px }
</style></head><body>`)
	for s := range 134 {
		fmt.Fprintf(&b, "<section><h2>Section %d</h2>", s+1)
		for p := range 6 {
			fmt.Fprintf(&b, "<p>Paragraph %d of section %d. The quarter's figures are in the table below; the notes explain each line, "+
				"and the appendix lists the sources and the methods used to gather them, as in every report of this kind.</p>", p+1, s+1)
		}
		b.WriteString("<table>")
		for r := range 5 {
			fmt.Fprintf(&b, "<tr><td>Line %d</td><td>%d</td><td>%d</td></tr>", r+1, r*37%101, r*53%97)
		}
		b.WriteString("</table></section>")
	}
	b.WriteString("</body></html>")
	return html(b.String())
}

// pdfPages counts the pages of pdf with pdfinfo (poppler-utils).
func pdfPages(t *testing.T, pdf []byte) int {
	t.Helper()
	if _, err := exec.LookPath("pdfinfo"); err != nil {
		t.Fatal("pdfinfo is missing: apt-get install poppler-utils")
	}
	cmd := exec.Command("pdfinfo", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(line, "Pages:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatalf("pdfinfo printed no page count:\n%s", out)
	return 0
}

// TestFourLargePagesAtOnce: four copies of a 134-page page, sent at once
// by one key to two browsers with the service's memory settings, all
// print: a page is charged what its print takes, not what the browser
// held before it (the renderer of the shared tab, where the same key's
// pages print one after the other, keeps what the page before left).
func TestFourLargePagesAtOnce(t *testing.T) {
	p := newPool(t, 2, func(o *Options) {
		o.MaxWorkerMemory, o.MaxWorkerRSS = 1<<30, (1<<30)*2/3
		o.JobTimeout = 10 * time.Minute // the time limit is not what is tested, and a loaded machine is slow
	})
	page := largePage()
	ctx := quire.WithTenant(context.Background(), "A")
	var wg sync.WaitGroup
	results := make([]engine.Result, 4)
	errs := make([]error, 4)
	for i := range 4 {
		wg.Go(func() { results[i], errs[i] = p.Convert(ctx, page, engine.JobOptions{}) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("copy %d: %v", i+1, err)
			continue
		}
		if n := pdfPages(t, results[i].Output); n != 134 {
			t.Errorf("copy %d: %d pages, want 134", i+1, n)
		}
	}
	if c := p.Status().Counters; c.OverMemory != 0 {
		t.Errorf("counters %+v: a browser went over its memory bound", c)
	}
}

// TestQuietKeyBesideFlood: key A keeps 6 prints of the 134-page page in
// flight on 2 browsers while key B prints a 1-page page, one after the
// other. B's prints never wait for one of A's: while B is active A holds
// one browser, so each of B's pages finds the other free. Each B page is
// sent only once A has a page waiting (A's flood is fully queued), and
// the number of A's prints that ended while B's print was on its way is
// counted: B waiting for one of A's would take the end of one (A's
// prints take seconds, B's milliseconds), which, as B's own print is
// short, happens by chance to a few of B's at most.
func TestQuietKeyBesideFlood(t *testing.T) {
	p := newPool(t, 2, func(o *Options) { o.JobTimeout = 10 * time.Minute }) // a loaded machine prints A's page slowly
	large, small := largePage(), html("<p>Quiet</p>")
	ctxA, ctxB := quire.WithTenant(t.Context(), "A"), quire.WithTenant(t.Context(), "B")
	if _, err := p.Convert(ctxA, large, engine.JobOptions{}); err != nil { // warm both keys' paths, and check A's page
		t.Fatal(err)
	}
	flood, stop := context.WithCancel(ctxA)
	var endedA atomic.Int64
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			for flood.Err() == nil {
				if _, err := p.Convert(flood, large, engine.JobOptions{}); err == nil {
					endedA.Add(1)
				}
			}
		})
	}
	defer func() { stop(); wg.Wait() }()
	waitStatus(t, p, "A's flood fills both browsers and waits", func(s engine.Status) bool { return s.Busy == 2 && s.Queued >= 2 })
	if _, err := p.Convert(ctxB, small, engine.JobOptions{}); err != nil { // B's first waits for one of A's
		t.Fatal(err)
	}
	const samples = 10
	waited := 0
	for range samples {
		before := endedA.Load()
		if _, err := p.Convert(ctxB, small, engine.JobOptions{}); err != nil {
			t.Fatal(err)
		}
		if endedA.Load() != before {
			waited++
		}
	}
	if waited > samples/2 {
		t.Errorf("%d of B's %d prints saw one of A's end on the way: B waited for A's prints", waited, samples)
	}
}

// waitStatus polls p's status until ok holds, or fails the test after a
// minute.
func waitStatus(t *testing.T, p *Pool, what string, ok func(engine.Status) bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for !ok(p.Status()) {
		select {
		case <-deadline:
			t.Fatalf("timed out waiting until %s; status %+v", what, p.Status())
		case <-tick.C:
		}
	}
}
