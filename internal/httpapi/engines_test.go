package httpapi_test

import (
	"archive/zip"
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestEnginesOnLibreOffice: /v1/health names the LibreOffice version that
// `soffice --version` prints, and the documents that used to hold a
// worker for the whole job timeout (a DTD in a DOCX, Markdown and HTML
// nested without end) answer 422 without holding a worker until its
// time runs out: no worker was killed for its time, none crashed (in its
// own pool, whose metrics are the server's).
func TestEnginesOnLibreOffice(t *testing.T) {
	out, err := exec.Command("soffice", "--version").Output()
	if err != nil {
		t.Fatalf("soffice --version: %v (install libreoffice-writer-nogui from bookworm-backports: scripts/setup)", err)
	}
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConfig(func(c *apitest.Config) { c.ConvertWorkers = 1 }))
	var h httpapi.Health
	e.get("/v1/health").json(t, &h)
	if fields := strings.Fields(string(out)); len(fields) < 2 || h.Engines["libreoffice"] != fields[1] {
		t.Errorf("health engines = %v, want libreoffice %q (soffice --version: %s)", h.Engines, fields, bytes.TrimSpace(out))
	}
	key := e.key("engines@example.com")
	for _, c := range []struct {
		name, query, file string
		content           []byte
	}{
		{"a DOCX declaring an external DTD", "from=docx", "dtd.docx", dtdDOCX("http://127.0.0.1:9/entity.dtd")},
		{"100,000 nested quotes", "from=md", "quotes.md", []byte(strings.Repeat(">", 100_000) + " x\n")},
		{"50,000 nested list levels", "from=md", "lists.md", []byte(strings.Repeat("- ", 50_000) + "x\n")},
		{"200,000 nested elements", "from=html", "deep.html", []byte(strings.Repeat("<div>", 200_000) + "x")},
	} {
		e.convert(key, c.query, c.file, c.content).errorBody(t, 422, "UNPROCESSABLE_DOCUMENT")
	}
	metrics := string(e.get("/metrics").body)
	for _, m := range []string{"quire_convert_worker_timeouts_total 0\n", "quire_convert_worker_crashes_total 0\n"} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %q after the refusals: a worker ran out of time or crashed on one", m)
		}
	}
	if r := e.convert(key, "from=md", "ok.md", []byte("# Fine\n\n> quoted\n")); r.status != 200 || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
		t.Errorf("a plain document after the refusals: %d %.200s", r.status, r.body)
	}
}

// dtdDOCX is a one-paragraph DOCX whose document.xml declares the
// external DTD at url.
func dtdDOCX(url string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, p := range []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE w:document SYSTEM "` + url + `">
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>entity</w:t></w:r></w:p></w:body></w:document>`},
	} {
		w, _ := z.Create(p.name)
		w.Write([]byte(p.body))
	}
	z.Close()
	return b.Bytes()
}
