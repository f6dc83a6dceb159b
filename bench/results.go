package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// resultsFile is the results page: one table per measure, each replaced
// in place when its measure runs with -write, the others kept as they are.
const resultsFile = "bench/RESULTS.md"

// A figure is one row of a measure's table on the results page: what is
// benchRun, the goal it is held to (empty when none), what this run gave,
// and whether that meets the goal.
type figure struct {
	name, goal, value string
	met               string // "yes", "no", or "-" when there is no goal
}

// goalFigure is a figure held to a goal.
func goalFigure(name, goal, value string, met bool) figure {
	return figure{name: name, goal: goal, value: value, met: yesNo(met)}
}

// infoFigure is a figure kept for reference, with no goal of its own.
func infoFigure(name, value string) figure {
	return figure{name: name, goal: "-", value: value, met: "-"}
}

// runStamp is what every row of one run shares: when, on which commit and
// on which machine (with its load, the machine being shared).
type runStamp struct{ date, commit, machine string }

func stampNow() runStamp {
	commit := "unknown"
	if out, err := exec.Command("git", "describe", "--always", "--dirty", "--abbrev=7", "--exclude=*").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	return runStamp{
		date:    time.Now().UTC().Format("2006-01-02 15:04"),
		commit:  commit,
		machine: fmt.Sprintf("%s, %d cores, load %s", cpuModel(), runtime.NumCPU(), loadAverage()),
	}
}

// section is a measure's table on the results page, between markers that
// name the measure, so that a run can find and replace it.
func section(name, title string, figs []figure, s runStamp) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- bench %s -->\n## %s (`%s`)\n\n", name, title, name)
	b.WriteString("| figure | goal | result | met | date (UTC) | commit | machine |\n|---|---|---|---|---|---|---|\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", f.name, f.goal, f.value, f.met, s.date, s.commit, s.machine)
	}
	fmt.Fprintf(&b, "<!-- /bench %s -->\n", name)
	return b.String()
}

// replaceSection puts sec in place of the measure's table in page, or at
// the end of page when the measure has none yet.
func replaceSection(page []byte, name, sec string) ([]byte, error) {
	open, end := []byte("<!-- bench "+name+" -->\n"), []byte("<!-- /bench "+name+" -->\n")
	i := bytes.Index(page, open)
	if i < 0 {
		out := bytes.TrimRight(page, "\n")
		return append(append(out, "\n\n"...), sec...), nil
	}
	j := bytes.Index(page[i:], end)
	if j < 0 {
		return nil, fmt.Errorf("%s: the table of %s has no end marker %q", resultsFile, name, end)
	}
	out := append([]byte{}, page[:i]...)
	out = append(out, sec...)
	return append(out, page[i+j+len(end):]...), nil
}

// writeResults replaces the table of each measure that gave figures; a
// measure skipped (a tool missing) keeps its previous table.
func writeResults(path string, runs []benchRun, s runStamp) error {
	page, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for _, m := range runs {
		if len(m.res.figures) == 0 {
			fmt.Fprintf(os.Stderr, "bench: %s gave no figures; its table in %s is kept\n", m.name, path)
			continue
		}
		if page, err = replaceSection(page, m.name, section(m.name, m.res.title, m.res.figures, s)); err != nil {
			return err
		}
	}
	return os.WriteFile(path, page, 0o644)
}

// goalsTable is the figures as a run prints them, beside its other tables.
func goalsTable(figs []figure) string {
	var b strings.Builder
	b.WriteString("| figure | goal | this run | met |\n|---|---|---|---|\n")
	for _, f := range figs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f.name, f.goal, f.value, f.met)
	}
	return b.String()
}
