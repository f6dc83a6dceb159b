package safeinput

import (
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
	"github.com/quire-dev/quire/internal/ooxml"
)

// TestEditedPackageIsWrittenOnceWithItsCleaning: a caller's edits of a
// template (annotate's) and the cleaning of the template's comments and
// outside links go out in one rewrite, the edited parts cleaned as
// edited, the caller's new parts kept, the other parts as they were.
func TestEditedPackageIsWrittenOnceWithItsCleaning(t *testing.T) {
	body, rels, extra := convtest.Commented(`<w:p><w:r><w:t>template</w:t></w:r></w:p>`,
		`<Relationship Id="x" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="file:///etc/passwd" TargetMode="External"/>`)
	template := convtest.DOCXWith(body, rels, extra)
	z, err := ooxml.Open(template, ooxml.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	edits := &ooxml.Edits{Uncompressed: true}
	edits.Set(z, "word/document.xml", []byte(`<w:document><w:body><w:p><w:commentRangeStart w:id="0"/><w:r><w:t>filled</w:t></w:r><w:commentRangeEnd w:id="0"/></w:p></w:body></w:document>`))
	edits.Set(z, "word/media/stamp.png", []byte("\x89PNG stamp"))
	pkg := &officePackage{from: engine.FromDOCX, zip: z, kept: map[string][]byte{}}
	if err := pkg.check(testLimits()); err != nil {
		t.Fatal(err)
	}
	out, err := pkg.cleanWith(edits)
	if err != nil {
		t.Fatal(err)
	}
	before, after := parts(t, template), parts(t, out)
	if doc := after["word/document.xml"]; strings.Contains(doc, "comment") || !strings.Contains(doc, "filled") {
		t.Errorf("document part: %s", doc)
	}
	if r := after["word/_rels/document.xml.rels"]; strings.Contains(r, "comments") || strings.Contains(r, "passwd") {
		t.Errorf("relationships: %s", r)
	}
	if after["word/media/stamp.png"] != "\x89PNG stamp" {
		t.Errorf("the caller's new part: %q", after["word/media/stamp.png"])
	}
	for name, b := range before {
		if name != "word/document.xml" && name != "word/_rels/document.xml.rels" && after[name] != b {
			t.Errorf("part %s changed", name)
		}
	}
}

// TestPrepareEditedChecksTheTemplate: the template of an edited package
// is checked as any package is (a DTD, what it expands to) before any
// job, and the package written out counts against the input limit.
func TestPrepareEditedChecksTheTemplate(t *testing.T) {
	l := testLimits()
	l.MaxInputBytes = 64 << 10
	open := func(in []byte) *ooxml.Package {
		z, err := ooxml.Open(in, ooxml.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	dtd := convtest.DOCXWith(`<w:p/>`, "", map[string]string{"word/styles.xml": `<!DOCTYPE x SYSTEM "http://127.0.0.1/x.dtd"><w:styles/>`})
	if _, err := PrepareEdited(open(dtd), &ooxml.Edits{}, l); !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "word/styles.xml declares a DTD") {
		t.Errorf("a template with a DTD: %v", err)
	}
	plain := open(convtest.DOCXBody(`<w:p/>`, ""))
	large := &ooxml.Edits{Uncompressed: true}
	large.Set(plain, "word/media/large.png", make([]byte, 100<<10))
	if _, err := PrepareEdited(plain, large, l); !errors.Is(err, engine.ErrTooLarge) {
		t.Errorf("edits past the input limit: %v", err)
	}
	if _, err := PrepareEdited(open(convtest.Zip(map[string]string{"a.xml": "<a/>"})), &ooxml.Edits{}, l); !errors.Is(err, engine.ErrInvalidFormat) {
		t.Errorf("a package without a main document part: %v", err)
	}
}
