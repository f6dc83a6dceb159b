package certpage

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
)

// TestLine: a shaped line, drawn at an offset on a page of its own, is the
// text pdftotext reads back, its fonts embedded, and its width scales with
// its size.
func TestLine(t *testing.T) {
	t.Parallel()
	r := testRenderer(t)
	const text = "Draft Ünïcode 日本語 ✓"
	ln, err := r.Line(text, 20, 0.5)
	if err != nil {
		t.Fatalf("Line: %v", err)
	}
	if len(ln.Fonts) < 2 {
		t.Errorf("fonts %v: want a Latin and a CJK font at least", ln.Fonts)
	}
	content := append([]byte("q 1 0 0 1 50 400 cm\n"), ln.Content...)
	file, err := pdf.Write([]pdf.Page{{
		MediaBox:  [4]float64{0, 0, 595, 842},
		Content:   append(content, "\nQ\n"...),
		Resources: pdf.Dict{"Font": ln.Fonts},
	}})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	path := filepath.Join(t.TempDir(), "line.pdf")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := extractText(t, path); got != text {
		t.Errorf("pdftotext: %q, want %q", got, text)
	}
	double, err := r.Line(text, 40, 0.5)
	if err != nil {
		t.Fatalf("Line at 40 points: %v", err)
	}
	if ln.Width <= 0 || math.Abs(double.Width-2*ln.Width) > 0.01*ln.Width {
		t.Errorf("width %v at 20 points and %v at 40, want twice as wide", ln.Width, double.Width)
	}
}

// TestMissing: characters no font has are listed once each, in order;
// spaces, format characters and marks are not.
func TestMissing(t *testing.T) {
	t.Parallel()
	r := testRenderer(t)
	// U+10FFFD is a private-use code point and U+13000 an Egyptian
	// hieroglyph: none of the default fonts draws either.
	got := r.Missing("a\U0010FFFD b\u200d\U00013000 日\U0010FFFD\u0301 ✓\u00a0")
	if want := []rune{0x10FFFD, 0x13000}; !slices.Equal(got, want) {
		t.Errorf("Missing: %U, want %U", got, want)
	}
	if got := r.Missing("Ünïcode 日本語 שלום ✓"); len(got) != 0 {
		t.Errorf("Missing of drawable text: %U", got)
	}
}

// TestLazyLoadsOnceFontsInstalled: a lazy renderer whose fonts are missing
// fails naming the package to install, and the next use after they are
// installed succeeds, without a restart.
func TestLazyLoadsOnceFontsInstalled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lazy := NewLazy(Options{FontDir: dir})
	if _, _, err := lazy.Pages(sampleData("Ann"), A4); err == nil || !strings.Contains(err.Error(), "install the Debian package fonts-dejavu-core") {
		t.Fatalf("Pages without fonts: %v, want the package to install", err)
	}
	installed := append(DefaultFonts(""), DefaultSignatureFont(""))
	for i, f := range append(DefaultFonts(dir), DefaultSignatureFont(dir)) {
		if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(installed[i].Path, f.Path); err != nil {
			t.Fatal(err)
		}
	}
	pages, sigRect, err := lazy.Pages(sampleData("Ann"), A4)
	if err != nil {
		t.Fatalf("Pages once the fonts are installed: %v", err)
	}
	if len(pages) == 0 || pdf.Box(sigRect).Empty() {
		t.Errorf("%d pages, signature box %v", len(pages), sigRect)
	}
	if pages[0].MediaBox != [4]float64{0, 0, A4.Width, A4.Height} {
		t.Errorf("first page %v, want A4", pages[0].MediaBox)
	}
}
