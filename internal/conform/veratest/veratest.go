// Package veratest runs veraPDF, the reference PDF/A and PDF/UA
// validator, from tests: many files in one run, since the JVM's start
// costs more than checking a file. veraPDF lives in shared/ beside the
// repository (tools/validators); VeraBatch.java, here, drives its
// library, as its own command line takes one file at a time.
package veratest

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

//go:embed VeraBatch.java
var batchSource []byte

// Report is veraPDF's verdict on one file.
type Report struct {
	Compliant bool
	// Failed lists the failed rules, "CLAUSE-TEST xCOUNT DESCRIPTION".
	Failed []string
}

// libDir finds shared/tools/validators/verapdf-lib beside the repository
// that holds the working directory.
func libDir() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			lib := filepath.Join(filepath.Dir(dir), "shared", "tools", "validators", "verapdf-lib")
			_, err := os.Stat(lib)
			return lib, err == nil
		}
	}
	return "", false
}

// Validate checks files (paths) against flavour ("1b", "2b", "3b",
// "ua1"...) and returns veraPDF's report of each, by path. It skips t
// when veraPDF is absent, and fails t when java is.
func Validate(t testing.TB, flavour string, files []string) map[string]Report {
	t.Helper()
	lib, ok := libDir()
	if !ok {
		t.Skip("veraPDF not found: it lives in shared/tools/validators beside the repository")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatal("java not found: veraPDF needs Java 17 or later (apt-get install openjdk-17-jre-headless)")
	}
	src := filepath.Join(t.TempDir(), "VeraBatch.java")
	if err := os.WriteFile(src, batchSource, 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", filepath.Join(lib, "*"), src, flavour}, files...)
	var stderr bytes.Buffer
	cmd := exec.Command(java, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("veraPDF: %v\n%s", err, stderr.Bytes())
	}
	return parse(t, out, files)
}

func parse(t testing.TB, out []byte, files []string) map[string]Report {
	t.Helper()
	reports := map[string]Report{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		switch {
		case f[0] == "file" && len(f) == 3:
			cur = f[1]
			reports[cur] = Report{Compliant: f[2] == "true"}
		case f[0] == "rule" && len(f) == 4 && cur != "":
			r := reports[cur]
			r.Failed = append(r.Failed, fmt.Sprintf("%s x%s %s", f[1], f[2], f[3]))
			reports[cur] = r
		}
	}
	for _, f := range files {
		if _, ok := reports[f]; !ok {
			t.Fatalf("veraPDF reported nothing on %s:\n%s", f, out)
		}
	}
	return reports
}

// RequireCompliant fails t for every file that veraPDF finds not
// compliant with flavour, naming the rules it breaks.
func RequireCompliant(t testing.TB, flavour string, files []string) {
	t.Helper()
	reports := Validate(t, flavour, files)
	for _, f := range files {
		if r := reports[f]; !r.Compliant {
			t.Errorf("%s is not PDF/%s compliant:\n  %s", filepath.Base(f), flavour, strings.Join(r.Failed, "\n  "))
		}
	}
}
