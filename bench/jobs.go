package main

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// Settings of the jobs benchmark.
const (
	jobsCount      = 500 // conversions in each phase
	jobsDocuments  = 20  // the smallest documents of the corpus, cycled
	jobsSubmitters = 32  // connections submitting the jobs at once
	jobsRounds     = 3   // rounds of each phase, alternating, each of all jobsCount
	jobsAlone      = 50  // submissions of one client alone, at the end
)

// Goals of the issue for jobs.
const (
	goalJobsRatio = 0.95 // jobs' documents/s over synchronous documents/s, at least
	goalSubmitP50 = 5.0  // p50 submit latency, ms, at most
)

// jobsPollPeriod is how often the bench asks whether a round's jobs have
// all ended. The end is read from the jobs themselves (finishedAt), so a
// poll only decides when the CPU is read; each costs the server about
// 0.8 ms of CPU (the metrics rendered, the jobs counted), which every
// 100 ms was about 0.2 ms per document, taken from the engines.
const jobsPollPeriod = time.Second

// jobsPostgres is the PostgreSQL of the benchmark's second run (a schema
// of its own is made and dropped there); BENCH_POSTGRES_URL overrides it.
const jobsPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// jobsBenchmark submits jobsCount conversions at once with Prefer:
// respond-async and compares their throughput with the same documents
// sent synchronously by as many clients as there are workers, on SQLite
// and on PostgreSQL.
func jobsBenchmark() result {
	const title = "Jobs: conversions submitted at once against synchronous clients"
	docs, err := readCorpus(convertCorpus)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	slices.SortFunc(docs, func(a, b docxFile) int { return len(a.data) - len(b.data) })
	docs = docs[:min(jobsDocuments, len(docs))]
	work := make([]docxFile, jobsCount)
	for i := range work {
		work[i] = docs[i%len(docs)]
	}
	var tb strings.Builder
	var figs []figure
	tb.WriteString("| database | phase | documents | time s | documents/s | engine median ms | engine summed s | CPU ms per document: server, workers | failures |\n|---|---|---|---|---|---|---|---|---|\n")
	submitted := map[string]time.Duration{}
	for _, backend := range []string{"sqlite", "postgres"} {
		env, cleanup, err := jobsDatabase(backend)
		if err != nil {
			fmt.Fprintf(&tb, "| %s | not run: %v | | | | | | | |\n", backend, err)
			continue
		}
		submitted[backend] = jobsRun(backend, env, docs, work, &tb, &figs)
		cleanup()
	}
	var n strings.Builder
	fmt.Fprintf(&n, "`bin/quire serve` with QUIRE_CONVERT_WORKERS=%d (jobs run as many at once: QUIRE_JOB_WORKERS=0), "+
		"per-key rate and concurrency limits off, on SQLite, then on PostgreSQL (`%s`, a schema of its own). Work: %d conversions of the %d smallest DOCX files of `%s`, cycled, after a "+
		"warm-up pass over them, in %d alternating rounds (synchronous, then jobs) of all %d each, summed, so that a change of the "+
		"machine's load falls on both phases alike. Synchronous: %d keep-alive clients each take the next document when answered; "+
		"time from the first request to the last answer. Jobs: %d connections submit the round's requests with `Prefer: respond-async` "+
		"as fast as they are answered (all of a round submitted in %.2f s on SQLite, %.2f s on PostgreSQL, summed over the rounds); time "+
		"from the first submission until the last job's `finishedAt` (the end the server recorded; the bench polls "+
		"`quire_jobs_finished_total` every %s to know when all have ended); each result is then read "+
		"once to check it is a 200 (not timed). Then one client submits %d jobs one after the other, for the submission's own latency. "+
		"Engine: the Server-Timing `engine` of each answer (of each job's result); CPU: of the quire process and of its conversion "+
		"workers over each phase, per document (on PostgreSQL without the database server's own).\n\n",
		convertWorkers, jobsPostgres, len(work), len(docs), convertCorpus, jobsRounds, len(work), convertWorkers, jobsSubmitters,
		submitted["sqlite"].Seconds(), submitted["postgres"].Seconds(), jobsPollPeriod, jobsAlone)
	n.WriteString(goalsTable(figs))
	return result{title: title, table: tb.String(), notes: n.String(), figures: figs}
}

// jobsDatabase is the setting of backend's database, and how to drop it.
func jobsDatabase(backend string) ([]string, func(), error) {
	if backend == "sqlite" {
		return nil, func() {}, nil
	}
	base := cmp.Or(os.Getenv("BENCH_POSTGRES_URL"), jobsPostgres)
	db, err := sql.Open("pgx", base)
	if err != nil {
		return nil, nil, err
	}
	schema := fmt.Sprintf("bench_jobs_%d", time.Now().UnixNano())
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		db.Close()
		return nil, nil, err
	}
	drop := func() { db.Exec("DROP SCHEMA " + schema + " CASCADE"); db.Close() }
	return []string{"QUIRE_DATABASE_URL=" + base + "&search_path=" + schema}, drop, nil
}

