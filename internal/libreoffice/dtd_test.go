package libreoffice

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// TestPackagesDeclaringADTDAreRefused: a DTD in any XML part of an OOXML
// or OpenDocument package, whatever the part's name, encoding or nesting,
// is refused with 422 before a worker sees the document (the script
// engine would convert anything); an SVG image's DOCTYPE, which
// safeinput/packages.go takes out, and text about one are not.
func TestPackagesDeclaringADTDAreRefused(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	doctype := convtest.DTDDocument("http://127.0.0.1:9/x.dtd")
	// A comment long enough to put the DOCTYPE across the reads of the inflater.
	padded := strings.Replace(doctype, "\n<!DOCTYPE", "\n<!--"+strings.Repeat("pad ", 8190)+"-->\n<!DOCTYPE", 1)
	odt := convtest.Zip(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text", "content.xml": `<?xml version="1.0"?>
<!DOCTYPE office:document-content [<!ENTITY e SYSTEM "file:///etc/passwd">]><office:document-content/>`})
	for _, c := range []struct {
		name, from string
		in         []byte
		part       string
	}{
		{"word/document.xml with an external DTD", engine.FromDOCX, convtest.DOCXWith("", "", map[string]string{"word/document.xml": doctype}), "word/document.xml"},
		{"a DOCTYPE after a 32 KiB comment", engine.FromDOCX, convtest.DOCXWith("", "", map[string]string{"word/document.xml": padded}), "word/document.xml"},
		{"UTF-16 XML", engine.FromDOCX, convtest.DOCXWith("", "", map[string]string{"word/document.xml": convtest.UTF16LE(doctype)}), "word/document.xml"},
		{"a part not named .xml", engine.FromDOCX, convtest.DOCXWith(convtest.Paragraphs(1, "x"), "", map[string]string{"word/settings": doctype}), "word/settings"},
		{"a .rels part", engine.FromDOCX, convtest.DOCXBody(convtest.Paragraphs(1, "x"), `<!DOCTYPE r SYSTEM "http://127.0.0.1:9/r.dtd">`), "word/_rels/document.xml.rels"},
		{"an embedded package", engine.FromDOCX, nestedDOCX(0, convtest.DOCXWith("", "", map[string]string{"word/document.xml": doctype})), "word/embeddings/package.docx/word/document.xml"},
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
		"an SVG image with a DOCTYPE": convtest.DOCXWith(convtest.Paragraphs(1, "x"), "", map[string]string{"word/media/image1.svg": svg}),
		"text about a DOCTYPE":        convtest.DOCXBody(convtest.Paragraphs(1, "&lt;!DOCTYPE html&gt;"), ""),
	} {
		if _, err := p.Convert(context.Background(), in, engine.FromDOCX); err != nil {
			t.Errorf("%s: %v, want it converted", name, err)
		}
	}
}

// TestExternalDTDIsRefusedBeforeLibreOffice is the case on
// LibreOffice: the DOCX whose document.xml declares an external DTD on a
// server that accepts connections and never answers (LibreOffice 25.2
// waited for it until the job's time limit) answers 422 naming the DTD,
// the worker never sees it, and nothing connects to the server.
func TestExternalDTDIsRefusedBeforeLibreOffice(t *testing.T) {
	l := listen(t)
	p, counters := sharedSerial(t)
	in := convtest.DOCXWith("", "", map[string]string{"word/document.xml": convtest.DTDDocument(l.url("entity.dtd"))})
	_, err := p.Convert(context.Background(), in, engine.FromDOCX)
	if apiCode(err) != quire.CodeUnprocessable || !strings.Contains(err.Error(), "declares a DTD") {
		t.Fatalf("%v, want 422 naming the DTD", err)
	}
	if c := counters(); c.Converted+c.Failed != 0 {
		t.Errorf("counters %+v: the document reached the worker", c)
	}
	if l.accepted.Load() != 0 {
		t.Errorf("the DTD's server was reached: %v", l)
	}
	out, err := p.Convert(context.Background(), convtest.DOCXBody(convtest.Paragraphs(1, "after"), ""), engine.FromDOCX)
	if err != nil || !bytes.HasPrefix(out, []byte("%PDF-")) {
		t.Fatalf("the pool does not serve after the refusal: %v", err)
	}
}
