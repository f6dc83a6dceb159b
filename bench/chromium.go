package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Settings of the Chromium benchmark.
const (
	chromiumWarm   = 30 // pages printed through quire, measured
	chromiumCold   = 5  // pages printed by a cold chromium --print-to-pdf
	chromiumGoal   = 15.0
	chromiumBinary = "/usr/bin/chromium"
)

// benchPage is a page of the kind people print: headings, a grid, a
// table and some paragraphs, about two A4 pages.
var benchPage = func() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body { font-family: sans-serif } .grid { display: grid; grid-template-columns: 1fr 1fr; gap: 1em }
table { border-collapse: collapse } td, th { border: 1px solid #999; padding: 2px 6px }</style></head><body>
<h1>Quarterly report</h1><div class="grid"><div><h2>Left</h2><p>Revenue grew.</p></div><div><h2>Right</h2><p>Costs fell.</p></div></div>
<table><tr><th>Item</th><th>Q1</th><th>Q2</th></tr>`)
	for i := range 40 {
		fmt.Fprintf(&b, "<tr><td>Item %d</td><td>%d</td><td>%d</td></tr>", i, i*13%97, i*29%89)
	}
	b.WriteString("</table>")
	for i := range 20 {
		fmt.Fprintf(&b, "<p>Paragraph %d. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>", i)
	}
	b.WriteString("</body></html>")
	return b.String()
}()

// chromiumBenchmark compares printing a page through quire's warm
// Chromium pool (POST /v1/convert?from=html) with a cold
// `chromium --headless --print-to-pdf` of the same page, in one run.
func chromiumBenchmark() result {
	const title = "HTML to PDF with Chromium (POST /v1/convert?from=html)"
	if _, err := os.Stat(chromiumBinary); err != nil {
		return result{title: title, notes: "Skipped: " + chromiumBinary + " is missing (apt-get install chromium).\n"}
	}
	q := startQuire("QUIRE_CONVERT_WORKERS=-1", "QUIRE_CHROMIUM_WORKERS=1", "QUIRE_CHROMIUM_MAX_JOBS=-1")
	if _, err := waitCheck(q.url, "chromium", "1/1 browsers ready", workersTimeout); err != nil {
		q.stop()
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	key := createKey(q.data)
	target := q.url + "/v1/convert?from=html"
	client := &http.Client{Timeout: 5 * time.Minute}
	page := uploadOf("report.html", []byte(benchPage))
	convertOnce(client, target, key, page) // warm-up, not measured
	var wall, total, engine []float64
	var failures int
	cpu0 := treeCPU(q.cmd.Process.Pid)
	for range chromiumWarm {
		t, _, err := convertOnce(client, target, key, page)
		if err != nil {
			failures++
			continue
		}
		wall, total, engine = append(wall, t.wall), append(total, t.total), append(engine, t.engine)
	}
	cpuPerPrint := (treeCPU(q.cmd.Process.Pid) - cpu0) / chromiumWarm
	q.stop() // the cold baseline gets the machine to itself
	cold, coldErr := coldPrints(chromiumCold)

	var tb strings.Builder
	tb.WriteString("| measurement | pages | median ms | p95 ms |\n|---|---|---|---|\n")
	line := func(name string, v []float64) {
		if len(v) == 0 {
			fmt.Fprintf(&tb, "| %s | 0 | - | - |\n", name)
			return
		}
		fmt.Fprintf(&tb, "| %s | %d | %.1f | %.1f |\n", name, len(v), percentile(v, 50), percentile(v, 95))
	}
	line("quire, wall latency, 1 client", wall)
	line("quire, the pool's time (Server-Timing `total`: checks, queue, engine)", total)
	line("quire, engine time (Server-Timing `engine`)", engine)
	line("cold `chromium --headless --print-to-pdf`", cold)
	var n strings.Builder
	fmt.Fprintf(&n, "`bin/quire serve` with QUIRE_CHROMIUM_WORKERS=1 (LibreOffice off); the page (%d bytes: a grid, a 40-row table, "+
		"20 paragraphs, two A4 pages) printed %d times by one client after one unmeasured print, one after the other in the browser's shared tab (scripts off); "+
		"then, with quire stopped, %d cold runs of `%s --headless --no-sandbox --disable-gpu --print-to-pdf` of the same page "+
		"from a file, each with a new profile directory. Percentiles are nearest-rank.", len(benchPage), chromiumWarm, chromiumCold, chromiumBinary)
	if failures > 0 {
		fmt.Fprintf(&n, " %d prints through quire failed.", failures)
	}
	if coldErr != nil {
		fmt.Fprintf(&n, " Cold runs failed: %v.", coldErr)
	}
	var figs []figure
	if len(wall) > 0 && len(cold) > 0 {
		ratio := percentile(cold, 50) / percentile(wall, 50)
		figs = append(figs,
			goalFigure("cold `chromium --print-to-pdf` median over quire's median", fmt.Sprintf("at least %.0fx", chromiumGoal),
				fmt.Sprintf("%.0f ms / %.1f ms = %.1fx", percentile(cold, 50), percentile(wall, 50), ratio), ratio >= chromiumGoal),
			infoFigure("CPU per print, quire and its browser's processes", fmt.Sprintf("%.0f ms", ms(cpuPerPrint))))
		fmt.Fprintf(&n, "\n\nCold median / quire median: **%.1fx** (goal: at least %.0fx): %s.", ratio, chromiumGoal, yesNo(ratio >= chromiumGoal))
		fmt.Fprintf(&n, "\n\nCPU per print, quire and its browser's processes (each page's load and print "+
			"in the shared tab's renderer): %.0f ms. Back to back on %d cores, prints cannot follow each other "+
			"faster on average than that spread over the cores, %.0f ms: about %.1fx this run's cold median at most.",
			ms(cpuPerPrint), runtime.NumCPU(), ms(cpuPerPrint)/float64(runtime.NumCPU()),
			percentile(cold, 50)/(ms(cpuPerPrint)/float64(runtime.NumCPU())))
	}
	n.WriteString("\n")
	return result{title: title, table: tb.String(), notes: n.String(), figures: figs}
}

// coldPrints prints benchPage n times with a cold Chromium, and returns
// each run's time in ms.
func coldPrints(n int) ([]float64, error) {
	dir, err := os.MkdirTemp("", "quire-bench-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "report.html")
	if err := os.WriteFile(src, []byte(benchPage), 0o600); err != nil {
		return nil, err
	}
	var times []float64
	for i := range n {
		out := filepath.Join(dir, fmt.Sprintf("out-%d.pdf", i))
		t0 := time.Now()
		cmd := exec.Command(chromiumBinary, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir="+filepath.Join(dir, fmt.Sprintf("profile-%d", i)), "--no-pdf-header-footer", "--print-to-pdf="+out, "file://"+src)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return times, fmt.Errorf("%v: %s", err, msg)
		}
		if _, err := os.Stat(out); err != nil {
			return times, err
		}
		times = append(times, float64(time.Since(t0).Microseconds())/1000)
	}
	return times, nil
}
