package pdftools

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
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
		for _, formOnly := range []bool{false, true} {
			res, err := testService().Do(t.Context(), Request{Op: OpFlatten, Files: one(path, data), FormOnly: formOnly})
			if err != nil {
				if _, ok := asClientError(err); !ok {
					t.Errorf("%s (formOnly %v): %v (a server fault)", path, formOnly, err)
				}
				continue
			}
			if info := tool(t, res.Data, "pdfinfo"); !formIs(info, "none") {
				t.Errorf("%s (formOnly %v): the form is still there", path, formOnly)
			}
			if formOnly {
				if in, out := countAnnotations(t, data), countAnnotations(t, res.Data); out.widgets != 0 || out.others != in.others {
					t.Errorf("%s: %d widgets and %d other annotations left, want none and the %d of the input", path, out.widgets, out.others, in.others)
				}
			}
		}
	}
}

// commentedFormPDF is a one-page PDF with a filled text field, a ticked
// checkbox whose widget is the kid of its field, a Square and a FreeText
// annotation, each with an appearance, and a link; its form asks for
// appearances and carries an XFA form.
func commentedFormPDF() []byte {
	stream := func(dict, data string) string {
		return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
	}
	form := "/Type /XObject /Subtype /Form /Resources << /Font << /Helv 4 0 R >> >>"
	return pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R 9 0 R] /NeedAppearances true /DR << /Font << /Helv 4 0 R >> >> /XFA 15 0 R >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 7 0 R /Resources << /Font << /Helv 4 0 R >> >> /Annots [5 0 R 10 0 R 12 0 R 16 0 R 8 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Filled value) /Rect [100 600 300 620] /P 3 0 R /AP << /N 6 0 R >> >>",
		stream(form+" /BBox [0 0 200 20]", "BT /Helv 12 Tf 2 6 Td (Filled value) Tj ET"),
		stream("", "BT /Helv 18 Tf 72 760 Td (Page body) Tj ET"),
		"<< /Type /Annot /Subtype /Link /Rect [72 700 200 720] /A << /S /URI /URI (https://example.com/) >> >>",
		"<< /FT /Btn /T (agree) /V /Yes /Kids [10 0 R] >>",
		"<< /Type /Annot /Subtype /Widget /Parent 9 0 R /Rect [100 560 200 580] /P 3 0 R /AS /Yes /AP << /N << /Yes 11 0 R /Off 14 0 R >> >> >>",
		stream(form+" /BBox [0 0 100 20]", "BT /Helv 12 Tf 2 6 Td (Ticked box) Tj ET"),
		"<< /Type /Annot /Subtype /Square /Rect [300 300 400 400] /C [1 0 0] /Contents (A square) /AP << /N 13 0 R >> >>",
		stream("/Type /XObject /Subtype /Form /BBox [0 0 100 100]", "1 0 0 RG 2 w 1 1 98 98 re S"),
		stream(form+" /BBox [0 0 100 20]", ""),
		stream("", "<xdp:xdp xmlns:xdp=\"http://ns.adobe.com/xdp/\"/>"),
		"<< /Type /Annot /Subtype /FreeText /Rect [300 200 500 220] /Contents (A comment) /DA (/Helv 12 Tf 0 g) /AP << /N 17 0 R >> >>",
		stream(form+" /BBox [0 0 200 20]", "BT /Helv 12 Tf 2 6 Td (A comment) Tj ET"))
}

func TestFlattenFormOnly(t *testing.T) {
	res := do(t, Request{Op: OpFlatten, Files: one("form.pdf", commentedFormPDF()), FormOnly: true})
	qpdfClean(t, res.Data)
	if info := tool(t, res.Data, "pdfinfo"); !formIs(info, "none") {
		t.Errorf("the form is still there:\n%s", info)
	}
	if text := textOf(t, res.Data, 1); !strings.Contains(text, "Filled value") || !strings.Contains(text, "Ticked box") || !strings.Contains(text, "Page body") {
		t.Errorf("the flattened page reads %q, want the body and the fields' values", text)
	}
	got := annotations(t, res.Data)
	if want := []string{"Square", "FreeText", "Link"}; !slices.Equal(got.subtypes, want) {
		t.Errorf("the page's annotations are %v, want %v, in their order", got.subtypes, want)
	}
	if got.drawn != 2 {
		t.Errorf("%d appearances drawn into the page, want the 2 widgets'", got.drawn)
	}
	if got.catalog["AcroForm"] != nil {
		t.Errorf("the catalog still has a form: %v", got.catalog["AcroForm"])
	}
	objects := runOut(t, "qpdf", "--json=1", "--json-key=objects", pdftest.WriteTemp(t, res.Data))
	for _, gone := range []string{"/Widget", "/AcroForm", "/NeedAppearances", "/XFA", "/Fields"} {
		if strings.Contains(objects, gone) {
			t.Errorf("%s is still in the file", gone)
		}
	}
	for _, kept := range []string{"A square", "A comment", "https://example.com/"} {
		if !strings.Contains(objects, kept) {
			t.Errorf("%q (a kept annotation's) is no longer in the file", kept)
		}
	}
}

