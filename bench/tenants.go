package main

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// Settings of the two-tenants benchmark (issue #25).
const (
	tenantsSamples = 20               // B's conversions in each phase
	tenantsFlood   = 8                // A's conversions in flight
	tenantsAlone   = 20 * time.Second // A's throughput phase alone, each round
	tenantsRounds  = 3                // alternations of A alone on the tree and on main before the fair queue
	limitsRounds   = 9                // alternations of the three servers of the limits' cost on /v1/sign
)

// Goals of the issue for two tenants.
const (
	goalTenantSlowdown = 10.0 // B's p50 beside A's flood / alone, at most
	goalTenantCostPct  = 10.0 // A's throughput lost when B is idle, at most
	goalLimitsCostPct  = 3.0  // p50 of /v1/sign with every per-key limit checked and metered over neither, at most
)

// tenantsBenchmark is the noisy neighbour of issue #25 on a real server
// with 2 conversion workers: key B converts a 1-page DOCX one request at a
// time, alone and while key A keeps 8 conversions of a 46-page DOCX in
// flight; A's throughput alone and beside B.
func tenantsBenchmark() result {
	const title = "Two tenants: one key's flood beside another key (POST /v1/convert)"
	q := startQuire(fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1")
	defer q.stop()
	if _, err := waitWorkers(q.url, convertWorkers, workersTimeout); err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	keyA, keyB := createKeyFor(q.data, "tenant-a@example.com"), createKeyFor(q.data, "tenant-b@example.com")
	target := q.url + "/v1/convert?from=docx"
	large, small := uploadOf("large.docx", convtest.DOCX(46)), uploadOf("small.docx", convtest.DOCX(1))
	client := &http.Client{Timeout: 5 * time.Minute}
	for _, d := range []docxFile{large, small} { // warm-up, not measured
		convertOnce(client, target, keyA, d)
	}

	bAlone, failAlone := tenantLatencies(client, target, keyB, small)
	aAlone, aMain, cost, mainNote := aloneAgainstMain(target, keyA, large)
	var bBeside []float64
	var failBeside int
	aBeside := floodFor(target, keyA, large, 0, func() { bBeside, failBeside = tenantLatencies(client, target, keyB, small) })

	var tb strings.Builder
	tb.WriteString("| measurement | value |\n|---|---|\n")
	p50Alone, p50Beside := percentile(bAlone, 50), percentile(bBeside, 50)
	slowdown := p50Beside / p50Alone
	fmt.Fprintf(&tb, "| B's p50 alone, 1-page DOCX, %d requests | %.1f ms (%d failed) |\n", tenantsSamples, p50Alone, failAlone)
	fmt.Fprintf(&tb, "| B's p50 beside A's %d in flight (46-page DOCX) | %.1f ms (%d failed) |\n", tenantsFlood, p50Beside, failBeside)
	fmt.Fprintf(&tb, "| B's slowdown (goal: at most %.0fx; 90x on main) | %.1fx %s |\n", goalTenantSlowdown, slowdown, yesNo(slowdown <= goalTenantSlowdown))
	figs := []figure{goalFigure(fmt.Sprintf("B's p50 beside A's flood of %d over B's p50 alone", tenantsFlood), fmt.Sprintf("at most %.0fx", goalTenantSlowdown),
		fmt.Sprintf("%.1f ms / %.1f ms = %.1fx", p50Beside, p50Alone, slowdown), slowdown <= goalTenantSlowdown)}
	fmt.Fprintf(&tb, "| A's throughput alone, %d in flight (median of %d rounds) | %.2f documents/s (%d failed) |\n", tenantsFlood, tenantsRounds, aAlone.rate, aAlone.failed)
	if aMain.rate > 0 {
		fmt.Fprintf(&tb, "| A's throughput alone on main before the fair queue (%s), same rounds | %.2f documents/s (%d failed) |\n", mainBeforeFair, aMain.rate, aMain.failed)
		fmt.Fprintf(&tb, "| fair sharing's cost to A with B idle (goal: at most %.0f%%; median of the rounds' ratios) | %+.1f%% %s |\n", goalTenantCostPct, cost, yesNo(cost <= goalTenantCostPct))
		figs = append(figs, goalFigure("fair sharing's cost to A's throughput with B idle, against "+mainBeforeFair+" (median of the rounds)",
			fmt.Sprintf("at most %.0f%%", goalTenantCostPct), fmt.Sprintf("%+.1f%%", cost), cost <= goalTenantCostPct))
	}
	fmt.Fprintf(&tb, "| A's throughput beside B | %.2f documents/s (%d failed) |\n", aBeside.rate, aBeside.failed)
	limits, limitsRounds := signLimitsCost()
	fmt.Fprintf(&tb, "| %s (goal: %s) | %s %s |\n", limits.name, limits.goal, limits.value, limits.met)
	figs = append(figs, limits)
	notes := fmt.Sprintf("A's flood keeps %d requests in flight with one key; B is a second key. The pool serves the keys in turn and, while B waits, "+
		"A holds at most 1 of the %d workers, so B waits for at most one of A's jobs. A's throughput alone is what fair sharing leaves A "+
		"when B is idle, measured against a build of main before the fair queue (%s: one FIFO, no cap) with the same settings, "+
		"the two servers taking turns (the tree first), %d rounds of %s each (goal: at most %.0f%% below it).%s\n\n",
		tenantsFlood, convertWorkers, mainBeforeFair, tenantsRounds, tenantsAlone, goalTenantCostPct, mainNote)
	notes += "The limits' and metering's cost on `/v1/sign`: three `serve` processes taking turns, POST /v1/sign of the 1-page PDF " +
		"with the certificate page, one connection: the tree with QUIRE_KEY_MAX_CONCURRENT=10, QUIRE_KEY_RATE=1000000/1m and " +
		"QUIRE_KEY_QUOTA=100000000/month (every limit checked, none reached, every answer counted in the signing's transaction); " +
		"the tree with the three limits 0 (counted, nothing checked); and a build of main before the limits and the metering (" +
		mainBeforeLimits + ": neither). The cost in the table is the first against the last; the two builds differ by what else " +
		"was merged between them too (the memory accounting of #32 and the certificate page's changes), so it bounds the " +
		"limits' and metering's cost from above. A fourth server, a build of " + mainGroupCommit + " with the first's limits, " +
		"is main before this change of the metering:\n\n" + limitsRounds
	return result{title: title, table: tb.String(), notes: notes, figures: figs}
}

// signLimitsCost measures the p50 of POST /v1/sign with every per-key
// limit checked and metered, against metered only and against a build
// without either, in one run, and returns the figure and the rounds'
// table.
func signLimitsCost() (cost figure, rounds string) {
	var table, checks strings.Builder
	servers := []signServer{
		{"limits and metering", []string{"QUIRE_KEY_MAX_CONCURRENT=10", "QUIRE_KEY_RATE=1000000/1m", "QUIRE_KEY_QUOTA=100000000/month"}, ""},
		{"metering only", []string{"QUIRE_KEY_MAX_CONCURRENT=0", "QUIRE_KEY_RATE=0", "QUIRE_KEY_QUOTA=0"}, ""},
	}
	base, err := baselineBinary(mainBeforeLimits)
	if err != nil {
		return infoFigure("per-key limits and metering on /v1/sign, cost per request", fmt.Sprintf("not measured: %v", err)), ""
	}
	servers = append(servers, signServer{"neither (" + mainBeforeLimits + ")", nil, base})
	if prev, err := baselineBinary(mainGroupCommit); err == nil {
		servers = append(servers, signServer{"limits and group-committed metering (" + mainGroupCommit + ")", servers[0].env, prev})
	}
	p50 := signAlternating(servers, limitsRounds, &table, &checks)
	limited, meteredCost := pairedCost(p50[0], p50[2]), pairedCost(p50[1], p50[2])
	if len(p50) > 3 {
		rounds = fmt.Sprintf("Against %s, where a signing's count took a second commit, the tree's p50 is %+.1f%% (median of the rounds' ratios).\n\n",
			mainGroupCommit, pairedCost(p50[0], p50[3]))
	}
	on, metered, off := medianDuration(p50[0]), medianDuration(p50[1]), medianDuration(p50[2])
	cost = goalFigure("per-key limits and metering on /v1/sign, cost per request", fmt.Sprintf("at most %.0f%% of its p50", goalLimitsCostPct),
		fmt.Sprintf("%+.1f%% (median of the rounds' ratios; medians %.2f ms against %.2f ms; metering only %+.1f%%, %.2f ms)", limited, ms(on), ms(off), meteredCost, ms(metered)),
		limited <= goalLimitsCostPct)
	return cost, rounds + table.String() + "\n" + checks.String()
}

// pairedCost is the median over rounds of how much longer a's p50 was
// than b's of the same round, in percent: rounds taken in turn see the
// same machine, which a loaded machine's drift between rounds does not.
func pairedCost(a, b []time.Duration) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = 100 * float64(a[i]-b[i]) / float64(b[i])
	}
	slices.Sort(r)
	return r[len(r)/2]
}

