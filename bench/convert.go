package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Settings of the conversion benchmark.
const (
	convertCorpus  = "../shared/corpus/docx" // relative to the repository root, where go run ./bench runs
	convertWorkers = 2
	convertPasses  = 4               // passes over the corpus in each throughput phase (about 16 s with one client)
	coldSample     = 0               // documents converted by a cold soffice; 0: every one
	coldTimeout    = 2 * time.Minute // one cold conversion
	workersTimeout = 3 * time.Minute // until every worker is warm
)

// Goals of the issue for conversion.
const (
	goalColdRatio   = 40.0 // cold soffice median / quire median, at least
	goalOverheadPct = 5.0  // (wall - engine) as a % of engine at the median, at most (issue #31)
	goalScaling     = 1.8  // documents/s with 2 clients / with 1, at least
)

// docxFile is one document of the corpus with its multipart request body.
type docxFile struct {
	name        string
	data, body  []byte
	contentType string
}

// convertTiming is one conversion seen from the client (wall) and as the
// server reports it in Server-Timing, all in milliseconds.
type convertTiming struct{ wall, engine, queue, total float64 }

// convertBenchmark measures POST /v1/convert on the DOCX corpus: latency
// per document with one client, the engine's own share of it, throughput
// with 1 and 2 clients, and a cold soffice per document as the baseline.
func convertBenchmark() result {
	const title = "DOCX to PDF conversion (POST /v1/convert)"
	docs, err := readCorpus(convertCorpus)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	q := startQuire(fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1")
	engines, err := waitWorkers(q.url, convertWorkers, workersTimeout)
	if err != nil {
		q.stop()
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	key := createKey(q.data)
	target := q.url + "/v1/convert?from=docx"
	client := &http.Client{Timeout: 5 * time.Minute}

	for _, d := range docs { // warm-up pass, not measured
		convertOnce(client, target, key, d)
	}
	timings := map[string]convertTiming{}
	pdfs := map[string][]byte{}
	var ok []docxFile
	var failed []string
	for _, d := range docs {
		t, pdf, err := convertOnce(client, target, key, d)
		if err != nil {
			failed = append(failed, fmt.Sprintf("`%s` (%v)", d.name, err))
			continue
		}
		timings[d.name], pdfs[d.name] = t, pdf
		ok = append(ok, d)
	}
	if len(ok) == 0 {
		q.stop()
		return result{title: title, notes: "Skipped: no document converted: " + strings.Join(failed, ", ") + ".\n"}
	}
	phases := []int{1, 2}
	through := map[int]stats{}
	phaseEngine, phaseQueue := map[int][]float64{}, map[int][]float64{}
	for _, clients := range phases {
		through[clients], phaseEngine[clients], phaseQueue[clients] = convertThroughput(clients, convertPasses, target, key, ok)
	}
	counters := engineCounters(q.url)
	q.stop() // the cold baseline gets the machine to itself

	sample := spread(docs, coldSample)
	cold, coldNote := coldConversions(sample)

	// Latency over the whole corpus.
	var wall, engine, total, over []float64
	for _, d := range ok {
		t := timings[d.name]
		wall, engine, total, over = append(wall, t.wall), append(engine, t.engine), append(total, t.total), append(over, t.wall-t.engine)
	}
	overMedian := 100 * percentile(over, 50) / percentile(engine, 50)
	overSum := 100 * sum(over) / sum(engine)

	// The sample both quire and the cold soffice converted.
	var sWall, sEngine, sCold []float64
	for _, d := range sample {
		t, okQ := timings[d.name]
		c, okC := cold[d.name]
		if okQ && okC {
			sWall, sEngine, sCold = append(sWall, t.wall), append(sEngine, t.engine), append(sCold, c)
		}
	}

	var tb strings.Builder
	tb.WriteString("| measurement | documents | median ms | p95 ms | sum s |\n|---|---|---|---|---|\n")
	line := func(name string, v []float64) {
		if len(v) == 0 {
			fmt.Fprintf(&tb, "| %s | 0 | - | - | - |\n", name)
			return
		}
		fmt.Fprintf(&tb, "| %s | %d | %.1f | %.1f | %.2f |\n", name, len(v), percentile(v, 50), percentile(v, 95), sum(v)/1000)
	}
	line("quire, wall latency, 1 client, corpus", wall)
	line("quire, engine time (Server-Timing `engine`), corpus", engine)
	line("quire, server time (Server-Timing `total`), corpus", total)
	line("quire, service overhead (wall - engine), corpus", over)
	if len(sample) < len(docs) {
		line("quire, wall latency, cold sample", sWall)
		line("quire, engine time, cold sample", sEngine)
		line("cold soffice per document, cold sample", sCold)
	} else {
		line("cold soffice per document, corpus", sCold)
	}

	var n strings.Builder
	fmt.Fprintf(&n, "LibreOffice %s (`/v1/health` `engines`). ", engines["libreoffice"])
	fmt.Fprintf(&n, "`bin/quire serve` with QUIRE_CONVERT_WORKERS=%d; the benchmark starts once `/v1/health` reports \"%d/%d workers ready\". "+
		"Corpus: the %d DOCX files of `%s`. Latency: one client, POST /v1/convert?from=docx (multipart field \"file\") "+
		"of each file once after one unmeasured warm-up pass over the corpus; wall latency is measured by the client "+
		"from sending the request to reading the last byte of the PDF; engine time is the worker's own time from the "+
		"`Server-Timing` header (loading and exporting the document); the overhead (wall - engine) is everything else: HTTP, "+
		"authentication, multipart parsing, input sniffing, queueing, the transfers, and any wait for the worker to finish "+
		"closing the previous document, which it does after answering. Percentiles are nearest-rank.\n\n",
		convertWorkers, convertWorkers, convertWorkers, len(docs), convertCorpus)
	which := "every document of the corpus; the quire figures it is compared with are the wall latencies of the latency pass"
	if len(sample) < len(docs) {
		which = fmt.Sprintf("a sample of %d documents spread evenly over the corpus sorted by name (%s); the quire figures it is "+
			"compared with (\"cold sample\" rows) are those of the same documents from the latency pass", len(sample), names(sample))
	}
	fmt.Fprintf(&n, "Cold baseline: `soffice --headless --convert-to pdf --outdir DIR FILE`, one process per document with a fresh "+
		"`-env:UserInstallation` profile, on a copy of the file in a temporary directory, timed from start to exit, with quire stopped. "+
		"The operating system's file cache is warm (quire loaded the same libraries before). It runs on %s, over the documents "+
		"both converted.%s\n\n", which, coldNote)

	fmt.Fprintf(&n, "Throughput: 1, then 2 keep-alive clients share a fixed amount of work, %d passes over the documents that "+
		"converted in the latency pass (in corpus order, each client taking the next document when it gets its answer); "+
		"documents/s is the documents answered 200 over the time from the first request to the last answer. Fixed work "+
		"rather than a fixed duration, so that both phases convert the same mix of documents (they differ in cost more "+
		"than tenfold and one pass takes about %.0f s with one client here). The engine and queue columns tell a shortfall of the engine "+
		"itself (workers competing for the cores) from one of the service (waiting in the queue).\n\n", convertPasses, sum(wall)/1000)
	n.WriteString("| clients | documents converted | documents/s | wall p50 ms | wall p95 ms | wall p99 ms | engine median ms | engine sum s | queue median ms | failures |\n" +
		"|---|---|---|---|---|---|---|---|---|---|\n")
	for _, c := range phases {
		s := through[c]
		fmt.Fprintf(&n, "| %d | %d | %.2f | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %d |\n", c, converted(s), convertRate(s),
			ms(s.p50), ms(s.p95), ms(s.p99), percentile(phaseEngine[c], 50), sum(phaseEngine[c])/1000, percentile(phaseQueue[c], 50), s.failures)
	}
	scaling := convertRate(through[2]) / convertRate(through[1])

	var figs []figure
	if len(sCold) > 0 {
		ratio := percentile(sCold, 50) / percentile(sWall, 50)
		figs = append(figs, goalFigure("DOCX: cold soffice median over quire's median (corpus)", fmt.Sprintf("at least %.0fx", goalColdRatio),
			fmt.Sprintf("%.0f ms / %.1f ms = %.1fx (%d documents)", percentile(sCold, 50), percentile(sWall, 50), ratio, len(sCold)), ratio >= goalColdRatio))
	}
	figs = append(figs,
		goalFigure("service overhead (wall - engine) over engine time, at the median", fmt.Sprintf("at most %.0f%%", goalOverheadPct),
			fmt.Sprintf("%.1f%% (%.1f ms / %.1f ms); %.1f%% summed", overMedian, percentile(over, 50), percentile(engine, 50), overSum), overMedian <= goalOverheadPct),
		goalFigure("throughput with 2 clients over 1", fmt.Sprintf("at least %.1fx", goalScaling),
			fmt.Sprintf("%.2f / %.2f documents/s = %.2fx", convertRate(through[2]), convertRate(through[1]), scaling), scaling >= goalScaling))
	agree := pageAgreement(docs, pdfs)
	figs = append(figs, infoFigure("PDF page count equal to Word's (`fidelity`)", fmt.Sprintf("%d of %d Word-saved documents", agree.equal, agree.documents)))
	n.WriteString("\n" + goalsTable(figs))

	n.WriteString("\nWorker recycling after a number of jobs is disabled for the run (QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1), " +
		"so that a worker restart cannot land in one throughput phase and not the other; the memory limit stays in force. ")
	if counters != "" {
		n.WriteString("Engine counters at the end of the quire run (warm-up, latency and throughput together): " + counters +
			"; documents LibreOfficeKit refuses go to the engine's own soffice fallback and are in every figure above. ")
	}
	if len(failed) > 0 {
		fmt.Fprintf(&n, "Documents quire did not convert in the latency pass (left out of every figure): %s.", strings.Join(failed, ", "))
	} else {
		n.WriteString("Every document converted.")
	}
	n.WriteString(" The machine is shared and the client runs on it too.\n")
	return result{title: title, table: tb.String(), notes: n.String(), figures: figs}
}

// readCorpus reads every .docx of dir, sorted by name, and builds its
// multipart request body.
func readCorpus(dir string) ([]docxFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("no corpus at %s (%v)", dir, err)
	}
	var docs []docxFile
	for _, e := range entries {
		if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".docx") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		docs = append(docs, uploadOf(e.Name(), data))
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no .docx file in %s", dir)
	}
	return docs, nil
}

