package certpage

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Page sizes used by the tests, in points.
var (
	letter      = PageSize{Width: 612, Height: 792}
	a6          = PageSize{Width: 297.64, Height: 419.53}
	a4Landscape = PageSize{Width: 841.89, Height: 595.28}
)

// defaultRenderer is the renderer of the default fonts, loaded once for
// all the tests.
var defaultRenderer = NewLazy(Options{})

// testRenderer returns the default renderer; its error already names the
// Debian package of a missing font.
func testRenderer(t testing.TB) *Renderer {
	t.Helper()
	r, err := defaultRenderer.Renderer()
	if err != nil {
		t.Fatalf("loading the default fonts: %v", err)
	}
	return r
}

// tool returns the path of a command-line tool, failing the test with the
// Debian package to install when it is missing.
func tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found: install the Debian package %s", name, pkg)
	}
	return p
}

// run runs a tool and returns its standard output. Any message on standard
// error fails the test: poppler and mupdf report broken fonts and syntax
// there while still exiting 0.
func run(t testing.TB, pkg, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(tool(t, name, pkg), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	// mupdf as built by Debian says on every run that it lacks colour
	// management, which says nothing about the file.
	if msg := strings.ReplaceAll(stderr.String(), "warning: ICC support is not available\n", ""); msg != "" {
		t.Fatalf("%s %s reported: %s", name, strings.Join(args, " "), msg)
	}
	return stdout.String()
}

// renderFile renders d and writes the PDF into a temporary file, checked with
// qpdf --check.
func renderFile(t testing.TB, d Data, size PageSize) (path string, pdf []byte, sigRect [4]float64) {
	t.Helper()
	pdf, sigRect, err := testRenderer(t).Render(d, size)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	path = filepath.Join(t.TempDir(), "cert.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, "qpdf", "qpdf", "--check", path)
	if !strings.Contains(out, "No syntax or stream encoding errors found") {
		t.Fatalf("qpdf --check: %s", out)
	}
	return path, pdf, sigRect
}

// extractText is pdftotext's output with the bidi embedding marks it puts
// around right-to-left runs (U+202A..U+202E) removed and whitespace collapsed,
// so a Hebrew or Arabic name can be compared in logical order.
func extractText(t testing.TB, path string, args ...string) string {
	t.Helper()
	return normalize(run(t, "poppler-utils", "pdftotext", append(append([]string{"-enc", "UTF-8"}, args...), path, "-")...))
}

// normalize removes bidi embedding marks and collapses whitespace.
func normalize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= '\u202a' && r <= '\u202e' {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// sampleData is a certificate with a three-event trail; name is used for the
// signer and in a field_change event.
func sampleData(name string) Data {
	return Data{
		DocumentSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		EventID:        "evt_01HZX3",
		Signer:         Signer{Name: name, Email: "signer@example.com", IP: "203.0.113.7", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0"},
		SignedAt:       t0,
		Organization:   "Acme Légal GmbH",
		Events: []Event{
			{Type: "ready", Timestamp: t0.Add(-5 * time.Minute)},
			{Type: "field_change", Timestamp: t0.Add(-2*time.Minute + 250*time.Millisecond), Data: map[string]any{"fieldId": "full_name", "value": name}},
			{Type: "submit", Timestamp: t0.Add(-time.Second), Data: map[string]any{"page": 1.0, "client": map[string]any{"tz": "Europe/Paris"}}},
		},
		Metadata: map[string]any{"orderId": "A-1042", "tags": []any{"nda", "2025"}},
		Certificate: CertInfo{
			Subject: "CN=quire signing, O=Quire", Issuer: "CN=Quire CA", SHA256: "3a7bd3e2360a3d29eea436fcfb7e44c735d117c42d1c1835420b6b9942dd4f1b",
			NotBefore: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC),
		},
		VerifyHint: "POST /v1/verify or pdfsig; certificate at GET /v1/verify/key",
	}
}

// signaturePNG draws a w×h black stroke on a transparent background, like a
// signature pad's canvas.toDataURL, and returns it as a data URI.
func signaturePNG(t testing.TB, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		y := h/2 + int(float64(h/3)*sinApprox(float64(x)/float64(w)*12))
		for dy := -2; dy <= 2; dy++ {
			img.SetNRGBA(x, min(max(y+dy, 0), h-1), color.NRGBA{A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// sinApprox is a triangle wave standing in for a handwriting stroke.
func sinApprox(x float64) float64 {
	x -= 4 * float64(int(x/4))
	if x < 2 {
		return x - 1
	}
	return 3 - x
}

func eventsText(events []Event) []string {
	var out []string
	for i, ev := range events {
		out = append(out, fmt.Sprintf("%d. %s", i+1, ev.Type), formatTime(ev.Timestamp))
	}
	return out
}
