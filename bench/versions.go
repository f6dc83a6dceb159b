package main

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// The DOCX conversion of the LibreOffice installed against an older one
// (Debian 12's 7.4, which bench/lo74 extracts beside it), in one run: a
// figure recorded on another day, on a machine under another load, says
// nothing about which engine is faster. Both servers run side by side,
// one worker each, and one client converts the corpus on each in turn,
// the order swapped every round, so that a burst of load from elsewhere
// falls on both.

// oldLibreOfficeEnv names the older LibreOffice's program directory.
const oldLibreOfficeEnv = "QUIRE_BENCH_LIBREOFFICE_OLD"

const (
	versionRounds = 8   // measured passes over the corpus on each version, after a warm-up pass
	goalVersions  = 1.0 // the installed version's median / the older one's, at most
)

// engineVersion is one server of the comparison and what it measured.
type engineVersion struct {
	version     string // as /v1/health names it
	q           *process
	key, target string
	// engine and wall are the milliseconds of each round (first index)
	// and document (second, in corpus order); NaN where it failed.
	engine, wall [][]float64
	// cpu is the worker's CPU milliseconds (user and system, from /proc,
	// in ticks of 10 ms) from before each request to its answer, by
	// round and document; NaN where the worker was replaced.
	cpu      [][]float64
	failed   map[string]string // document -> the last error
	pdfs     map[string][]byte // the last PDF of each document
	counters string
}

// convertVersionsBenchmark compares the installed LibreOffice with the
// one in $QUIRE_BENCH_LIBREOFFICE_OLD on the DOCX corpus: speed (engine
// and wall time, one client) and the page-count agreement with Word.
func convertVersionsBenchmark() result {
	const title = "DOCX to PDF conversion: installed LibreOffice against an older one, alternated in one run"
	old := os.Getenv(oldLibreOfficeEnv)
	if old == "" {
		return result{title: title, notes: fmt.Sprintf("Skipped: %s is not set. Get Debian 12's LibreOffice 7.4 beside the installed one "+
			"with `bench/lo74 /opt/libreoffice-7.4`, then run `%s=/opt/libreoffice-7.4/usr/lib/libreoffice/program go run ./bench convert-versions`.\n",
			oldLibreOfficeEnv, oldLibreOfficeEnv)}
	}
	if _, err := os.Stat(filepath.Join(old, "libmergedlo.so")); err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %s=%s holds no libmergedlo.so (%v); `bench/lo74 DIR` extracts 7.4 into DIR.\n", oldLibreOfficeEnv, old, err)}
	}
	docs, err := readCorpus(convertCorpus)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	load0 := loadAverage()
	settings := []string{"QUIRE_CONVERT_WORKERS=1", "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1"}
	installed := &engineVersion{q: startQuire(settings...)}
	older := &engineVersion{q: startQuire(append(settings, "QUIRE_LIBREOFFICE_DIR="+old, "LD_LIBRARY_PATH="+libraryPath(old))...)}
	versions := []*engineVersion{installed, older}
	defer func() {
		for _, v := range versions {
			v.q.stop()
		}
	}()
	for _, v := range versions {
		engines, err := waitWorkers(v.q.url, 1, workersTimeout)
		if err != nil {
			return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
		}
		v.version, v.key = engines["libreoffice"], createKey(v.q.data)
		v.target, v.failed, v.pdfs = v.q.url+"/v1/convert?from=docx", map[string]string{}, map[string][]byte{}
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	t0 := time.Now()
	for _, v := range versions { // warm-up pass, not measured
		v.pass(client, docs)
		v.engine, v.wall, v.cpu = nil, nil, nil
	}
	for round := range versionRounds {
		order := versions
		if round%2 == 1 {
			order = []*engineVersion{older, installed}
		}
		for _, v := range order {
			v.pass(client, docs)
		}
	}
	elapsed := time.Since(t0)
	for _, v := range versions {
		v.counters = engineCounters(v.q.url)
	}
	return versionsResult(title, docs, installed, older, old, load0, elapsed)
}

// pass converts every document once, and records its times in a new round.
func (v *engineVersion) pass(client *http.Client, docs []docxFile) {
	engine, wall, cpu := make([]float64, len(docs)), make([]float64, len(docs)), make([]float64, len(docs))
	worker := workerPID(v.q.cmd.Process.Pid)
	for i, d := range docs {
		cpu0 := cpuTime(worker)
		t, pdf, err := convertOnce(client, v.target, v.key, d)
		cpu[i] = math.NaN()
		if now := workerPID(v.q.cmd.Process.Pid); now != 0 && now == worker {
			cpu[i] = ms(cpuTime(worker) - cpu0)
		} else {
			worker = now
		}
		if err != nil {
			engine[i], wall[i] = math.NaN(), math.NaN()
			v.failed[d.name] = err.Error()
			continue
		}
		engine[i], wall[i], v.pdfs[d.name] = t.engine, t.wall, pdf
	}
	v.engine, v.wall, v.cpu = append(v.engine, engine), append(v.wall, wall), append(v.cpu, cpu)
}

