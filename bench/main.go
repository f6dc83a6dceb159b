// Command bench runs quire's benchmarks on this machine and writes the
// results, with the machine and the date, to bench/RESULTS.md. Each
// benchmark compares quire with a baseline measured in the same run, so the
// ratios mean something on a shared, noisy machine.
//
//	go run ./bench            (make bench builds bin/quire first)
//	go run ./bench annotate   (only the named benchmarks, printed, RESULTS.md untouched)
package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

type result struct {
	title string
	table string // a Markdown table
	notes string
}

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
	all := []struct {
		name string
		run  func() result
	}{{"http", httpOverhead}, {"collect", collectThroughput}, {"collect-2x", collect2xThroughput}, {"convert", convertBenchmark}, {"convert-latency", convertLatency}, {"convert-formats", formatsBenchmark}, {"fidelity", fidelityBenchmark}, {"convert-versions", convertVersionsBenchmark}, {"sign", signBenchmark}, {"sign-token", signTokenBenchmark}, {"annotate", annotateBenchmark}, {"tenants", tenantsBenchmark}, {"two-tenants", twoTenantsBenchmark}, {"chromium", chromiumBenchmark}, {"pdftools", pdfToolsBenchmark}, {"jobs", jobsBenchmark}, {"verify", verifyBenchmark}}
	only := os.Args[1:]
	var results []result
	for _, bm := range all {
		if len(only) == 0 || slices.Contains(only, bm.name) {
			results = append(results, bm.run())
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Benchmark results\n\nWritten by `make bench` on %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "Machine: %s, %d cores, %s, %s/%s.\n\n", cpuModel(), runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, r := range results {
		fmt.Fprintf(&b, "## %s\n\n%s\n%s\n", r.title, r.table, r.notes)
	}
	if len(only) > 0 {
		os.Stdout.Write(b.Bytes())
		return
	}
	if err := os.WriteFile("bench/RESULTS.md", b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	os.Stdout.Write(b.Bytes())
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
