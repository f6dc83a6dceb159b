package pdftest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// VeraPDF validates pdf with veraPDF (shared/tools/validators beside the
// repository) as flavour ("1b", "2b", "3b", "ua1", ...) and returns its
// report and whether the file is compliant. The test is skipped when the
// validators are absent and fails when Java is.
func VeraPDF(t testing.TB, pdf []byte, flavour string) (report string, compliant bool) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	tool := filepath.Join(filepath.Dir(file), "../../../../shared/tools/validators/verapdf")
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("veraPDF not found at %s (it lives beside the repository in shared/tools/validators)", tool)
	}
	RequireTool(t, "java", "openjdk-17-jdk-headless")
	var out bytes.Buffer
	cmd := exec.Command(tool, WriteTemp(t, pdf), flavour)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out.String(), true
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return out.String(), false
	}
	t.Fatalf("veraPDF: %v\n%s", err, out.String())
	return "", false
}