// TestFlattenWholeDrawsComments is the same PDF flattened whole: the
// comments go into the page with the fields, the link alone stays.
func TestFlattenWholeDrawsComments(t *testing.T) {
	res := do(t, Request{Op: OpFlatten, Files: one("form.pdf", commentedFormPDF())})
	qpdfClean(t, res.Data)
	got := annotations(t, res.Data)
	if want := []string{"Link"}; !slices.Equal(got.subtypes, want) {
		t.Errorf("the page's annotations are %v, want %v", got.subtypes, want)
	}
	if got.drawn != 4 {
		t.Errorf("%d appearances drawn into the page, want 4 (2 widgets, the square, the comment)", got.drawn)
	}
}

// TestFlattenFormOnlySigned: a signed PDF is refused as by any flatten,
// and a forced one loses its signature field with the rest of the form.
func TestFlattenFormOnlySigned(t *testing.T) {
	req := Request{Op: OpFlatten, Files: one("signed.pdf", signed(t, 1)), FormOnly: true}
	if c, err := code(t, req); c != quire.CodeUnprocessable || !strings.Contains(err.Error(), "force=true") {
		t.Fatalf("a signed PDF: %q %v, want a 422 that offers force=true", c, err)
	}
	req.Force = true
	res := do(t, req)
	qpdfClean(t, res.Data)
	if got := annotations(t, res.Data); len(got.subtypes) != 0 || got.catalog["AcroForm"] != nil {
		t.Errorf("annotations %v and form %v left, want the signature's widget and form gone", got.subtypes, got.catalog["AcroForm"])
	}
	pdftest.RequireTool(t, "pdfsig", "poppler-utils")
	if out, _ := exec.Command("pdfsig", pdftest.WriteTemp(t, res.Data)).CombinedOutput(); !strings.Contains(string(out), "does not contain any signatures") {
		t.Errorf("pdfsig still finds a signature:\n%s", out)
	}
}

// pageAnnotations is what a flattened one-page PDF holds.
type pageAnnotations struct {
	subtypes []string // of the page's annotations, in order
	drawn    int      // appearances flatten drew into the page
	catalog  pdf.Dict
}

// annotations reads a one-page PDF with quire's model.
func annotations(t *testing.T, data []byte) pageAnnotations {
	t.Helper()
	d, err := pdf.Open(context.Background(), data, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.Pages()
	if err != nil || len(pages) != 1 {
		t.Fatalf("%d pages (%v), want 1", len(pages), err)
	}
	var got pageAnnotations
	_, got.catalog, err = d.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	annots, _ := d.Array(pages[0].Dict["Annots"])
	for _, a := range annots {
		ad, err := d.Dict(a)
		if err != nil {
			t.Fatalf("annotation %v: %v", a, err)
		}
		sub, _ := ad["Subtype"].(pdf.Name)
		got.subtypes = append(got.subtypes, string(sub))
	}
	res, _ := d.Dict(pages[0].Dict["Resources"])
	xo, _ := d.Dict(res["XObject"])
	for name := range xo {
		if strings.HasPrefix(string(name), "QuireFlat") {
			got.drawn++
		}
	}
	return got
}

// annotationCount counts a PDF's annotations, on every page.
type annotationCount struct{ widgets, others int }

func countAnnotations(t *testing.T, data []byte) annotationCount {
	t.Helper()
	d, err := pdf.Open(context.Background(), data, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	pages, err := d.Pages()
	if err != nil {
		t.Fatal(err)
	}
	var n annotationCount
	for _, p := range pages {
		annots, _ := d.Array(p.Dict["Annots"])
		for _, a := range annots {
			switch ad, err := d.Dict(a); {
			case err != nil: // not an annotation: flatten drops it
			case isWidget(ad):
				n.widgets++
			default:
				n.others++
			}
		}
	}
	return n
}
