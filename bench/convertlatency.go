package main

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// Settings of the latency-only conversion benchmark.
const (
	latencyPasses = 3 // measured passes over the corpus, after one warm-up pass
	// latencyBaselineEnv names another quire binary (an earlier main,
	// built by hand) that the part measures beside bin/quire, the two
	// servers taking each document in turn, so that both see the same
	// load on a shared machine.
	latencyBaselineEnv = "BENCH_BASELINE_QUIRE"
)

// latencyTarget is one server measured by convertLatency.
type latencyTarget struct {
	name    string
	q       *process
	target  string
	key     string
	timings []convertTiming
	failed  []string
	cpu     time.Duration // the server process's CPU time over the measured passes (not its workers')
}

// convertLatency is the latency pass of convertBenchmark alone (issue
// #31's overhead goal): one client, each corpus document in turn, a
// few minutes instead of the half hour of the whole part. With
// BENCH_BASELINE_QUIRE set, that binary is measured too, alternated
// document by document with bin/quire.
func convertLatency() result {
	const title = "DOCX to PDF conversion overhead, latency only (POST /v1/convert)"
	docs, err := readCorpus(convertCorpus)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	bins := []struct{ name, bin string }{{"bin/quire", quireBinary()}}
	if b := os.Getenv(latencyBaselineEnv); b != "" {
		bins = append(bins, struct{ name, bin string }{b, b})
	}
	var targets []*latencyTarget
	defer func() {
		for _, t := range targets {
			t.q.stop()
		}
	}()
	engines := map[string]string{}
	for _, b := range bins {
		q := startQuireBin(b.bin, fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1")
		targets = append(targets, &latencyTarget{name: b.name, q: q, target: q.url + "/v1/convert?from=docx", key: createKeyWith(q)})
		if engines, err = waitWorkers(q.url, convertWorkers, workersTimeout); err != nil {
			return result{title: title, notes: fmt.Sprintf("Skipped: %s: %v.\n", b.name, err)}
		}
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	cpu0 := make([]time.Duration, len(targets))
	var paired []float64 // bin/quire's overhead less the baseline's, document by document
	for pass := range latencyPasses + 1 {
		if pass == 1 {
			for i, t := range targets {
				cpu0[i] = cpuTime(t.q.cmd.Process.Pid)
			}
		}
		for i, d := range docs {
			over := map[*latencyTarget]float64{} // each target's overhead on d
			for _, t := range inTurn(targets, pass+i) {
				tm, _, err := convertOnce(client, t.target, t.key, d)
				switch {
				case pass == 0: // warm-up
				case err != nil:
					t.failed = append(t.failed, fmt.Sprintf("`%s` (%v)", d.name, err))
				default:
					t.timings = append(t.timings, tm)
					over[t] = tm.wall - tm.engine
				}
			}
			if len(over) == 2 {
				paired = append(paired, over[targets[0]]-over[targets[1]])
			}
		}
	}
	for i, t := range targets {
		t.cpu = cpuTime(t.q.cmd.Process.Pid) - cpu0[i]
	}
	var tb strings.Builder
	tb.WriteString("| binary | conversions | engine median ms | server `total` median ms | overhead (wall - engine) median ms | overhead / engine at the median | summed | server CPU ms per conversion | failures |\n|---|---|---|---|---|---|---|---|---|\n")
	var figs []figure
	for _, t := range targets {
		var engine, total, over []float64
		for _, tm := range t.timings {
			engine, total, over = append(engine, tm.engine), append(total, tm.total), append(over, tm.wall-tm.engine)
		}
		fmt.Fprintf(&tb, "| %s | %d | %.1f | %.1f | %.2f | %.1f%% | %.1f%% | %.2f | %d |\n", t.name, len(t.timings),
			percentile(engine, 50), percentile(total, 50), percentile(over, 50),
			100*percentile(over, 50)/percentile(engine, 50), 100*sum(over)/sum(engine),
			ms(t.cpu)/float64(max(1, len(t.timings)+len(t.failed))), len(t.failed))
		ratio := 100 * percentile(over, 50) / percentile(engine, 50)
		figs = append(figs, goalFigure(fmt.Sprintf("%s: service overhead (wall - engine) over engine time, at the median", t.name),
			fmt.Sprintf("at most %.0f%%", goalOverheadPct),
			fmt.Sprintf("%.1f%% (%.2f ms / %.1f ms)", ratio, percentile(over, 50), percentile(engine, 50)), ratio <= goalOverheadPct))
	}
	if len(paired) > 0 {
		figs = append(figs, infoFigure(fmt.Sprintf("bin/quire's overhead less %s's, paired document by document: median (quartiles)", targets[1].name),
			fmt.Sprintf("%+.2f ms (%+.2f to %+.2f ms, %d pairs)", percentile(paired, 50), percentile(paired, 25), percentile(paired, 75), len(paired))))
	}
	var n strings.Builder
	fmt.Fprintf(&n, "LibreOffice %s, QUIRE_CONVERT_WORKERS=%d. One client; %d passes over the %d DOCX files of `%s` after one "+
		"unmeasured warm-up pass; medians over every conversion. The server's CPU time (user and system, from /proc, its worker "+
		"processes not counted) is the service's own work, with the server's background work over the run (about 2%% of a core when idle), "+
		"so a run that a loaded machine makes longer adds some to it. The goal (issue #31): overhead at most %.0f%% of engine time at the median.",
		engines["libreoffice"], convertWorkers, latencyPasses, len(docs), convertCorpus, goalOverheadPct)
	if len(targets) > 1 {
		n.WriteString(" The binaries ran side by side, each document sent to one then the other (each first every other time), so both saw the same load;" +
			" the paired figure compares the two conversions of each document, which a change in the machine's load between documents does not move.")
	}
	for _, t := range targets {
		if len(t.failed) > 0 {
			fmt.Fprintf(&n, " %s did not convert: %s.", t.name, strings.Join(t.failed, ", "))
		}
	}
	n.WriteString("\n")
	return result{title: title, table: tb.String(), notes: n.String(), figures: figs}
}

// inTurn returns the targets in the order of turn n (a pass and a
// document): each goes first every other turn, and a document's turns
// alternate from pass to pass, since going first or second
// changes a conversion's times whichever binary serves it
// (bench/RESULTS.md).
func inTurn(targets []*latencyTarget, n int) []*latencyTarget {
	if n%2 == 0 {
		return targets
	}
	turned := slices.Clone(targets)
	slices.Reverse(turned)
	return turned
}

// createKeyWith issues a key with q's own binary's operator CLI.
func createKeyWith(q *process) string {
	return operatorBin(q.bin, []string{"QUIRE_DATA_DIR=" + q.data}, "keys", "create", "--email", "bench@example.com")
}
