package safeinput

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

func TestWithoutCommentsTakesOutCommentsOnly(t *testing.T) {
	body, rels, extra := convtest.Commented(`<w:p><w:r><w:t>kept</w:t></w:r></w:p>`, "")
	body += `<w:p><ns0:commentRangeStart ns0:id="1"></ns0:commentRangeStart><w:r><w:t>other prefix</w:t></w:r><ns0:commentReference ns0:id="1"></ns0:commentReference></w:p>`
	in := convtest.DOCXWith(body, rels+`<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/>`, extra)
	before, after := parts(t, in), parts(t, withoutComments(in))
	doc := after["word/document.xml"]
	if strings.Contains(doc, "commentR") || !strings.Contains(doc, "<w:t>commented</w:t>") || !strings.Contains(doc, "<w:t>kept</w:t>") || !strings.Contains(doc, "other prefix") {
		t.Errorf("document part: %s", doc)
	}
	if r := after["word/_rels/document.xml.rels"]; strings.Contains(r, "comments") || !strings.Contains(r, "styles.xml") {
		t.Errorf("relationships: %s", r)
	}
	for name, b := range before {
		if name != "word/document.xml" && name != "word/_rels/document.xml.rels" && after[name] != b {
			t.Errorf("part %s changed", name)
		}
	}
	if len(after) != len(before) {
		t.Errorf("%d parts, want %d", len(after), len(before))
	}
}

func TestWithoutCommentsLeavesOtherInputAlone(t *testing.T) {
	const mib = 1 << 20
	large := convtest.WithRepeatedPart(convtest.DOCXWith(convtest.Commented(`<w:p/>`, "")), "word/large.xml", "", strings.Repeat("a", mib), maxCommentPartBytes/mib, strings.Repeat("a", maxCommentPartBytes%mib+1))
	for name, in := range map[string][]byte{
		"a part over the limit": large,
		"no comments":           convtest.DOCXBody(`<w:p><w:r><w:t>plain</w:t></w:r></w:p>`, ""),
		"not a ZIP":             []byte("PK\x03\x04 but not really"),
		"empty":                 nil,
	} {
		if out := withoutComments(in); !bytes.Equal(out, in) {
			t.Errorf("%s: rewritten", name)
		}
	}
}

// parts returns the decompressed parts of a ZIP package by name.
func parts(t *testing.T, pkg []byte) map[string]string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(pkg), int64(len(pkg)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		out[f.Name] = string(b)
	}
	return out
}

// FuzzWithoutComments: any input gives back either itself or a ZIP
// package that reads whole, without a panic.
func FuzzWithoutComments(f *testing.F) {
	f.Add(convtest.DOCXWith(convtest.Commented(`<w:p><w:r><w:t>x</w:t></w:r></w:p>`, "")))
	f.Add(convtest.DOCXBody(`<w:p/>`, ""))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := withoutComments(in)
		if bytes.Equal(out, in) {
			return
		}
		parts(t, out)
	})
}

// withoutComments and withoutOutsideLinks are the cleaning of the package
// in as a document of format from (office.go); in itself when it does not
// open as one.
func withoutComments(in []byte) []byte { return withoutOutsideLinks(in, engine.FromDOCX) }

func withoutOutsideLinks(in []byte, from string) []byte {
	p, err := openPackage(in, from, nil)
	if err != nil {
		return in
	}
	return p.clean()
}