// jobsRun measures both phases on one server and writes their rows; it
// returns how long the submissions took.
func jobsRun(backend string, env []string, docs, work []docxFile, tb *strings.Builder, figs *[]figure) time.Duration {
	q := startQuire(append([]string{fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1",
		"QUIRE_KEY_RATE=0", "QUIRE_KEY_MAX_CONCURRENT=0"}, env...)...)
	defer q.stop()
	if _, err := waitWorkers(q.url, convertWorkers, workersTimeout); err != nil {
		fmt.Fprintf(tb, "| %s | not run: %v | | | | | | | |\n", backend, err)
		return 0
	}
	key := createKey(q.data, env...)
	target := q.url + "/v1/convert?from=docx"
	client := &http.Client{Timeout: 5 * time.Minute}
	for _, d := range docs { // warm-up, not measured
		convertOnce(client, target, key, d)
	}

	// Alternate rounds of both phases, so that a change of the machine's
	// background load falls on both alike.
	var syncTime, jobsTime, submitTime time.Duration
	var syncFailed, jobsFailed int
	var submits, syncEngine, jobsEngine []float64
	var syncCPU, jobsCPU cpuUse
	for range jobsRounds {
		round := work // the shape: all of them at once, each round
		cpu0 := q.cpu()
		t, failed, eng := convertSync(client, target, key, round)
		cpu1 := q.cpu()
		syncTime, syncFailed, syncEngine, syncCPU = syncTime+t, syncFailed+failed, append(syncEngine, eng...), syncCPU.add(cpu1.sub(cpu0))
		t, sub, lat, failed, eng, cpu2 := convertJobs(client, q, target, key, round)
		jobsTime, submitTime, jobsFailed, jobsEngine = jobsTime+t, submitTime+sub, jobsFailed+failed, append(jobsEngine, eng...)
		jobsCPU = jobsCPU.add(cpu2.sub(cpu1))
		submits = append(submits, lat...)
	}
	// One client alone: the submission's own latency, without the wait
	// behind 31 others.
	var alone []float64
	for _, d := range work[:jobsAlone] {
		lat, _, _, _ := submitAll(client, target, key, []docxFile{d})
		alone = append(alone, lat...)
	}

	total := jobsRounds * len(work)
	syncRate := float64(total-syncFailed) / syncTime.Seconds()
	jobsRate := float64(total-jobsFailed) / jobsTime.Seconds()
	ratio := jobsRate / syncRate
	p50 := percentile(submits, 50)

	fmt.Fprintf(tb, "| %s | synchronous, %d clients | %d | %.1f | %.2f | %.1f | %.1f | %s | %d |\n", backend, convertWorkers, total, syncTime.Seconds(), syncRate,
		percentile(syncEngine, 50), sum(syncEngine)/1000, syncCPU.perDoc(total), syncFailed)
	fmt.Fprintf(tb, "| %s | jobs, submitted by %d connections at once | %d | %.1f | %.2f | %.1f | %.1f | %s | %d |\n", backend, jobsSubmitters, total, jobsTime.Seconds(), jobsRate,
		percentile(jobsEngine, 50), sum(jobsEngine)/1000, jobsCPU.perDoc(total), jobsFailed)
	alone50 := percentile(alone, 50)
	*figs = append(*figs,
		goalFigure(backend+": jobs' throughput over synchronous clients'", fmt.Sprintf("at least %.2fx", goalJobsRatio),
			fmt.Sprintf("%.2f / %.2f documents/s = %.2fx", jobsRate, syncRate, ratio), ratio >= goalJobsRatio),
		goalFigure(fmt.Sprintf("%s: submit latency p50, %d connections", backend, jobsSubmitters), fmt.Sprintf("under %.0f ms", goalSubmitP50),
			fmt.Sprintf("%.1f ms (p95 %.1f ms, %d submissions)", p50, percentile(submits, 95), len(submits)), p50 < goalSubmitP50),
		goalFigure(backend+": the same, one client submitting alone", fmt.Sprintf("under %.0f ms", goalSubmitP50),
			fmt.Sprintf("%.1f ms (p95 %.1f ms)", alone50, percentile(alone, 95)), alone50 < goalSubmitP50))
	return submitTime
}

// convertSync converts work with as many clients as workers and returns
// the time from the first request to the last answer, and the failures.
func convertSync(client *http.Client, target, key string, work []docxFile) (time.Duration, int, []float64) {
	start := time.Now()
	var next, failed atomic.Int64
	var mu sync.Mutex
	var engine []float64
	var wg sync.WaitGroup
	for range convertWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(work)); i = next.Add(1) - 1 {
				t, _, err := convertOnce(client, target, key, work[i])
				if err != nil {
					failed.Add(1)
					continue
				}
				mu.Lock()
				engine = append(engine, t.engine)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return time.Since(start), int(failed.Load()), engine
}

