// Package pdfcheck runs the PDF validators quire's tests trust on a file
// and reports every error or warning they print: qpdf --check (qpdf),
// pdffonts and pdfinfo (poppler-utils), mutool info (mupdf-tools) and
// pdfcpu's validation in relaxed mode (strict mode demands /FirstChar even
// for the standard 14 fonts, which ISO 32000-1 exempts).
package pdfcheck

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	pdfcpulog "github.com/pdfcpu/pdfcpu/pkg/log"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// Valid fails the test unless every validator accepts pdf without an error
// or a warning; name says which file in the message.
func Valid(t testing.TB, name string, pdf []byte) {
	t.Helper()
	if problems := Problems(t, pdf); len(problems) > 0 {
		t.Errorf("%s: the validators find %d problems:\n%s", name, len(problems), strings.Join(problems, "\n"))
	}
}

// Problems returns what the validators print about pdf besides their
// normal report, one line each, prefixed with the validator's name. A
// validator that is not installed fails the test, naming its package.
func Problems(t testing.TB, pdf []byte) []string {
	t.Helper()
	path := pdftest.WriteTemp(t, pdf)
	var out []string
	for _, v := range []struct {
		pkg  string
		args []string
	}{
		{"qpdf", []string{"qpdf", "--check", path}},
		{"poppler-utils", []string{"pdffonts", path}},
		{"poppler-utils", []string{"pdfinfo", path}},
		{"mupdf-tools", []string{"mutool", "info", path}},
	} {
		out = append(out, runTool(t, v.pkg, v.args)...)
	}
	return append(out, pdfcpuProblems(pdf)...)
}

// runTool runs a validator and returns the lines it writes to stderr, its
// exit status when not zero, and, for qpdf, its warnings (written to
// stdout).
func runTool(t testing.TB, pkg string, args []string) []string {
	t.Helper()
	if _, err := exec.LookPath(args[0]); err != nil {
		t.Fatalf("%s is not installed: install the Debian package %s (scripts/setup --test)", args[0], pkg)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var problems []string
	report := func(text string) {
		for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
			if l != "" {
				problems = append(problems, args[0]+": "+l)
			}
		}
	}
	report(stderr.String())
	if args[0] == "qpdf" {
		if o := stdout.String(); !strings.Contains(o, "No syntax or stream encoding errors found") || strings.Contains(o, "WARNING") {
			report(o)
		}
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		problems = append(problems, fmt.Sprintf("%s: exit status %d", args[0], exit.ExitCode()))
	} else if err != nil {
		t.Fatalf("%s: %v", args[0], err)
	}
	return problems
}

// pdfcpuLog collects the validation log, in which pdfcpu's relaxed mode
// reports what it repaired, skipped or tolerated ("digested"). The logger
// is global to pdfcpu, so validations run one at a time.
var pdfcpuLog struct {
	sync.Mutex
	lines []string
}

// collector is the pdfcpu logger that keeps those reports in pdfcpuLog.
type collector struct{}

func (collector) Printf(format string, args ...any) {
	collector{}.Println(fmt.Sprintf(format, args...))
}
func (collector) Println(args ...any) {
	l := strings.TrimSpace(fmt.Sprintln(args...))
	for _, kind := range []string{"pdfcpu repaired:", "pdfcpu skipped:", "pdfcpu digested:"} {
		if strings.HasPrefix(l, kind) {
			pdfcpuLog.lines = append(pdfcpuLog.lines, "pdfcpu: "+strings.TrimPrefix(l, "pdfcpu "))
		}
	}
}
func (collector) Fatalf(format string, args ...any) { collector{}.Printf(format, args...) }
func (collector) Fatalln(args ...any)               { collector{}.Println(args...) }

// pdfcpuProblems validates pdf with pdfcpu in relaxed mode and returns its
// error and what it reported tolerating.
func pdfcpuProblems(pdf []byte) []string {
	pdfcpuLog.Lock()
	defer pdfcpuLog.Unlock()
	pdfcpuLog.lines = nil
	api.DisableConfigDir()
	pdfcpulog.SetReadLogger(collector{})
	pdfcpulog.SetValidateLogger(collector{})
	defer pdfcpulog.SetReadLogger(nil)
	defer pdfcpulog.SetValidateLogger(nil)
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Optimize = false
	if err := api.Validate(bytes.NewReader(pdf), conf); err != nil {
		pdfcpuLog.lines = append(pdfcpuLog.lines, "pdfcpu: "+err.Error())
	}
	return pdfcpuLog.lines
}
