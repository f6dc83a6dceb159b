package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// Goals of issue #41 for two tenants, on each engine.
const (
	goalShareSlowdown = 3.0  // B's p50 beside A's flood / alone, at most
	goalShareCostPct  = 10.0 // A's throughput alone lost against main's, at most
)

// shareEngine is one engine of the two-tenants benchmark: the server's
// settings that give it 2 workers, how to know they are ready, where to
// send a document, and A's large and B's small document.
type shareEngine struct {
	name         string
	env          []string
	ready        func(url string) error
	path         string
	large, small docxFile
}

func shareEngines() []shareEngine {
	return []shareEngine{
		{name: "LibreOffice (DOCX)",
			env:   []string{fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1"},
			ready: func(url string) error { _, err := waitWorkers(url, convertWorkers, workersTimeout); return err },
			path:  "/v1/convert?from=docx",
			large: uploadOf("large.docx", convtest.DOCX(46)), small: uploadOf("small.docx", convtest.DOCX(1))},
		{name: "Chromium (HTML)",
			env: []string{"QUIRE_CONVERT_WORKERS=1", fmt.Sprintf("QUIRE_CHROMIUM_WORKERS=%d", convertWorkers), "QUIRE_CHROMIUM_MAX_JOBS=-1"},
			ready: func(url string) error {
				_, err := waitCheck(url, "chromium", fmt.Sprintf("%d/%d browsers ready", convertWorkers, convertWorkers), workersTimeout)
				return err
			},
			path:  "/v1/convert?from=html",
			large: uploadOf("large.html", []byte(strings.Repeat(benchPage, 15))), small: uploadOf("small.html", []byte("<p>Quiet</p>"))},
	}
}

// twoTenantsBenchmark is issue #41's noisy neighbour on each engine, on a
// real server with 2 workers of it: key B converts a small document one
// request at a time, alone and while key A keeps 8 conversions of a large
// one in flight; and A's throughput alone on the tree against main's.
func twoTenantsBenchmark() result {
	const title = "Two tenants on each engine: one key's flood beside another key (POST /v1/convert)"
	var tb, notes strings.Builder
	tb.WriteString("| engine | B's p50 alone | B's p50 beside A's flood | slowdown (goal: at most 3x) | A alone, tree | A alone, main | A's loss against main (goal: at most 10%) |\n|---|---|---|---|---|---|---|\n")
	var figs []figure
	for _, e := range shareEngines() {
		row, note, f := shareOn(e)
		tb.WriteString(row)
		notes.WriteString(note)
		figs = append(figs, f...)
	}
	return result{title: title, table: tb.String(), figures: figs, notes: fmt.Sprintf("Each engine in one run, 2 workers: B sends %d conversions one after the other, "+
		"alone and beside A's flood of %d in flight (A's large document: the 46-page DOCX; for Chromium, a 30-page HTML report). "+
		"A's throughput alone is measured on the tree and on main (%s) taking turns, %d rounds of %s each; the loss is the median of "+
		"the rounds' ratios.%s\n", tenantsSamples, tenantsFlood, mainBeforeEngines, tenantsRounds, tenantsAlone, notes.String())}
}

// shareOn measures engine e: its table row, a note on its rounds and its
// figures for the results page.
func shareOn(e shareEngine) (row, note string, figs []figure) {
	q := startQuire(e.env...)
	defer q.stop()
	if err := e.ready(q.url); err != nil {
		return fmt.Sprintf("| %s | not measured: %v |\n", e.name, err), "", nil
	}
	keyA, keyB := createKeyFor(q.data, "tenant-a@example.com"), createKeyFor(q.data, "tenant-b@example.com")
	target := q.url + e.path
	client := &http.Client{Timeout: 5 * time.Minute}
	for _, d := range []docxFile{e.large, e.small} { // warm-up, not measured
		convertOnce(client, target, keyA, d)
		convertOnce(client, target, keyB, d)
	}
	bAlone, failAlone := tenantLatencies(client, target, keyB, e.small)
	var bBeside []float64
	var failBeside int
	floodFor(target, keyA, e.large, 0, func() { bBeside, failBeside = tenantLatencies(client, target, keyB, e.small) })
	p50Alone, p50Beside := percentile(bAlone, 50), percentile(bBeside, 50)
	slowdown := p50Beside / p50Alone

	var trees, mains []flood
	base, err := baselineBinary(mainBeforeEngines)
	mainTarget, mainKey := "", ""
	if err == nil {
		m := startQuireBin(base, e.env...)
		defer m.stop()
		if err = e.ready(m.url); err == nil {
			mainTarget, mainKey = m.url+e.path, m.keyOf("tenant-a@example.com")
			convertOnce(client, mainTarget, mainKey, e.large) // warm-up
		}
	}
	for range tenantsRounds {
		trees = append(trees, floodFor(target, keyA, e.large, tenantsAlone, nil))
		if mainTarget != "" {
			mains = append(mains, floodFor(mainTarget, mainKey, e.large, tenantsAlone, nil))
		}
	}
	tree := medianFlood(trees)
	cost := "not measured: " + fmt.Sprint(err)
	mainRate := "-"
	if err == nil {
		median := percentileLoss(trees, mains)
		cost = fmt.Sprintf("%+.1f%% %s", median, yesNo(median <= goalShareCostPct))
		m := medianFlood(mains)
		mainRate = fmt.Sprintf("%.2f/s (%d failed)", m.rate, m.failed)
		note = fmt.Sprintf(" %s rounds, documents/s:%s;%s.", e.name, roundRates("tree", trees), roundRates(mainBeforeEngines, mains))
	}
	row = fmt.Sprintf("| %s | %.1f ms (%d failed) | %.1f ms (%d failed) | %.1fx %s | %.2f/s (%d failed) | %s | %s |\n", e.name,
		p50Alone, failAlone, p50Beside, failBeside, slowdown, yesNo(slowdown <= goalShareSlowdown), tree.rate, tree.failed, mainRate, cost)
	fmt.Fprint(os.Stderr, row)
	figs = append(figs, goalFigure(e.name+": B's p50 beside A's 8-deep flood over alone", "at most 3x",
		fmt.Sprintf("%.1f ms / %.1f ms = %.1fx", p50Beside, p50Alone, slowdown), slowdown <= goalShareSlowdown))
	if err == nil {
		figs = append(figs, goalFigure(e.name+": A's throughput alone lost against "+mainBeforeEngines, "at most 10%",
			fmt.Sprintf("%.2f/s against %s", tree.rate, cost), percentileLoss(trees, mains) <= goalShareCostPct))
	}
	return row, note, figs
}

// percentileLoss is the median of the rounds' throughput lost by trees
// against mains, in percent.
func percentileLoss(trees, mains []flood) float64 {
	lost := make([]float64, len(trees))
	for i := range trees {
		lost[i] = 100 * (mains[i].rate - trees[i].rate) / mains[i].rate
	}
	return percentile(lost, 50)
}