// aloneAgainstMain floods the tree's server with key's conversions of d,
// and a server of main before the fair queue alike, taking turns, and
// returns the median round of each (the latter zero when it could not be
// measured, with a note why) and the median over rounds of the throughput
// the tree lost against main's round, in percent.
func aloneAgainstMain(target, key string, d docxFile) (tree, main flood, cost float64, note string) {
	var trees, mains []flood
	base, err := baselineBinary(mainBeforeFair)
	var mainTarget, mainKey string
	if err == nil {
		q := startQuireBin(base, fmt.Sprintf("QUIRE_CONVERT_WORKERS=%d", convertWorkers), "QUIRE_CONVERT_MAX_JOBS_PER_WORKER=-1")
		defer q.stop()
		if _, err = waitWorkers(q.url, convertWorkers, workersTimeout); err == nil {
			mainTarget, mainKey = q.url+"/v1/convert?from=docx", q.keyOf("tenant-a@example.com")
			convertOnce(&http.Client{Timeout: 5 * time.Minute}, mainTarget, mainKey, d) // warm-up
		}
	}
	for range tenantsRounds {
		trees = append(trees, floodFor(target, key, d, tenantsAlone, nil))
		if mainTarget != "" {
			mains = append(mains, floodFor(mainTarget, mainKey, d, tenantsAlone, nil))
		}
	}
	if err != nil {
		note = fmt.Sprintf(" Main before the fair queue was not measured: %v.", err)
		return medianFlood(trees), flood{}, 0, note
	}
	note = " Rounds, documents/s:" + roundRates("tree", trees) + ";" + roundRates(mainBeforeFair, mains) + "."
	lost := make([]float64, len(trees))
	for i := range trees {
		lost[i] = 100 * (mains[i].rate - trees[i].rate) / mains[i].rate
	}
	slices.Sort(lost)
	return medianFlood(trees), medianFlood(mains), lost[len(lost)/2], note
}

