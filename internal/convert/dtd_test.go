package convert

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// dtdDocument is the document body: word/document.xml declaring
// an external DTD at url.
func dtdDocument(url string) string {
	return `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE w:document SYSTEM "` + url + `">
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>external entity</w:t></w:r></w:p></w:body></w:document>`
}

// utf16LE encodes s as UTF-16LE with a byte order mark (s is ASCII).
func utf16LE(s string) string {
	return "\xff\xfe" + string(utf16Bytes(s, false))
}

// TestPackagesDeclaringADTDAreRefused: a DTD in any XML part of an OOXML
// or OpenDocument package, whatever the part's name, encoding or nesting,
// is refused with 422 before a worker sees the document (the script
// engine would convert anything); an SVG image's DOCTYPE, which
// packages.go takes out, and text about one are not.
func TestPackagesDeclaringADTDAreRefused(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	doctype := dtdDocument("http://127.0.0.1:9/x.dtd")
	// A comment long enough to put the DOCTYPE across the reads of the inflater.
	padded := strings.Replace(doctype, "\n<!DOCTYPE", "\n<!--"+strings.Repeat("pad ", 8190)+"-->\n<!DOCTYPE", 1)
	odt := zipOf(map[string]string{"mimetype": odfMimeTypes[engine.FromODT], "content.xml": `<?xml version="1.0"?>
<!DOCTYPE office:document-content [<!ENTITY e SYSTEM "file:///etc/passwd">]><office:document-content/>`})
	for _, c := range []struct {
		name, from string
		in         []byte
		part       string
	}{
		{"word/document.xml with an external DTD", engine.FromDOCX, docxWith("", "", map[string]string{"word/document.xml": doctype}), "word/document.xml"},
		{"a DOCTYPE after a 32 KiB comment", engine.FromDOCX, docxWith("", "", map[string]string{"word/document.xml": padded}), "word/document.xml"},
		{"UTF-16 XML", engine.FromDOCX, docxWith("", "", map[string]string{"word/document.xml": utf16LE(doctype)}), "word/document.xml"},
		{"a part not named .xml", engine.FromDOCX, docxWith(paragraphs(1, "x"), "", map[string]string{"word/settings": doctype}), "word/settings"},
		{"a .rels part", engine.FromDOCX, docx(paragraphs(1, "x"), `<!DOCTYPE r SYSTEM "http://127.0.0.1:9/r.dtd">`), "word/_rels/document.xml.rels"},
		{"an embedded package", engine.FromDOCX, nestedDOCX(0, docxWith("", "", map[string]string{"word/document.xml": doctype})), "word/embeddings/package.docx/word/document.xml"},
		{"an ODT with an internal subset", engine.FromODT, odt, "content.xml"},
	} {
		_, err := p.Convert(context.Background(), c.in, c.from)
		if !errors.Is(err, engine.ErrUnprocessable) || apiCode(err) != quire.CodeUnprocessable || !strings.Contains(err.Error(), "part "+c.part+" declares a DTD") {
			t.Errorf("%s: %v, want 422 naming the part %s", c.name, err, c.part)
		}
	}
	if c := p.Counters(); c.Converted+c.Failed != 0 {
		t.Errorf("counters %+v: a document with a DTD reached the worker", c)
	}
	svg := `<?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg/>`
	for name, in := range map[string][]byte{
		"an SVG image with a DOCTYPE": docxWith(paragraphs(1, "x"), "", map[string]string{"word/media/image1.svg": svg}),
		"text about a DOCTYPE":        docx(paragraphs(1, "&lt;!DOCTYPE html&gt;"), ""),
	} {
		if _, err := p.Convert(context.Background(), in, engine.FromDOCX); err != nil {
			t.Errorf("%s: %v, want it converted", name, err)
		}
	}
}

// TestDTDScannerFindsMarksAcrossWrites writes XML with a DOCTYPE one to
// seven bytes at a time: the mark is found wherever the writes cut it.
func TestDTDScannerFindsMarksAcrossWrites(t *testing.T) {
	for _, doc := range []string{dtdDocument("http://h/x.dtd"), utf16LE(dtdDocument("http://h/x.dtd")), "\xfe\xff" + string(utf16Bytes(dtdDocument("x"), true))} {
		for step := 1; step <= 7; step++ {
			s, err := &dtdScanner{}, error(nil)
			for b := []byte(doc); len(b) > 0 && err == nil; b = b[min(step, len(b)):] {
				_, err = s.Write(b[:min(step, len(b))])
			}
			if !errors.Is(err, errDTD) {
				t.Errorf("%d-byte writes of %.20q: no DTD found", step, doc)
			}
		}
	}
	s := &dtdScanner{}
	for _, w := range []string{"<w:document><!-- <!DOC", "TYPX --></w:document>", strings.Repeat("<!DOCTYP", 100)} {
		if _, err := s.Write([]byte(w)); err != nil {
			t.Errorf("%q: %v, but no DOCTYPE was written", w, err)
		}
	}
}

// TestExternalDTDIsRefusedBeforeLibreOffice is the case on
// LibreOffice: the DOCX whose document.xml declares an external DTD on a
// server that accepts connections and never answers (LibreOffice 25.2
// waited for it until the job's time limit) answers 422 naming the DTD,
// the worker never sees it, and nothing connects to the server.
func TestExternalDTDIsRefusedBeforeLibreOffice(t *testing.T) {
	requireLibreOffice(t)
	l := listen(t)
	p := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	in := docxWith("", "", map[string]string{"word/document.xml": dtdDocument(l.url("entity.dtd"))})
	_, err := p.Convert(context.Background(), in, engine.FromDOCX)
	if apiCode(err) != quire.CodeUnprocessable || !strings.Contains(err.Error(), "declares a DTD") {
		t.Fatalf("%v, want 422 naming the DTD", err)
	}
	if c := p.Counters(); c.Converted+c.Failed != 0 {
		t.Errorf("counters %+v: the document reached the worker", c)
	}
	if l.accepted.Load() != 0 {
		t.Errorf("the DTD's server was reached: %v", l)
	}
	out, err := p.Convert(context.Background(), docx(paragraphs(1, "after"), ""), engine.FromDOCX)
	if err != nil || !bytes.HasPrefix(out, []byte("%PDF-")) {
		t.Fatalf("the pool does not serve after the refusal: %v", err)
	}
}
