package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/quire-dev/quire/internal/chromium"
)

// TestConvertCommandPrintsWithChromium: quire convert prints HTML and
// Markdown with Chromium, as POST /v1/convert does (a CSS grid's two
// cells come out side by side, which LibreOffice stacks), and with
// LibreOffice when --engine libreoffice asks for it. The PDF's producer
// tells the engine: Chromium's Skia, or LibreOffice.
func TestConvertCommandPrintsWithChromium(t *testing.T) {
	requireConvertEngine(t)
	if _, err := os.Stat(chromium.DefaultPath()); err != nil {
		t.Fatal("quire convert prints HTML with Chromium: apt-get install chromium-headless-shell (or chromium)")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "grid.html")
	os.WriteFile(page, []byte(`<!DOCTYPE html><html><head><style>.g { display: grid; grid-template-columns: 1fr 1fr }</style></head>`+
		`<body><div class="g"><div>Leftcell</div><div>Rightcell</div></div></body></html>`), 0o600)
	notes := filepath.Join(dir, "notes.md")
	os.WriteFile(notes, []byte("# Notes\n\nSome text.\n"), 0o600)
	for _, c := range []struct {
		in       string
		args     []string
		producer string
	}{
		{page, nil, "Skia"},
		{notes, nil, "Skia"},
		{page, []string{"--engine", "libreoffice"}, "LibreOffice"},
		{notes, []string{"--paper", "Letter"}, "Skia"},
	} {
		out := filepath.Join(dir, "out.pdf")
		var stdout, stderr bytes.Buffer
		if code := runConvert(append([]string{c.in, "-o", out}, c.args...), &stdout, &stderr); code != 0 {
			t.Fatalf("quire convert %s %v exited %d: %s", c.in, c.args, code, stderr.String())
		}
		info, err := exec.Command("pdfinfo", out).Output()
		if m := regexp.MustCompile(`(?m)^Producer:\s+(.*)$`).FindSubmatch(info); err != nil || m == nil || !bytes.Contains(m[1], []byte(c.producer)) {
			t.Errorf("quire convert %s %v: producer %q, want %s (pdfinfo: %v)\n%s", filepath.Base(c.in), c.args, m, c.producer, err, info)
		}
		if c.in == page && c.producer == "Skia" {
			words := bboxWords(t, out)
			l, lok := words["Leftcell"]
			r, rok := words["Rightcell"]
			if !lok || !rok || r[0] <= l[2] || r[1]-l[1] > 1 || l[1]-r[1] > 1 {
				t.Errorf("the grid's cells are not side by side: left %v, right %v", l, r)
			}
		}
	}
}

// bboxWords returns each word of the PDF at path with its box (xMin,
// yMin, xMax, yMax), as pdftotext -bbox reports it.
func bboxWords(t *testing.T, path string) map[string][4]float64 {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	words := map[string][4]float64{}
	re := regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
	for _, m := range re.FindAllSubmatch(out, -1) {
		words[string(m[5])] = [4]float64{atof(m[1]), atof(m[2]), atof(m[3]), atof(m[4])}
	}
	return words
}