// uploadOf is the document data named name with its multipart request body.
func uploadOf(name string, data []byte) docxFile {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write(data)
	mw.Close()
	return docxFile{name: name, data: data, body: body.Bytes(), contentType: mw.FormDataContentType()}
}

// waitWorkers polls /v1/health until the conversion check reports every
// worker ready, for at most limit, and returns the engines' versions it
// names.
func waitWorkers(base string, workers int, limit time.Duration) (map[string]string, error) {
	return waitCheck(base, "convert", fmt.Sprintf("%d/%d workers ready", workers, workers), limit)
}

// waitCheck polls /v1/health until its check named check starts with
// want, for at most limit, and returns the engines' versions it names.
func waitCheck(base, check, want string, limit time.Duration) (map[string]string, error) {
	deadline := time.Now().Add(limit)
	last := "no answer"
	for time.Now().Before(deadline) {
		res, err := http.Get(base + "/v1/health")
		if err == nil {
			var h struct{ Checks, Engines map[string]string }
			json.NewDecoder(res.Body).Decode(&h)
			res.Body.Close()
			if last = h.Checks[check]; strings.HasPrefix(last, want) {
				return h.Engines, nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	return nil, fmt.Errorf("the %s engine was not ready after %s (health: %q)", check, limit, last)
}

func convertRequest(target, key string, d docxFile) (*http.Request, error) {
	r, err := http.NewRequest("POST", target, bytes.NewReader(d.body))
	if err == nil {
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("Content-Type", d.contentType)
	}
	return r, err
}

// convertOnce converts d and returns its timings and the PDF; an answer
// other than a 200 with a PDF is an error.
func convertOnce(client *http.Client, target, key string, d docxFile) (convertTiming, []byte, error) {
	req, err := convertRequest(target, key, d)
	if err != nil {
		return convertTiming{}, nil, err
	}
	t0 := time.Now()
	res, err := client.Do(req)
	if err != nil {
		return convertTiming{}, nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	t := convertTiming{wall: float64(time.Since(t0).Microseconds()) / 1000}
	switch {
	case err != nil:
		return t, nil, err
	case res.StatusCode != http.StatusOK:
		var e struct{ Code, Message string }
		json.Unmarshal(body, &e)
		return t, nil, fmt.Errorf("status %d %s: %s", res.StatusCode, e.Code, e.Message)
	case !bytes.HasPrefix(body, []byte("%PDF-")):
		return t, nil, errors.New("the answer is not a PDF")
	}
	timing := serverTiming(res.Header.Get("Server-Timing"))
	var ok bool
	if t.engine, ok = timing["engine"]; !ok {
		return t, nil, errors.New("no engine time in Server-Timing")
	}
	t.queue, t.total = timing["queue"], timing["total"]
	return t, body, nil
}

// serverTiming parses "engine;dur=X, queue;dur=Y" into durations in ms.
func serverTiming(h string) map[string]float64 {
	m := map[string]float64{}
	for _, metric := range strings.Split(h, ",") {
		parts := strings.Split(metric, ";")
		for _, p := range parts[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					m[strings.TrimSpace(parts[0])] = f
				}
			}
		}
	}
	return m
}

// convertThroughput converts passes times every document of docs, in
// order, from clients keep-alive connections each taking the next document
// when it has its answer. A conversion that fails counts in requests and
// in failures. It also returns the engine and queue times (Server-Timing)
// of the conversions that succeeded.
func convertThroughput(clients, passes int, target, key string, docs []docxFile) (stats, []float64, []float64) {
	client := &http.Client{Timeout: 5 * time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	work := int64(passes * len(docs))
	var next, failures atomic.Int64
	lat := make([][]time.Duration, clients)
	timings := make([][]convertTiming, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < work; i = next.Add(1) - 1 {
				t0 := time.Now()
				if t, _, err := convertOnce(client, target, key, docs[i%int64(len(docs))]); err != nil {
					failures.Add(1)
				} else {
					timings[c] = append(timings[c], t)
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		})
	}
	wg.Wait()
	s := stats{requests: work, failures: failures.Load(), elapsed: time.Since(start)}
	all := slices.Sorted(slices.Values(slices.Concat(lat...)))
	s.p50, s.p95, s.p99 = all[len(all)/2], all[len(all)*95/100], all[len(all)*99/100]
	var engine, queue []float64
	for _, t := range slices.Concat(timings...) {
		engine, queue = append(engine, t.engine), append(queue, t.queue)
	}
	return s, engine, queue
}

// engineCounters reads the conversion engine's counters from /metrics.
func engineCounters(base string) string {
	res, err := http.Get(base + "/metrics")
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	text, _ := io.ReadAll(res.Body)
	wanted := []struct{ metric, label string }{
		{"quire_convert_converted_total", "converted"}, {"quire_convert_failed_total", "failed"},
		{"quire_convert_cold_total", "converted by the soffice fallback"}, {"quire_convert_worker_crashes_total", "worker crashes"},
		{"quire_convert_worker_timeouts_total", "worker timeouts"}, {"quire_convert_worker_restarts_total", "worker restarts"},
		{"quire_convert_worker_recycled_total", "workers recycled"},
	}
	var out []string
	for _, l := range strings.Split(string(text), "\n") {
		name, value, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		for _, w := range wanted {
			if name == w.metric {
				out = append(out, w.label+" "+value)
			}
		}
	}
	return strings.Join(out, ", ")
}

// spread picks k documents evenly over docs (all of them when k is 0 or
// at least len(docs)).
func spread(docs []docxFile, k int) []docxFile {
	if k <= 0 || k >= len(docs) {
		return docs
	}
	out := make([]docxFile, k)
	for i := range k {
		out[i] = docs[i*len(docs)/k]
	}
	return out
}

// coldConversions converts each document with a cold soffice and returns
// the milliseconds of each success, and a note on what failed.
func coldConversions(docs []docxFile) (map[string]float64, string) {
	soffice, err := exec.LookPath("soffice")
	if err != nil {
		return nil, " soffice is not installed: no cold baseline."
	}
	times := map[string]float64{}
	var failed []string
	for _, d := range docs {
		t, err := coldOnce(soffice, d)
		if err != nil {
			failed = append(failed, fmt.Sprintf("`%s` (%v)", d.name, err))
			continue
		}
		times[d.name] = t
	}
	if len(failed) == 0 {
		return times, ""
	}
	return times, " The cold soffice failed on: " + strings.Join(failed, ", ") + "."
}

// coldOnce runs one soffice, with a profile of its own, on a copy of d in
// a temporary directory, and returns its wall time in milliseconds.
func coldOnce(soffice string, d docxFile) (float64, error) {
	dir, err := os.MkdirTemp("", "quire-bench-cold-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "in", d.name)
	out := filepath.Join(dir, "out")
	os.MkdirAll(filepath.Dir(in), 0o700)
	if err := os.WriteFile(in, d.data, 0o600); err != nil {
		return 0, err
	}
	profile := (&url.URL{Scheme: "file", Path: filepath.Join(dir, "profile")}).String()
	cmd := exec.Command(soffice, "-env:UserInstallation="+profile, "--headless", "--convert-to", "pdf", "--outdir", out, in)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // soffice starts soffice.bin: a timeout kills both
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	timer := time.AfterFunc(coldTimeout, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err = cmd.Wait()
	elapsed := float64(time.Since(t0).Microseconds()) / 1000
	if !timer.Stop() {
		return 0, fmt.Errorf("killed after %s", coldTimeout)
	}
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	pdf, err := os.ReadFile(filepath.Join(out, strings.TrimSuffix(d.name, filepath.Ext(d.name))+".pdf"))
	if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-")) {
		return 0, fmt.Errorf("no PDF written: %s", strings.TrimSpace(stderr.String()))
	}
	return elapsed, nil
}

func converted(s stats) int64 { return max(s.requests-s.failures, 0) }

func convertRate(s stats) float64 { return float64(converted(s)) / s.elapsed.Seconds() }

// percentile is the nearest-rank p-th percentile of v (p=50: v[n/2] of
// the sorted values, as load computes it).
func percentile(v []float64, p int) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(v))
	return s[min(len(s)*p/100, len(s)-1)]
}

func sum(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t
}

func names(docs []docxFile) string {
	n := make([]string, len(docs))
	for i, d := range docs {
		n[i] = "`" + d.name + "`"
	}
	return strings.Join(n, ", ")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}
