package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Settings of the Gotenberg benchmark.
const (
	gotenbergPasses   = 2   // measured passes over the corpus, each route
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
	q := startQuire("QUIRE_CONVERT_WORKERS=1", "QUIRE_CHROMIUM_WORKERS=1", "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1", "QUIRE_CHROMIUM_MAX_JOBS=-1")
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
	var officeWall [2]time.Duration
	var failed []string
	for pass := range gotenbergPasses {
		for i, d := range docs {
			for k := range 2 {
				route := (i + pass + k) % 2 // each route first half of the time
				t, err := postWall(client, office[route], key, d)
				if err != nil {
					failed = append(failed, fmt.Sprintf("`%s` on %s (%v)", d.name, office[route][len(q.url):], err))
				}
				officeWall[route] += t
			}
		}
	}
	postWall(client, html[0], key, page) // warm-up
	postWall(client, html[1], key, page)
	var htmlWall [2]time.Duration
	for i := range gotenbergPages {
		for k := range 2 {
			route := (i + k) % 2
			t, err := postWall(client, html[route], key, page)
			if err != nil {
				failed = append(failed, fmt.Sprintf("the page on %s (%v)", html[route][len(q.url):], err))
			}
			htmlWall[route] += t
		}
	}

	officeDiff := 100 * (officeWall[1].Seconds()/officeWall[0].Seconds() - 1)
	htmlDiff := 100 * (htmlWall[1].Seconds()/htmlWall[0].Seconds() - 1)
	var tb strings.Builder
	tb.WriteString("| work | quire's route, s | Gotenberg's route, s | difference | goal |\n|---|---|---|---|---|\n")
	fmt.Fprintf(&tb, "| %d DOCX × %d passes: /v1/convert vs /forms/libreoffice/convert | %.2f | %.2f | %+.1f%% | at most +%.0f%%: %s |\n",
		len(docs), gotenbergPasses, officeWall[0].Seconds(), officeWall[1].Seconds(), officeDiff, gotenbergOfficeTo, met(officeDiff <= gotenbergOfficeTo))
	fmt.Fprintf(&tb, "| %d HTML pages: /v1/convert?from=html vs /forms/chromium/convert/html | %.2f | %.2f | %+.1f%% | at most +%.0f%%: %s |\n",
		gotenbergPages, htmlWall[0].Seconds(), htmlWall[1].Seconds(), htmlDiff, gotenbergHTMLTo, met(htmlDiff <= gotenbergHTMLTo))
	notes := "One server (1 LibreOffice worker, 1 browser), one client, the two routes alternating document by document; wall time of the requests, answers read whole. " +
		"The Gotenberg route prints on Letter paper (Gotenberg's default), /v1 on A4.\n"
	if len(failed) > 0 {
		notes += "\nFailed: " + strings.Join(failed, ", ") + ".\n"
	}
	figs := []figure{
		goalFigure(fmt.Sprintf("%d DOCX × %d passes: /forms/libreoffice/convert over /v1/convert", len(docs), gotenbergPasses), fmt.Sprintf("at most +%.0f%%", gotenbergOfficeTo),
			fmt.Sprintf("%.2f s / %.2f s = %+.1f%%", officeWall[1].Seconds(), officeWall[0].Seconds(), officeDiff), officeDiff <= gotenbergOfficeTo),
		goalFigure(fmt.Sprintf("%d HTML pages: /forms/chromium/convert/html over /v1/convert?from=html", gotenbergPages), fmt.Sprintf("at most +%.0f%%", gotenbergHTMLTo),
			fmt.Sprintf("%.2f s / %.2f s = %+.1f%%", htmlWall[1].Seconds(), htmlWall[0].Seconds(), htmlDiff), htmlDiff <= gotenbergHTMLTo),
	}
	return result{title: title, table: tb.String(), notes: notes, figures: figs}
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
