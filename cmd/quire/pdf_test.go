package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestPDFCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pdf"), filepath.Join(dir, "b.pdf")
	os.WriteFile(a, pdftest.OnePage("Alpha"), 0o600)
	os.WriteFile(b, pdftest.Generated(3, false, 0), 0o600)
	merged := filepath.Join(dir, "merged.pdf")
	var stdout, stderr bytes.Buffer
	if code := runPDF([]string{"merge", "-o", merged, a, b}, &stdout, &stderr); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr.String())
	}
	titled := filepath.Join(dir, "titled.pdf")
	if code := runPDF([]string{"metadata", "--set", "title=Merged", "-o", titled, merged}, &stdout, &stderr); code != 0 {
		t.Fatalf("metadata --set: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	if code := runPDF([]string{"metadata", titled}, &stdout, &stderr); code != 0 {
		t.Fatalf("metadata: exit %d: %s", code, stderr.String())
	}
	var m struct {
		Pages      int
		Properties map[string]string
	}
	if err := json.Unmarshal(stdout.Bytes(), &m); err != nil || m.Pages != 4 || m.Properties["title"] != "Merged" {
		t.Errorf("metadata JSON %s: %v", stdout.Bytes(), err)
	}
	if code := runPDF([]string{"split", "--ranges", "1,2-", "-o", filepath.Join(dir, "part.pdf"), merged}, &stdout, &stderr); code != 0 {
		t.Fatalf("split: exit %d: %s", code, stderr.String())
	}
	for _, name := range []string{"part_1.pdf", "part_2-4.pdf"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("split: %v", err)
		}
	}
	stderr.Reset()
	if code := runPDF([]string{"rotate", "--angle", "45", "-o", filepath.Join(dir, "r.pdf"), a}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "angle must be 90, 180 or 270") {
		t.Errorf("a bad angle: exit %d: %s", code, stderr.String())
	}
	if code := runPDF(nil, &stdout, &stderr); code != 2 {
		t.Errorf("no operation: exit %d", code)
	}
}
