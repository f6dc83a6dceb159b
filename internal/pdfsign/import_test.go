package pdfsign

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/quire-dev/quire/internal/pdfsign/pdftest"
)

// twoPages is a PDF whose two pages share one resource dictionary holding
// a stream (as rendered certificate pages share their fonts).
func twoPages() []byte {
	font := "FONTDATA-shared-by-both-pages"
	return pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 300 400] >>",
		"<< /Type /Page /Parent 2 0 R /Contents 5 0 R /Resources 7 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Contents 6 0 R /Resources 7 0 R /MediaBox [0 0 400 300] >>",
		"<< /Length 9 >>\nstream\n(one) Tj \nendstream",
		"<< /Length 9 >>\nstream\n(two) Tj \nendstream",
		"<< /XObject << /X1 8 0 R >> >>",
		"<< /Length 29 >>\nstream\n"+font+"\nendstream")
}

func TestImportPagesKeepsSharedStreamsShared(t *testing.T) {
	pages, err := ImportPages(t.Context(), twoPages())
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].MediaBox != [4]float64{0, 0, 300, 400} || pages[1].MediaBox != [4]float64{0, 0, 400, 300} ||
		!bytes.Contains(pages[0].Content, []byte("(one)")) || !bytes.Contains(pages[1].Content, []byte("(two)")) {
		t.Fatalf("pages %+v", pages)
	}
	out, err := AppendPages(t.Context(), pdftest.OnePage("host"), pages)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, []byte("FONTDATA-shared-by-both-pages")); n != 1 {
		t.Errorf("the shared stream is written %d times, want once", n)
	}
	l, err := PageLayout(t.Context(), out)
	if err != nil || l.Pages != 3 || l.LastWidth != 400 || l.LastHeight != 300 {
		t.Errorf("layout %+v, %v", l, err)
	}
	if !bytes.HasPrefix(out, pdftest.OnePage("host")) {
		t.Error("the host document is not a prefix of the output")
	}
}

func TestPageLayoutRotated(t *testing.T) {
	rotated := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Rotate 90 >>")
	l, err := PageLayout(t.Context(), rotated)
	if err != nil || l.Pages != 1 || l.LastWidth != 842 || l.LastHeight != 595 {
		t.Errorf("layout %+v, %v", l, err)
	}
}

// TestImportPagesKeepsIndirectObjectsIndirect: objects that the source
// holds as indirect objects stay indirect in the output, as ISO 32000-1
// requires of a font descriptor (pdffonts fails on one written inline),
// and a dictionary shared by two pages is written once.
func TestImportPagesKeepsIndirectObjectsIndirect(t *testing.T) {
	src := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 /MediaBox [0 0 300 400] >>",
		"<< /Type /Page /Parent 2 0 R /Contents 5 0 R /Resources 6 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Contents 5 0 R /Resources 6 0 R >>",
		"<< /Length 9 >>\nstream\n(one) Tj \nendstream",
		"<< /Font << /F1 7 0 R >> >>",
		"<< /Type /Font /Subtype /TrueType /BaseFont /Shared /FontDescriptor 8 0 R >>",
		"<< /Type /FontDescriptor /FontName /Shared /Flags 32 >>")
	pages, err := ImportPages(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	out, err := AppendPages(t.Context(), pdftest.OnePage("host"), pages)
	if err != nil {
		t.Fatal(err)
	}
	added := out[len(pdftest.OnePage("host")):]
	if !regexp.MustCompile(`/FontDescriptor \d+ 0 R`).Match(added) {
		t.Errorf("the font descriptor is not an indirect object:\n%s", added)
	}
	if n := bytes.Count(added, []byte("/Type /FontDescriptor")); n != 1 {
		t.Errorf("the font descriptor is written %d times, want once", n)
	}
	if n := bytes.Count(added, []byte("/BaseFont /Shared")); n != 1 {
		t.Errorf("the font shared by both pages is written %d times, want once", n)
	}
}
