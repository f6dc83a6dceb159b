package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Settings of the Gotenberg benchmark.
const (
	gotenbergPasses   = 3   // measured passes over the corpus, each route
	gotenbergPages    = 30  // HTML pages printed, each route
	gotenbergOfficeTo = 3.0 // goal: the Gotenberg route at most 3% slower on the corpus
	gotenbergHTMLTo   = 5.0 // goal: at most 5% slower on an HTML page
)

// gotenbergBenchmark compares quire's Gotenberg routes with its own
// (docs/gotenberg.md): the corpus through /forms/libreoffice/convert and
// through /v1/convert, and a page through /forms/chromium/convert/html
// and /v1/convert?from=html, on one server, the two routes alternating
// document by document so that the machine's drift weighs on both.
func gotenbergBenchmark() result {
	const title = "Gotenberg's routes against quire's own (/forms/... and /v1/convert)"
	docs, err := readCorpus(convertCorpus)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	q := startQuire("QUIRE_CONVERT_WORKERS=1", "QUIRE_CHROMIUM_WORKERS=1", "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1", "QUIRE_CHROMIUM_MAX_JOBS=-1",
		"QUIRE_KEY_RATE=0") // the passes send more than a key's default rate
	defer q.stop()
	if _, err := waitWorkers(q.url, 1, workersTimeout); err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	if _, err := waitCheck(q.url, "chromium", "1/1 browsers ready", workersTimeout); err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	key := createKey(q.data)
	client := &http.Client{Timeout: 5 * time.Minute}
	office := [2]string{q.url + "/v1/convert?from=docx", q.url + "/forms/libreoffice/convert"}
	html := [2]string{q.url + "/v1/convert?from=html", q.url + "/forms/chromium/convert/html"}
	page := uploadOf("index.html", []byte(benchPage))

	for _, d := range docs { // warm-up pass, not measured
		for _, target := range office {
			postWall(client, target, key, d)
		}
	}
	var failed []string
	var officeDocs []docxFile
	for range gotenbergPasses {
		officeDocs = append(officeDocs, docs...)
	}
	officeRun := comparePaired(client, office, key, officeDocs, &failed)
	postWall(client, html[0], key, page) // warm-up
	postWall(client, html[1], key, page)
	htmlRun := comparePaired(client, html, key, slices.Repeat([]docxFile{page}, gotenbergPages), &failed)

	var tb strings.Builder
	tb.WriteString("| work | quire's route, s | Gotenberg's route, s | median of the paired ratios | goal |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&tb, "| %d DOCX × %d passes: /v1/convert vs /forms/libreoffice/convert | %s | at most +%.0f%%: %s |\n",
		len(docs), gotenbergPasses, officeRun, gotenbergOfficeTo, met(officeRun.diff() <= gotenbergOfficeTo))
	fmt.Fprintf(&tb, "| %d HTML pages: /v1/convert?from=html vs /forms/chromium/convert/html | %s | at most +%.0f%%: %s |\n",
		gotenbergPages, htmlRun, gotenbergHTMLTo, met(htmlRun.diff() <= gotenbergHTMLTo))
	notes := "One server (1 LibreOffice worker, 1 browser), one client, the two routes taking each document in turn (each first half of the time); wall time of the requests, answers read whole. " +
		"The difference is the median, over the documents, of the Gotenberg route's time over quire's for the same document sent one after the other, so that a slow moment of the shared machine weighs on one pair, not on a route's total. " +
		"The Gotenberg route prints HTML on Letter paper (Gotenberg's default), /v1 on A4.\n"
	if len(failed) > 0 {
		notes += "\nFailed: " + strings.Join(failed, ", ") + ".\n"
	}
	figs := []figure{
		goalFigure(fmt.Sprintf("%d DOCX × %d passes: /forms/libreoffice/convert over /v1/convert", len(docs), gotenbergPasses), fmt.Sprintf("at most +%.0f%%", gotenbergOfficeTo),
			officeRun.figure(), officeRun.diff() <= gotenbergOfficeTo),
		goalFigure(fmt.Sprintf("%d HTML pages: /forms/chromium/convert/html over /v1/convert?from=html", gotenbergPages), fmt.Sprintf("at most +%.0f%%", gotenbergHTMLTo),
			htmlRun.figure(), htmlRun.diff() <= gotenbergHTMLTo),
	}
	return result{title: title, table: tb.String(), notes: notes, figures: figs}
}

// pairedRun is two routes' wall times over the same documents, each
// document sent to both one after the other.
type pairedRun struct {
	total  [2]time.Duration
	ratios []float64 // route 1's time over route 0's, per document
}

// comparePaired sends each document to both targets in turn, the first
// target first every other document, and records failures in failed.
func comparePaired(client *http.Client, targets [2]string, key string, docs []docxFile, failed *[]string) pairedRun {
	var run pairedRun
	for i, d := range docs {
		var wall [2]time.Duration
		ok := true
		for k := range 2 {
			route := (i + k) % 2
			t, err := postWall(client, targets[route], key, d)
			if err != nil {
				ok = false
				*failed = append(*failed, fmt.Sprintf("`%s` on %s (%v)", d.name, targets[route], err))
			}
			wall[route] = t
			run.total[route] += t
		}
		if ok {
			run.ratios = append(run.ratios, wall[1].Seconds()/wall[0].Seconds())
		}
	}
	return run
}

// diff is the median paired difference in percent (route 1 slower when positive).
func (r pairedRun) diff() float64 {
	if len(r.ratios) == 0 {
		return math.Inf(1)
	}
	return 100 * (median(r.ratios) - 1)
}

// String is the run's table cells: the two totals and the median difference.
func (r pairedRun) String() string {
	return fmt.Sprintf("%.2f | %.2f | %+.1f%%", r.total[0].Seconds(), r.total[1].Seconds(), r.diff())
}

// figure is the run's result cell for bench/RESULTS.md.
func (r pairedRun) figure() string {
	return fmt.Sprintf("%+.1f%% (median of %d paired ratios; totals %.2f s / %.2f s)", r.diff(), len(r.ratios), r.total[1].Seconds(), r.total[0].Seconds())
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// postWall posts d to target and returns the wall time until the answer
// is read; an answer other than a 200 PDF is an error.
func postWall(client *http.Client, target, key string, d docxFile) (time.Duration, error) {
	req, err := convertRequest(target, key, d)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	wall := time.Since(t0)
	switch {
	case err != nil:
		return wall, err
	case res.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("%PDF-")):
		return wall, fmt.Errorf("status %d: %.200s", res.StatusCode, body)
	}
	return wall, nil
}
