// Command bench runs quire's benchmarks on this machine. Each benchmark
// compares quire with a baseline benchRun in the same run, so the ratios
// mean something on a shared, noisy machine. A run prints its full tables
// and notes; with -write it also replaces the measure's table on the
// results page, bench/RESULTS.md (goal, figure, date, commit, machine).
//
//	go run ./bench -write           (every measure; make bench builds bin/quire first)
//	go run ./bench annotate -write  (one measure, its table replaced in place)
//	go run ./bench annotate         (printed only, RESULTS.md untouched)
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

type result struct {
	title   string
	table   string // a Markdown table
	notes   string
	figures []figure // the rows of the measure's table on the results page
}

// benchRun is one measure's result under the name it is run by.
type benchRun struct {
	name string
	res  result
}

// A benchmark is one measure, run by its name.
type benchmark struct {
	name string
	run  func() result
}

var measures = []benchmark{{"http", httpOverhead}, {"collect", collectThroughput}, {"collect-2x", collect2xThroughput}, {"convert", convertBenchmark}, {"convert-latency", convertLatency}, {"convert-formats", formatsBenchmark}, {"fidelity", fidelityBenchmark}, {"convert-versions", convertVersionsBenchmark}, {"sign", signBenchmark}, {"sign-token", signTokenBenchmark}, {"annotate", annotateBenchmark}, {"tenants", tenantsBenchmark}, {"two-tenants", twoTenantsBenchmark}, {"chromium", chromiumBenchmark}, {"pdftools", pdfToolsBenchmark}, {"jobs", jobsBenchmark}, {"verify", verifyBenchmark}, {"conformance", conformanceBenchmark}, {"gotenberg", gotenbergBenchmark}}

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "baseline-server" {
		// Re-executed as a do-nothing server: baseline-server ADDR [FILE].
		file := ""
		if len(os.Args) > 3 {
			file = os.Args[3]
		}
		baselineServer(os.Args[2], file)
		return
	}
	only, write, err := parseArgs(os.Args[1:])
	if err == errHelp {
		fmt.Printf("usage: go run ./bench [NAME...] [-write]\nmeasures: %s\n", measureNames())
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	stamp := stampNow()
	var runs []benchRun
	for _, m := range measures {
		if len(only) == 0 || slices.Contains(only, m.name) {
			r := m.run()
			fmt.Printf("## %s\n\n%s\n%s\n", r.title, r.table, r.notes)
			runs = append(runs, benchRun{m.name, r})
		}
	}
	if !write {
		return
	}
	if err := writeResults(resultsFile, runs, stamp); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

var errHelp = errors.New("help asked")

// parseArgs reads the measures' names and -write, in any order (flag
// would stop at the first name).
func parseArgs(args []string) (only []string, write bool, err error) {
	for _, a := range args {
		switch {
		case a == "-write" || a == "--write":
			write = true
		case a == "-h" || a == "-help" || a == "--help":
			return nil, false, errHelp
		case slices.ContainsFunc(measures, func(m benchmark) bool { return m.name == a }):
			only = append(only, a)
		default:
			return nil, false, fmt.Errorf("unknown measure or flag %q (measures: %s; flag: -write)", a, measureNames())
		}
	}
	return only, write, nil
}

func measureNames() string {
	names := make([]string, len(measures))
	for i, m := range measures {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}

func cpuModel() string {
	info, _ := os.ReadFile("/proc/cpuinfo")
	for _, line := range strings.Split(string(info), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func row(name string, s stats, base float64) string {
	return fmt.Sprintf("| %s | %d | %.0f | %.2f | %.2f | %.2f | %d | %.1f | %.1f |\n", name, s.requests, s.rate(),
		ms(s.p50), ms(s.p99), s.rate()/base, s.failures, us(s.serverCPU), us(s.clientCPU))
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

const tableHead = "| target | requests | req/s | p50 ms | p99 ms | ratio to baseline | failures | server CPU µs/request | load generator CPU µs/request |\n|---|---|---|---|---|---|---|---|---|\n"