// perPass is the sum of each round, NaN where one of its values is.
func perPass(rounds [][]float64) []float64 {
	out := make([]float64, len(rounds))
	for r, round := range rounds {
		for _, x := range round {
			out[r] += x
		}
	}
	return out
}

// perDocument is each document's mean over the rounds that have it, which
// averages the CPU clock's 10 ms ticks out.
func perDocument(rounds [][]float64) []float64 {
	out := make([]float64, len(rounds[0]))
	for i := range out {
		var sum, n float64
		for _, round := range rounds {
			if !math.IsNaN(round[i]) {
				sum, n = sum+round[i], n+1
			}
		}
		out[i] = sum / n // NaN if no round has it
	}
	return out
}

// measured is every time of rounds but the failures, and the number of
// failures.
func measured(rounds ...[]float64) ([]float64, int) {
	var out []float64
	failures := 0
	for _, r := range rounds {
		for _, t := range r {
			if math.IsNaN(t) {
				failures++
				continue
			}
			out = append(out, t)
		}
	}
	return out, failures
}

// difference is a-b, round by round and document by document.
func difference(a, b [][]float64) [][]float64 {
	out := make([][]float64, len(a))
	for r := range a {
		out[r] = make([]float64, len(a[r]))
		for i := range a[r] {
			out[r][i] = a[r][i] - b[r][i]
		}
	}
	return out
}

// pairedRatios is a/b for each document in each round that both
// converted: the same document, minutes apart at most.
func pairedRatios(a, b [][]float64) []float64 {
	var out []float64
	for r := range a {
		for i := range a[r] {
			if x, y := a[r][i], b[r][i]; !math.IsNaN(x) && !math.IsNaN(y) && y > 0 {
				out = append(out, x/y)
			}
		}
	}
	return out
}

func versionsResult(title string, docs []docxFile, installed, older *engineVersion, old, load0 string, elapsed time.Duration) result {
	var n strings.Builder
	fmt.Fprintf(&n, "Two `bin/quire serve`, side by side, each with QUIRE_CONVERT_WORKERS=1 (and worker recycling off, QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1): "+
		"one on the installed LibreOffice %s, one on LibreOffice %s from `%s` (QUIRE_LIBREOFFICE_DIR, with LD_LIBRARY_PATH=%s for its own libraries; "+
		"`/v1/health` names both versions). One client converts the %d DOCX files of `%s` (POST /v1/convert?from=docx) once on each as a warm-up, "+
		"then %d rounds of one pass over the corpus on each version, in turn, the order swapped every round (%s first in the first round), so that "+
		"load from elsewhere falls on both. Engine time is the worker's own (`Server-Timing` `engine`), wall time the client's; "+
		"medians and p95 (nearest-rank) are over every conversion of the measured rounds. The run took %s; load average %s at its start, %s at its end.\n\n",
		installed.version, older.version, old, libraryPath(old), len(docs), convertCorpus, versionRounds, installed.version,
		elapsed.Round(time.Second), load0, loadAverage())
	agree := versionsFidelity(&n, docs, installed, older)
	figs := versionsGoals(installed, older, agree)
	n.WriteString(goalsTable(figs) + "\n")
	for _, v := range []*engineVersion{installed, older} {
		fmt.Fprintf(&n, "Engine counters of %s (warm-up and rounds): %s.", v.version, v.counters)
		if len(v.failed) > 0 {
			var f []string
			for _, name := range slices.Sorted(maps.Keys(v.failed)) {
				f = append(f, fmt.Sprintf("`%s` (%s)", name, v.failed[name]))
			}
			fmt.Fprintf(&n, " Failed: %s.", strings.Join(f, ", "))
		}
		n.WriteString(" ")
	}
	n.WriteString("The machine is shared and the client runs on it too.\n")
	return result{title: title, table: versionsTable(installed, older), notes: n.String(), figures: figs}
}

// versionsTable is each version's times.
func versionsTable(versions ...*engineVersion) string {
	var tb strings.Builder
	tb.WriteString("| engine | conversions | engine median ms | engine p95 ms | wall median ms | wall p95 ms | wall - engine median ms | " +
		"worker CPU median ms per document | worker CPU s per pass | PDF MB of a pass | failures |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, v := range versions {
		engine, failures := measured(v.engine...)
		wall, _ := measured(v.wall...)
		over, _ := measured(difference(v.wall, v.engine)...)
		cpuDoc, _ := measured(perDocument(v.cpu))
		cpuPass, _ := measured(perPass(v.cpu))
		pdfBytes := 0
		for _, pdf := range v.pdfs {
			pdfBytes += len(pdf)
		}
		fmt.Fprintf(&tb, "| LibreOffice %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %d |\n", v.version, len(engine),
			percentile(engine, 50), percentile(engine, 95), percentile(wall, 50), percentile(wall, 95), percentile(over, 50),
			percentile(cpuDoc, 50), percentile(cpuPass, 50)/1000, float64(pdfBytes)/1e6, failures)
	}
	return tb.String()
}