// convertJobs submits work at once as jobs to server q and returns the
// time from the first submission until all have ended, the time the
// submissions took, their latencies, the failures (refused, or a result
// other than 200), the engine times, and q's CPU use when all had ended
// (before the results are read).
func convertJobs(client *http.Client, q *process, target, key string, work []docxFile) (time.Duration, time.Duration, []float64, int, []float64, cpuUse) {
	base := q.url
	before := jobsFinished(base)
	lat, ids, failed, start := submitAll(client, target, key, work)
	submitted := time.Since(start)
	for jobsFinished(base)-before < len(ids) {
		time.Sleep(jobsPollPeriod)
	}
	cpu := q.cpu()
	// The phase ends when the last job ended, as the server recorded it
	// (same machine, same clock), not when the poll noticed.
	var last time.Time
	var engine []float64
	for _, id := range ids {
		if end := jobFinished(client, base, key, id); end.After(last) {
			last = end
		}
		st, timing := resultStatus(client, base, key, id)
		if st != http.StatusOK {
			failed++
			continue
		}
		engine = append(engine, serverTiming(timing)["engine"])
	}
	if last.IsZero() {
		last = time.Now()
	}
	return last.Sub(start), submitted, lat, failed, engine, cpu
}

// jobFinished is when job id ended, by the server's clock; zero if unknown.
func jobFinished(client *http.Client, base, key, id string) time.Time {
	req, _ := http.NewRequest("GET", base+"/v1/jobs/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := client.Do(req)
	if err != nil {
		return time.Time{}
	}
	defer res.Body.Close()
	var j struct{ FinishedAt *time.Time }
	if json.NewDecoder(res.Body).Decode(&j) != nil || j.FinishedAt == nil {
		return time.Time{}
	}
	return *j.FinishedAt
}

// submitAll submits every document of work as a job over jobsSubmitters
// connections, and returns the submit latencies (ms), the job ids, the
// submissions refused, and when the first was sent.
func submitAll(client *http.Client, target, key string, work []docxFile) ([]float64, []string, int, time.Time) {
	var mu sync.Mutex
	var lat []float64
	var ids []string
	failed := 0
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range jobsSubmitters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(work)); i = next.Add(1) - 1 {
				req, err := convertRequest(target, key, work[i])
				if err != nil {
					panic(err)
				}
				req.Header.Set("Prefer", "respond-async")
				t0 := time.Now()
				res, err := client.Do(req)
				var j struct{ ID string }
				if err == nil {
					err = json.NewDecoder(res.Body).Decode(&j)
					res.Body.Close()
				}
				d := float64(time.Since(t0).Microseconds()) / 1000
				mu.Lock()
				if err != nil || res.StatusCode != http.StatusAccepted {
					failed++
				} else {
					lat, ids = append(lat, d), append(ids, j.ID)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat, ids, failed, start
}

var finishedLine = regexp.MustCompile(`(?m)^quire_jobs_finished_total\{[^}]*\} (\S+)$`)

// jobsFinished sums quire_jobs_finished_total over its labels. It asks
// for the metrics uncompressed: compressing them on each poll took the
// server about 0.6 ms of CPU per job of the phase (a profile), which the
// engines, on the same cores, would lose.
func jobsFinished(base string) int {
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "identity")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	n := 0.0
	for _, m := range finishedLine.FindAllStringSubmatch(string(b), -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		n += v
	}
	return int(n)
}

// resultStatus is the status of job id's result, and its Server-Timing.
func resultStatus(client *http.Client, base, key, id string) (int, string) {
	req, _ := http.NewRequest("GET", base+"/v1/jobs/"+id+"/result", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := client.Do(req)
	if err != nil {
		return 0, ""
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Server-Timing")
}

// cpuUse is the CPU time of a quire server and of its conversion workers.
type cpuUse struct{ server, workers time.Duration }

func (q *process) cpu() cpuUse {
	pid := q.cmd.Process.Pid
	return cpuUse{cpuTime(pid), workersCPU(pid)}
}

func (a cpuUse) add(b cpuUse) cpuUse { return cpuUse{a.server + b.server, a.workers + b.workers} }
func (a cpuUse) sub(b cpuUse) cpuUse { return cpuUse{a.server - b.server, a.workers - b.workers} }

// perDoc is the use per document of n, in ms: "server, workers".
func (a cpuUse) perDoc(n int) string {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	return fmt.Sprintf("%.1f, %.1f", ms(a.server), ms(a.workers))
}
