package gotenberg_test

import (
	"bytes"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// npmClients drives the routes with Gotenberg's npm clients, unchanged
// (testdata/node: chromiumly 6, gotenberg-js-client), and checks what
// they received.
func npmClients(t *testing.T, e *env) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node not found: install Node.js 20 (apt-get install nodejs npm), then npm ci in internal/gotenberg/testdata/node (scripts/setup --test does both)")
	}
	if _, err := os.Stat("testdata/node/node_modules/chromiumly"); err != nil {
		t.Fatal("Gotenberg's npm clients are not installed: run npm ci in internal/gotenberg/testdata/node (scripts/setup --test does)")
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body><p>Fetched page</p></body></html>`))
	}))
	defer site.Close()
	dir := t.TempDir()
	docx := filepath.Join(dir, "report.docx")
	if err := os.WriteFile(docx, convtest.DOCX(2), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", "clients.js", dir)
	cmd.Dir = "testdata/node"
	hook, delivered := receiver(t)
	cmd.Env = append(os.Environ(), "QUIRE_URL="+e.URL, "QUIRE_KEY="+e.key, "PAGE_URL="+site.URL, "DOCX="+docx, "HOOK_URL="+hook)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node clients.js: %v\n%s", err, out)
	}
	read := func(name string) answer {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		ct := "application/pdf"
		if strings.HasSuffix(name, ".zip") {
			ct = "application/zip"
		}
		return answer{status: 200, header: http.Header{"Content-Type": {ct}}, body: b}
	}
	for name, want := range map[string]string{"chromiumly-html.pdf": "Invoice 42", "chromiumly-markdown.pdf": "Release notes",
		"chromiumly-url.pdf": "Fetched page", "chromiumly-office.pdf": "Page 1", "gjc-html.pdf": "Invoice 42", "gjc-markdown.pdf": "Release notes",
		"chromiumly-checks.pdf": "Checked"} {
		if got := text(t, read(name).pdf(t)); !strings.Contains(got, want) {
			t.Errorf("%s: text %q, want %q", name, got, want)
		}
	}
	if got := string(read("chromiumly-conflict.txt").body); !strings.Contains(got, "Status: 409") || !strings.Contains(got, "Error: Clientboom") {
		t.Errorf("chromiumly's page that throws, with failOnConsoleExceptions: %q, want its 409", got)
	}
	extras := read("chromiumly-extras.pdf").pdf(t)
	if got := text(t, extras); !strings.Contains(got, "Chromiumlyhead 1") || !strings.Contains(got, "Chromiumlyfoot") ||
		!strings.Contains(got, "ChromiumlyAgent/6") || strings.Contains(got, "Lightscheme") || info(t, extras, "Pages") != "1" {
		t.Errorf("chromiumly's header, footer, wait, user agent, dark scheme and single page: %q", got)
	}
	if got := info(t, read("chromiumly-html.pdf").body, "Page size"); !strings.Contains(got, "(A4)") {
		t.Errorf("chromiumly's A4 page: %q", got)
	}
	if got := info(t, read("chromiumly-office.pdf").body, "Pages"); got != "1" {
		t.Errorf("chromiumly's office conversion of page 1: %s pages", got)
	}
	if got := info(t, read("chromiumly-merge.pdf").pdf(t), "Pages"); got != "2" {
		t.Errorf("chromiumly's merge: %s pages", got)
	}
	if got := info(t, read("gjc-merge.pdf").pdf(t), "Pages"); got != "2" {
		t.Errorf("gotenberg-js-client's merge: %s pages", got)
	}
	if img, err := png.Decode(bytes.NewReader(read("chromiumly-shot.png").body)); err != nil || img.Bounds() != image.Rect(0, 0, 640, 480) {
		t.Errorf("chromiumly's screenshot: %v, want a PNG of 640x480", err)
	}
	if parts := read("chromiumly-split.zip").unzip(t); len(parts) != 2 {
		t.Errorf("chromiumly's split: %v", keys(parts))
	}
	d := next(t, delivered)
	if d.path != "/done" || d.header.Get("X-Client") != "chromiumly" || !strings.Contains(text(t, d.body), "Fetched page") {
		t.Errorf("chromiumly's merge by webhook: %s %s %v, want the merged PDF at /done with X-Client", d.method, d.path, d.header)
	}
}
