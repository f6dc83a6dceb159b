package pdftools

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// formPDF is a one-page PDF with a text field whose widget shows value,
// its appearance placed by a Matrix, and a link without appearance.
func formPDF(value string) []byte {
	ap := fmt.Sprintf("BT /Helv 12 Tf 2 6 Td (%s) Tj ET", value)
	page := "BT /Helv 18 Tf 72 760 Td (Page body) Tj ET"
	return pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R] /DR << /Font << /Helv 4 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 7 0 R /Resources << /Font << /Helv 4 0 R >> >> /Annots [5 0 R 8 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V ("+value+") /Rect [100 600 300 620] /P 3 0 R /AP << /N 6 0 R >> >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 200 20] /Resources << /Font << /Helv 4 0 R >> >> /Length %d >>\nstream\n%s\nendstream", len(ap), ap),
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(page), page),
		"<< /Type /Annot /Subtype /Link /Rect [72 700 200 720] /A << /S /URI /URI (https://example.com/) >> >>")
}

func TestFlatten(t *testing.T) {
	in := formPDF("Filled value")
	if info := tool(t, in, "pdfinfo"); !formIs(info, "AcroForm") {
		t.Fatalf("the test's form is not seen as one:\n%s", info)
	}
	res := do(t, Request{Op: OpFlatten, Files: one("form.pdf", in)})
	qpdfClean(t, res.Data)
	if info := tool(t, res.Data, "pdfinfo"); !formIs(info, "none") {
		t.Errorf("the form is still there:\n%s", info)
	}
	text := textOf(t, res.Data, 1)
	if !strings.Contains(text, "Filled value") || !strings.Contains(text, "Page body") {
		t.Errorf("the flattened page reads %q, want the body and the field's value", text)
	}
	bbox := runOut(t, "pdftotext", "-bbox", pdftest.WriteTemp(t, res.Data), "-")
	if !strings.Contains(bbox, `xMin="102.`) { // Rect's x 100 + the appearance's 2
		t.Errorf("the value is not where the widget was:\n%s", bbox)
	}
	if n := strings.Count(runOut(t, "qpdf", "--json=1", "--json-key=objects", pdftest.WriteTemp(t, res.Data)), "/Widget"); n != 0 {
		t.Errorf("%d widgets left", n)
	}
}

// formIs reports pdfinfo's Form line.
func formIs(info, want string) bool {
	return regexp.MustCompile(`(?m)^Form:\s+` + want + `$`).MatchString(info)
}

func TestFlattenCorpusForms(t *testing.T) {
	for _, path := range corpus(t) {
		if !strings.Contains(path, "form") {
			continue
		}
		data := read(t, path)
		res, err := testService().Do(t.Context(), Request{Op: OpFlatten, Files: one(path, data)})
		if err != nil {
			if _, ok := asClientError(err); !ok {
				t.Errorf("%s: %v (a server fault)", path, err)
			}
			continue
		}
		if info := tool(t, res.Data, "pdfinfo"); !formIs(info, "none") {
			t.Errorf("%s: the form is still there", path)
		}
	}
}