// versionsFidelity writes each version's page-count agreement with Word
// (pageAgreement, as the fidelity part) and returns them.
func versionsFidelity(n *strings.Builder, docs []docxFile, versions ...*engineVersion) map[*engineVersion]agreement {
	n.WriteString("Fidelity, each version's last PDF of each Word-saved document (as the `fidelity` part counts it):\n\n" + agreementHead)
	agree := map[*engineVersion]agreement{}
	for _, v := range versions {
		agree[v] = pageAgreement(docs, v.pdfs)
		n.WriteString(agree[v].row(v.version))
	}
	n.WriteString("\n")
	for _, v := range versions {
		fmt.Fprintf(n, "Page counts that differ from Word's on %s: %s.\n\n", v.version, orNone(agree[v].differ))
	}
	return agree
}

// versionsGoals gives the goal of the issue, the installed version no
// slower than the older at the median, in each measure.
func versionsGoals(installed, older *engineVersion, agree map[*engineVersion]agreement) []figure {
	a, b := installed.version, older.version
	ratio := func(x, y [][]float64) (float64, float64, float64) {
		mx, _ := measured(x...)
		my, _ := measured(y...)
		return percentile(mx, 50), percentile(my, 50), percentile(mx, 50) / percentile(my, 50)
	}
	goal := fmt.Sprintf("at most %.2f", goalVersions)
	x, y, r := ratio(installed.engine, older.engine)
	figs := []figure{
		goalFigure(fmt.Sprintf("%s over %s, engine time at the median (#27)", a, b), goal, fmt.Sprintf("%.1f ms / %.1f ms = %.2f", x, y, r), r <= goalVersions),
		infoFigure("the same, round by round (engine medians)", roundList(roundRatios(installed.engine, older.engine))),
	}
	x, y, r = ratio(installed.wall, older.wall)
	figs = append(figs, goalFigure("the same, wall time", goal, fmt.Sprintf("%.1f ms / %.1f ms = %.2f", x, y, r), r <= goalVersions))
	paired, pairedWall := percentile(pairedRatios(installed.engine, older.engine), 50), percentile(pairedRatios(installed.wall, older.wall), 50)
	figs = append(figs, goalFigure("the same, paired (median over documents and rounds of the same document's ratio), engine time", goal,
		fmt.Sprintf("%.2f (wall %.2f)", paired, pairedWall), paired <= goalVersions))
	cpuA, cpuB := [][]float64{perDocument(installed.cpu)}, [][]float64{perDocument(older.cpu)}
	x, y, r = ratio(cpuA, cpuB)
	cpuPaired := percentile(pairedRatios(cpuA, cpuB), 50)
	figs = append(figs, goalFigure("the same, in the worker's CPU time (/proc), which waiting for a core does not lengthen", goal,
		fmt.Sprintf("%.1f ms / %.1f ms = %.2f; paired %.2f", x, y, r, cpuPaired), r <= goalVersions))
	passRatios := pairedRatios([][]float64{perPass(installed.cpu)}, [][]float64{perPass(older.cpu)})
	return append(figs,
		infoFigure("the worker's CPU time for a whole pass, round by round", fmt.Sprintf("%s (median %.2f)", roundList(passRatios), percentile(passRatios, 50))),
		infoFigure("PDF page count equal to Word's", fmt.Sprintf("%s: %d of %d; %s: %d of %d", a, agree[installed].equal, agree[installed].documents,
			b, agree[older].equal, agree[older].documents)))
}

// roundRatios is, for each round, the median of a's times over
// the median of b's.
func roundRatios(a, b [][]float64) []float64 {
	var out []float64
	for r := range a {
		x, _ := measured(a[r])
		y, _ := measured(b[r])
		out = append(out, percentile(x, 50)/percentile(y, 50))
	}
	return out
}

func roundList(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.2f", x)
	}
	return strings.Join(s, ", ")
}

// workerPID is the process of the server's one conversion worker (the
// quire program in its convert-worker mode), 0 if there is none.
func workerPID(server int) int {
	if pids := workerPIDs(server); len(pids) > 0 {
		return pids[0]
	}
	return 0
}

// workerPIDs are the processes of the server's conversion workers.
func workerPIDs(server int) []int {
	var pids []int
	for _, pid := range engine.ProcessTree(server)[1:] {
		if cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Contains(cmd, []byte("convert-worker")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// workersCPU is the CPU time the server's conversion workers have used.
func workersCPU(server int) time.Duration {
	var t time.Duration
	for _, pid := range workerPIDs(server) {
		t += cpuTime(pid)
	}
	return t
}

// libraryPath is LD_LIBRARY_PATH for a LibreOffice whose program
// directory is programDir: that directory first (its libraries find each
// other there), then, for Debian packages extracted beside it
// (bench/lo74), their usr/lib/TRIPLET, which holds the libraries the
// installed system lacks.
func libraryPath(programDir string) string {
	dirs := []string{programDir}
	if extra, _ := filepath.Glob(filepath.Join(programDir, "..", "..", "*-linux-gnu")); len(extra) > 0 {
		dirs = append(dirs, extra...)
	}
	return strings.Join(dirs, ":")
}

// loadAverage is the 1, 5 and 15 minute load averages, as uptime prints them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}