func roundRates(name string, f []flood) string {
	s := " " + name
	for _, x := range f {
		s += fmt.Sprintf(" %.2f", x.rate)
	}
	return s
}

// medianFlood is the round of median rate (the upper one of an even
// count), with the failures of every round; zero for none.
func medianFlood(f []flood) flood {
	if len(f) == 0 {
		return flood{}
	}
	var failed int64
	for _, x := range f {
		failed += x.failed
	}
	s := slices.SortedFunc(slices.Values(f), func(a, b flood) int { return cmp.Compare(a.rate, b.rate) })
	m := s[len(s)/2]
	m.failed = failed
	return m
}

// tenantLatencies converts d tenantsSamples times, one at a time, and
// returns the wall times in ms of those that succeeded and the failures.
func tenantLatencies(client *http.Client, target, key string, d docxFile) ([]float64, int) {
	var lat []float64
	failed := 0
	for range tenantsSamples {
		t, _, err := convertOnce(client, target, key, d)
		if err != nil {
			failed++
			continue
		}
		lat = append(lat, t.wall)
	}
	slices.Sort(lat)
	return lat, failed
}

// flood is what a flood of one key's conversions achieved.
type flood struct {
	rate   float64 // documents/s converted
	failed int64
}

// floodFor keeps tenantsFlood conversions of d in flight with key, for
// length when beside is nil, or else while beside runs.
func floodFor(target, key string, d docxFile, length time.Duration, beside func()) flood {
	client := &http.Client{Timeout: 5 * time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: tenantsFlood, MaxConnsPerHost: tenantsFlood}}
	ctx, stop := context.WithCancel(context.Background())
	var done, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range tenantsFlood {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, _, err := convertOnce(client, target, key, d); err != nil {
					failed.Add(1)
				} else {
					done.Add(1)
				}
			}
		})
	}
	if beside != nil {
		time.Sleep(2 * time.Second) // the flood fills the workers and the queue
		beside()
	} else {
		time.Sleep(length)
	}
	stop()
	f := flood{rate: float64(done.Load()) / time.Since(start).Seconds(), failed: failed.Load()}
	wg.Wait() // the requests in flight end, uncounted
	return f
}
