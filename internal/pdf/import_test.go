package pdf

import (
	"bytes"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
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

func TestCopyPagesKeepsSharedStreamsShared(t *testing.T) {
	src, err := Open(t.Context(), twoPages(), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := src.CopyPages()
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].MediaBox != [4]float64{0, 0, 300, 400} || pages[1].MediaBox != [4]float64{0, 0, 400, 300} ||
		!bytes.Contains(pages[0].Content, []byte("(one)")) || !bytes.Contains(pages[1].Content, []byte("(two)")) {
		t.Fatalf("pages %+v", pages)
	}
	out, err := appended(t.Context(), pdftest.OnePage("host"), pages)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, []byte("FONTDATA-shared-by-both-pages")); n != 1 {
		t.Errorf("the shared stream is written %d times, want once", n)
	}
	l, err := pageLayout(t.Context(), out)
	if err != nil || l.pages != 3 || l.width != 400 || l.height != 300 {
		t.Errorf("layout %+v, %v", l, err)
	}
	if !bytes.HasPrefix(out, pdftest.OnePage("host")) {
		t.Error("the host document is not a prefix of the output")
	}
}

func TestLastPageSizeRotated(t *testing.T) {
	rotated := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Rotate 90 >>")
	l, err := pageLayout(t.Context(), rotated)
	if err != nil || l.pages != 1 || l.width != 842 || l.height != 595 {
		t.Errorf("layout %+v, %v", l, err)
	}
}

func TestSaveBuildsInSpareCapacity(t *testing.T) {
	host := pdftest.OnePage("host")
	in := append(make([]byte, 0, len(host)+64<<10), host...)
	out, err := appended(t.Context(), in, []Page{{MediaBox: [4]float64{0, 0, 100, 100}}})
	if err != nil {
		t.Fatal(err)
	}
	if &out[0] != &in[0] {
		t.Error("the update was not written in the spare capacity of the input")
	}
	if !bytes.Equal(in, host) || !bytes.HasPrefix(out, host) {
		t.Error("the input bytes changed")
	}
}
