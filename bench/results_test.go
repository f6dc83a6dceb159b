package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteResultsReplacesOnlyItsTable(t *testing.T) {
	old := runStamp{date: "2026-01-01 00:00", commit: "aaaaaaa", machine: "old machine"}
	now := runStamp{date: "2026-02-02 00:00", commit: "bbbbbbb", machine: "new machine"}
	page := "# Benchmark results\n\nHeader kept.\n\n" +
		section("http", "HTTP overhead", []figure{infoFigure("rate", "1")}, old) + "\n" +
		section("sign", "Signing", []figure{goalFigure("p50", "at most 10ms", "2 ms", true)}, old)
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := []benchRun{
		{"sign", result{title: "Signing", figures: []figure{goalFigure("p50", "at most 10ms", "12 ms", false)}}},
		{"annotate", result{title: "Filling a template", figures: []figure{infoFigure("p50", "3 ms")}}},
		{"chromium", result{title: "Chromium", notes: "Skipped: chromium is missing.\n"}}, // no figures: nothing written
	}
	if err := writeResults(path, runs, now); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		"Header kept.",
		"| rate | - | 1 | - | 2026-01-01 00:00 | aaaaaaa | old machine |",                // http untouched
		"| p50 | at most 10ms | 12 ms | no | 2026-02-02 00:00 | bbbbbbb | new machine |", // sign replaced
		"<!-- bench annotate -->\n## Filling a template (`annotate`)",                    // annotate appended
	} {
		if !strings.Contains(got, want) {
			t.Errorf("page lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"| 2 ms |", "bench chromium"} {
		if strings.Contains(got, gone) {
			t.Errorf("page still holds %q:\n%s", gone, got)
		}
	}
	if strings.Index(got, "bench http") > strings.Index(got, "bench sign") {
		t.Errorf("the tables moved:\n%s", got)
	}
}

func TestWriteResultsRefusesATableWithoutEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	os.WriteFile(path, []byte("<!-- bench sign -->\n## Signing\n"), 0o644)
	err := writeResults(path, []benchRun{{"sign", result{title: "Signing", figures: []figure{infoFigure("p50", "1 ms")}}}}, stampNow())
	if err == nil || !strings.Contains(err.Error(), "no end marker") {
		t.Fatalf("writeResults = %v, want the missing end marker named", err)
	}
}

func TestParseArgs(t *testing.T) {
	only, write, err := parseArgs([]string{"sign", "-write", "verify"})
	if err != nil || !write || strings.Join(only, ",") != "sign,verify" {
		t.Errorf("parseArgs = %v, %v, %v", only, write, err)
	}
	if _, _, err := parseArgs([]string{"sing"}); err == nil || !strings.Contains(err.Error(), "sign") {
		t.Errorf("an unknown name: %v, want the list of measures", err)
	}
}

// The page in the repository must stay parseable by the writer: every
// measure's table has both markers, once.
func TestResultsPageHasEveryMeasure(t *testing.T) {
	b, err := os.ReadFile("RESULTS.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, m := range measures {
		open, end := "<!-- bench "+m.name+" -->\n", "<!-- /bench "+m.name+" -->\n"
		if strings.Count(page, open) != 1 || strings.Count(page, end) != 1 || strings.Index(page, open) > strings.Index(page, end) {
			t.Errorf("RESULTS.md: the table of %s is not between one pair of markers", m.name)
		}
	}
	if n := strings.Count(page, "\n"); n >= 300 {
		t.Errorf("RESULTS.md has %d lines, want under 300", n)
	}
}
