package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// conformancePasses are the passes over the corpus, each converting
// every document once in each mode.
const conformancePasses = 2

// conformanceBenchmark measures what conformance costs: the DOCX corpus
// converted to plain PDF, to PDF/A-2b and to PDF/UA-1 in one run, the
// three modes alternated document by document so that the machine's
// noise falls on each alike.
func conformanceBenchmark() result {
	const title = "Conformance: plain PDF, PDF/A-2b and PDF/UA-1 (POST /v1/convert)"
	docs, err := readCorpus(convertCorpus)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	q := startQuire(fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1")
	defer q.stop()
	if _, err := waitWorkers(q.url, convertWorkers, workersTimeout); err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	key := createKey(q.data)
	modes := []struct{ name, query string }{
		{"plain PDF", ""}, {"PDF/A-2b", "?pdfa=PDF/A-2b"}, {"PDF/UA-1", "?pdfua=true&pdfua.decorativeImages=true"},
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	wall := make([][]float64, len(modes))
	engine := make([][]float64, len(modes))
	failed := make([]int, len(modes))
	var reasons []string
	for pass := range conformancePasses {
		for i, d := range docs {
			for k := range modes {
				m := (k + i + pass) % len(modes) // each mode first as often as the others
				t, _, err := convertOnce(client, q.url+"/v1/convert"+modes[m].query, key, d)
				if err != nil {
					failed[m]++
					if pass == 0 {
						reasons = append(reasons, fmt.Sprintf("`%s` %s (%v)", d.name, modes[m].name, err))
					}
					continue
				}
				wall[m], engine[m] = append(wall[m], t.wall), append(engine[m], t.engine)
			}
		}
	}
	var tb strings.Builder
	tb.WriteString("| output | conversions | failed | wall median ms | wall p95 ms | engine median ms | wall total s | total / plain |\n|---|---|---|---|---|---|---|---|\n")
	for m, mode := range modes {
		if len(wall[m]) == 0 {
			fmt.Fprintf(&tb, "| %s | 0 | %d | - | - | - | - | - |\n", mode.name, failed[m])
			continue
		}
		fmt.Fprintf(&tb, "| %s | %d | %d | %.1f | %.1f | %.1f | %.1f | %.2fx |\n", mode.name, len(wall[m]), failed[m],
			percentile(wall[m], 50), percentile(wall[m], 95), percentile(engine[m], 50), sum(wall[m])/1000, sum(wall[m])/sum(wall[0]))
	}
	notes := fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d, one client, %d passes over the %d DOCX of the corpus; in each pass every "+
		"document is converted once in each mode, the modes' order rotated from one document to the next. Wall: the client's time "+
		"for the request; engine: LibreOffice's own (Server-Timing), which PDF/A and PDF/UA change through the export filter's "+
		"options; the rest of the difference is quire's conformance step (internal/conform), which runs after the engine. "+
		"PDF/UA with pdfua.decorativeImages=true, so that images without alternative text are made artifacts rather than refused. "+
		"Totals are over the documents each mode converted.", convertWorkers, conformancePasses, len(docs))
	if len(reasons) > 0 {
		notes += " Failed in the first pass: " + strings.Join(reasons, ", ") + "."
	}
	var figs []figure
	for m := 1; m < len(modes); m++ {
		if len(wall[m]) > 0 && len(wall[0]) > 0 {
			figs = append(figs, infoFigure(modes[m].name+": wall total over plain PDF's (median)", fmt.Sprintf("%.2fx (%.1f ms against %.1f ms), %d failed",
				sum(wall[m])/sum(wall[0]), percentile(wall[m], 50), percentile(wall[0], 50), failed[m])))
		}
	}
	return result{title: title, table: tb.String(), notes: notes + "\n", figures: figs}
}
