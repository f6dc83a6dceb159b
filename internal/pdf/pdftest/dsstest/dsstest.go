// Package dsstest runs the EU DSS library, the reference validator of
// PAdES signatures, on PDFs that tests make: every signature's format
// level, indication and sub-indication. DSS lives beside the repository
// (shared/tools/validators/dss-lib) and runs on Java 17.
package dsstest

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// Sig is DSS's verdict on one signature.
type Sig struct{ Format, Indication, Sub string }

// here is this package's directory, from which the library and the
// batch program are found whatever package's test runs.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Lib is the DSS library's directory.
func Lib() string { return filepath.Join(here(), "../../../../../shared/tools/validators/dss-lib") }

// Require skips the test when DSS is not beside the repository, and
// fails it when Java is missing.
func Require(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(Lib()); err != nil {
		t.Skipf("EU DSS not found at %s (it lives beside the repository in shared/tools/validators)", Lib())
	}
	pdftest.RequireTool(t, "java", "openjdk-17-jdk-headless")
}

// Validate validates files with EU DSS in one JVM (testdata/
// DssBatch.java), each with the trust anchors given (PEM files), under
// policy (a file; "" for DSS's default). It returns, per file, the
// verdict per signature field.
func Validate(t *testing.T, files []string, trust []string, policy string) []map[string]Sig {
	t.Helper()
	var manifest strings.Builder
	for _, f := range files {
		fmt.Fprintf(&manifest, "%s\t%s\n", f, strings.Join(trust, ","))
	}
	list := writeTemp(t, "manifest.txt", []byte(manifest.String()))
	args := []string{"-Xmx1g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=off",
		"-cp", Lib() + "/*", filepath.Join(here(), "testdata/DssBatch.java"), list}
	if policy != "" {
		args = append(args, policy)
	}
	out, err := exec.Command("java", args...).Output()
	if err != nil {
		t.Fatalf("DssBatch: %v\n%s", err, out)
	}
	var res []map[string]Sig
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, "\t")
		switch f[0] {
		case "file":
			res = append(res, map[string]Sig{})
		case "signature":
			res[len(res)-1][f[1]] = Sig{Format: f[2], Indication: f[3], Sub: f[4]}
		case "error":
			t.Errorf("DSS on file %d: %s", len(res), f[1])
		}
	}
	if len(res) != len(files) {
		t.Fatalf("DSS answered for %d of %d files:\n%s", len(res), len(files), out)
	}
	return res
}

// StrictPolicy is DSS's default validation policy with the checks of
// changes after a signature raised from warnings to failures, as quire
// judges them: DocMDP, FieldMDP and lock violations, and changes DSS
// cannot classify. The policy is read from DSS's own jar.
func StrictPolicy(t *testing.T) string {
	t.Helper()
	jars, _ := filepath.Glob(Lib() + "/dss-*-local.jar")
	if len(jars) == 0 {
		t.Fatalf("no DSS jar in %s", Lib())
	}
	z, err := zip.OpenReader(jars[0])
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	f, err := z.Open("policy/constraint.xml")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(f)
	policy := string(b)
	for _, c := range []string{"DocMDP", "FieldMDP", "SigFieldLock", "UndefinedChanges"} {
		policy = strings.ReplaceAll(policy, "<"+c+` Level="WARN" />`, "<"+c+` Level="FAIL" />`)
	}
	return writeTemp(t, "strict-constraint.xml", []byte(policy))
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
