package pdf

import (
	"bytes"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// twoPages are two pages that share a stream and a font dictionary, as
// certificate pages share their fonts.
func twoPages() []Page {
	file := &Stream{Dict: Dict{}, Data: []byte("FONTDATA-shared-by-both-pages")}
	font := &Indirect{Object: Dict{"Type": Name("Font"), "Subtype": Name("Type0"), "BaseFont": Name("Shared+Font"), "FontFile": file}}
	res := Dict{"Font": Dict{"F1": font}, "XObject": Dict{"X1": file}}
	return []Page{{MediaBox: [4]float64{0, 0, 300, 400}, Content: []byte("(one) Tj"), Resources: res},
		{MediaBox: [4]float64{0, 0, 400, 300}, Content: []byte("(two) Tj"), Resources: res}}
}

func TestAppendPagesKeepsSharedObjectsShared(t *testing.T) {
	t.Parallel()
	out, err := appended(t.Context(), pdftest.OnePage("host"), twoPages())
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, []byte("FONTDATA-shared-by-both-pages")); n != 1 {
		t.Errorf("the shared stream is written %d times, want once", n)
	}
	if n := bytes.Count(out, []byte("/Shared+Font")); n != 1 {
		t.Errorf("the shared font is written %d times, want once", n)
	}
	l, err := pageLayout(t.Context(), out)
	if err != nil || l.pages != 3 || l.width != 400 || l.height != 300 {
		t.Errorf("layout %+v, %v", l, err)
	}
	if !bytes.HasPrefix(out, pdftest.OnePage("host")) {
		t.Error("the host document is not a prefix of the output")
	}
}

func TestWriteNewFile(t *testing.T) {
	t.Parallel()
	pdftest.RequireTool(t, "qpdf", "qpdf")
	file, err := Write(twoPages())
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Write(twoPages()); !bytes.Equal(again, file) {
		t.Error("equal pages give different files")
	}
	if msg, ok := pdftest.QPDFClean(t, file); !ok {
		t.Errorf("qpdf --check:\n%s", msg)
	}
	l, err := pageLayout(t.Context(), file)
	if err != nil || l.pages != 2 || l.width != 400 || l.height != 300 {
		t.Errorf("layout %+v, %v", l, err)
	}
	if n := bytes.Count(file, []byte("FONTDATA-shared-by-both-pages")); n != 1 {
		t.Errorf("the shared stream is written %d times, want once", n)
	}
}

func TestLastPageSizeRotated(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
