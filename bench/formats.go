package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// Settings of the spreadsheet and presentation benchmark.
const (
	formatRuns = 8 // measured conversions of each file, one client
	formatCold = 3 // cold soffice runs of each file
)

// formatsBenchmark measures POST /v1/convert on spreadsheets and
// presentations that the benchmark makes itself, without from (the
// format is told from the file), beside a cold soffice on the same files.
// The DOCX figures are the conversion section's.
func formatsBenchmark() result {
	const title = "Spreadsheets and presentations to PDF (POST /v1/convert)"
	files := []docxFile{
		uploadOf("table.xlsx", convtest.XLSX(120)), uploadOf("table.ods", convtest.ODS(120)), uploadOf("table.csv", convtest.CSV(120)),
		uploadOf("slides.pptx", convtest.PPTX(4)), uploadOf("slides.odp", convtest.ODP(4)),
	}
	q := startQuire(fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1")
	if _, err := waitWorkers(q.url, convertWorkers, workersTimeout); err != nil {
		q.stop()
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	key := createKey(q.data)
	target := q.url + "/v1/convert"
	client := &http.Client{Timeout: 5 * time.Minute}
	wall, engine := map[string][]float64{}, map[string][]float64{}
	var failed []string
	for _, f := range files {
		convertOnce(client, target, key, f) // warm-up, not measured
		for range formatRuns {
			t, _, err := convertOnce(client, target, key, f)
			if err != nil {
				failed = append(failed, fmt.Sprintf("`%s` (%v)", f.name, err))
				break
			}
			wall[f.name], engine[f.name] = append(wall[f.name], t.wall), append(engine[f.name], t.engine)
		}
	}
	counters := engineCounters(q.url)
	q.stop() // the cold baseline gets the machine to itself

	soffice, _ := exec.LookPath("soffice")
	var tb strings.Builder
	var figs []figure
	tb.WriteString("| file | quire wall median ms | quire wall p95 ms | engine median ms | cold soffice median ms | cold / quire |\n|---|---|---|---|---|---|\n")
	for _, f := range files {
		var cold []float64
		for range formatCold {
			if c, err := coldOnce(soffice, f); err == nil {
				cold = append(cold, c)
			}
		}
		w := wall[f.name]
		if len(w) == 0 || len(cold) == 0 {
			fmt.Fprintf(&tb, "| %s | - | - | - | - | - |\n", f.name)
			continue
		}
		fmt.Fprintf(&tb, "| %s | %.1f | %.1f | %.1f | %.0f | %.1fx |\n", f.name, percentile(w, 50), percentile(w, 95),
			percentile(engine[f.name], 50), percentile(cold, 50), percentile(cold, 50)/percentile(w, 50))
		figs = append(figs, infoFigure(f.name+": quire median (cold soffice over quire)",
			fmt.Sprintf("%.1f ms (%.1fx)", percentile(w, 50), percentile(cold, 50)/percentile(w, 50))))
	}

	var n strings.Builder
	fmt.Fprintf(&n, "Same server settings as the DOCX section (QUIRE_CONVERT_WORKERS=%d, recycling after a number of jobs off). "+
		"Files made by the benchmark (internal/libreoffice/convtest): a table of 120 rows and 3 columns as XLSX, ODS and CSV (3 pages), "+
		"and 4 slides as PPTX and ODP. One client posts each file once unmeasured, then %d times, without `from` (told from the file); "+
		"wall and engine times as in the DOCX section. Cold baseline: `soffice --convert-to pdf` with a fresh profile, %d runs per file, "+
		"with quire stopped. CSV converts in the warm workers since LibreOffice 25.2 (7.4's LibreOfficeKit had Calc's CSV import "+
		"wait for a dialog, and quire sent CSV to a one-off soffice).", convertWorkers, formatRuns, formatCold)
	if counters != "" {
		n.WriteString(" Engine counters at the end of the quire run: " + counters + ".")
	}
	if len(failed) > 0 {
		n.WriteString(" Failed: " + strings.Join(failed, ", ") + ".")
	}
	return result{title: title, table: tb.String(), notes: n.String() + "\n", figures: figs}
}
