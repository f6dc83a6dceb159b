package pdftools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// fieldsPDF is a two-page PDF with a form: on page 1 a text field
// (name), a checkbox (agree) whose appearances are Yes and Off, and a
// combo box (color) of three options, one with a display text; on page
// 2 a text field inheriting its type from its parent (address.city), a
// list that selects several (langs) and a radio button (size) whose two
// widgets, its kids, are on in states S and L.
func fieldsPDF() []byte {
	ap := "/Tx BMC BT /Helv 12 Tf 2 6 Td (Ada) Tj ET EMC"
	yes := "0 0 m 12 12 l 0 12 m 12 0 l S"
	page := "BT /Helv 18 Tf 72 760 Td (Page body) Tj ET"
	return pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R 8 0 R 11 0 R 12 0 R 15 0 R 16 0 R] /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 4 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R 13 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 7 0 R /Resources << /Font << /Helv 4 0 R >> >> /Annots [5 0 R 8 0 R 11 0 R] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Ada) /DA (/Helv 12 Tf 0 g) /Rect [100 600 300 620] /P 3 0 R /AP << /N 6 0 R >> >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 200 20] /Resources << /Font << /Helv 4 0 R >> >> /Length %d >>\nstream\n%s\nendstream", len(ap), ap),
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(page), page),
		"<< /Type /Annot /Subtype /Widget /FT /Btn /T (agree) /V /Off /AS /Off /Rect [100 560 112 572] /P 3 0 R /AP << /N << /Yes 9 0 R /Off 10 0 R >> >> >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 12 12] /Length %d >>\nstream\n%s\nendstream", len(yes), yes),
		"<< /Type /XObject /Subtype /Form /BBox [0 0 12 12] /Length 0 >>\nstream\n\nendstream",
		"<< /Type /Annot /Subtype /Widget /FT /Ch /Ff 131072 /T (color) /Opt [(red) [(grn) (Green)] (blue)] /V (red) /DA (/Helv 12 Tf 0 g) /Rect [100 520 300 540] /P 3 0 R >>",
		"<< /T (address) /FT /Tx /Kids [14 0 R] >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 7 0 R /Resources << /Font << /Helv 4 0 R >> >> /Annots [14 0 R 15 0 R 17 0 R 18 0 R] >>",
		"<< /Type /Annot /Subtype /Widget /Parent 12 0 R /T (city) /MaxLen 20 /DA (/Helv 12 Tf 0 g) /Rect [100 600 300 620] /P 13 0 R >>",
		"<< /Type /Annot /Subtype /Widget /FT /Ch /Ff 2097152 /T (langs) /Opt [(go) (c) (rust)] /V [(go) (c)] /I [0 1] /DA (/Helv 12 Tf 0 g) /Rect [100 400 300 500] /P 13 0 R >>",
		"<< /FT /Btn /Ff 49152 /T (size) /V /S /Kids [17 0 R 18 0 R] >>",
		"<< /Type /Annot /Subtype /Widget /Parent 16 0 R /AS /S /Rect [100 300 112 312] /P 13 0 R /AP << /N << /S 9 0 R /Off 10 0 R >> >> >>",
		"<< /Type /Annot /Subtype /Widget /Parent 16 0 R /AS /Off /Rect [200 300 212 312] /P 13 0 R /AP << /N << /L 9 0 R /Off 10 0 R >> >> >>")
}

// listFields answers form of doc, decoded.
func listFields(t *testing.T, doc []byte) []FormField {
	t.Helper()
	res := do(t, Request{Op: OpForm, Files: one("form.pdf", doc)})
	var out []FormField
	if err := json.Unmarshal(res.Data, &out); err != nil || res.ContentType != TypeJSON || out == nil {
		t.Fatalf("form: %v, %s %q", err, res.ContentType, res.Data)
	}
	return out
}

func TestFormListsTheFields(t *testing.T) {
	got := jsonOf(listFields(t, fieldsPDF()))
	want := `[{"name":"name","type":"text","value":"Ada","pages":[1]},` +
		`{"name":"agree","type":"checkbox","value":"Off","pages":[1],"states":["Yes"]},` +
		`{"name":"color","type":"combo","value":"red","pages":[1],"options":["red","grn","blue"]},` +
		`{"name":"address.city","type":"text","value":"","pages":[2],"maxLength":20},` +
		`{"name":"langs","type":"list","value":["go","c"],"pages":[2],"options":["go","c","rust"],"multiSelect":true},` +
		`{"name":"size","type":"radio","value":"S","pages":[2],"states":["S","L"]}]`
	if got != want {
		t.Errorf("form lists\n%s\nwant\n%s", got, want)
	}
	if got := listFields(t, pdftest.OnePage("x")); len(got) != 0 {
		t.Errorf("a PDF without a form lists %s", jsonOf(got))
	}
}

func TestSetForm(t *testing.T) {
	in := fieldsPDF()
	req := Request{Op: OpSetForm, Files: one("form.pdf", in), Fields: map[string][]string{
		"name": {"Grace Hopper"}, "agree": {"Yes"}, "color": {"grn"}, "address.city": {"Paris"}, "langs": {"rust", "go"}, "size": {"L"}}}
	res := do(t, req)
	qpdfClean(t, res.Data)
	if again := do(t, req); !bytes.Equal(withoutID(again.Data), withoutID(res.Data)) {
		t.Error("set-form wrote another file for the same request (besides its /ID)")
	}
	if !strings.HasPrefix(string(res.Data), string(in)) {
		t.Error("set-form did not write an incremental update after the file's bytes")
	}
	got := jsonOf(listFields(t, res.Data))
	want := `[{"name":"name","type":"text","value":"Grace Hopper","pages":[1]},` +
		`{"name":"agree","type":"checkbox","value":"Yes","pages":[1],"states":["Yes"]},` +
		`{"name":"color","type":"combo","value":"grn","pages":[1],"options":["red","grn","blue"]},` +
		`{"name":"address.city","type":"text","value":"Paris","pages":[2],"maxLength":20},` +
		`{"name":"langs","type":"list","value":["go","rust"],"pages":[2],"options":["go","c","rust"],"multiSelect":true},` +
		`{"name":"size","type":"radio","value":"L","pages":[2],"states":["S","L"]}]`
	if got != want {
		t.Errorf("after set-form, form lists\n%s\nwant\n%s", got, want)
	}
	d, err := pdf.Open(context.Background(), res.Data, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	states := map[int]pdf.Name{8: "Yes", 17: "Off", 18: "L"} // the widgets' objects
	for num, want := range states {
		if w, _ := d.Dict(pdf.Ref{Num: num}); w["AS"] != want {
			t.Errorf("widget %d shows %v, want %s", num, w["AS"], want)
		}
	}
	if needAppearancesOf(t, res.Data) != pdf.Bool(true) {
		t.Error("the list was set without NeedAppearances, and without an appearance")
	}
	// Poppler and MuPDF show the new values, not the former one; so does
	// flatten, which draws the widgets' appearances.
	flat := do(t, Request{Op: OpFlatten, Files: one("form.pdf", res.Data)}).Data
	mutool := tool(t, res.Data, "mutool", "draw", "-q", "-F", "txt")
	for _, text := range []string{textOf(t, res.Data, 1), textOf(t, flat, 1), mutool} {
		if !strings.Contains(text, "Grace Hopper") || strings.Contains(text, "Ada") || !strings.Contains(text, "Green") {
			t.Errorf("the text reads %q, want the new name and the colour's display text only", text)
		}
	}
	if text := textOf(t, flat, 2); !strings.Contains(text, "Paris") {
		t.Errorf("page 2 reads %q, want the city", text)
	}
}

// withoutID is doc without its trailers' file identifiers, which each
// save makes anew.
func withoutID(doc []byte) []byte {
	return regexp.MustCompile(`/ID ?\[<[0-9a-f]+> ?<[0-9a-f]+>\]`).ReplaceAll(doc, nil)
}

// needAppearancesOf is the /NeedAppearances of doc's form.
func needAppearancesOf(t *testing.T, doc []byte) pdf.Object {
	t.Helper()
	d, err := pdf.Open(context.Background(), doc, pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	_, cat, _ := d.Catalog()
	form, _ := d.Dict(cat["AcroForm"])
	return form["NeedAppearances"]
}

// TestSetFormDrawsTheValue: a text field's value in a script the form's
// font lacks is drawn in quire's fonts, and the form does not ask
// viewers to draw the fields.
func TestSetFormDrawsTheValue(t *testing.T) {
	out := do(t, Request{Op: OpSetForm, Files: one("form.pdf", fieldsPDF()), Fields: map[string][]string{"address.city": {"東京"}}}).Data
	if na := needAppearancesOf(t, out); na != nil {
		t.Errorf("NeedAppearances is %v, want none", na)
	}
	flat := do(t, Request{Op: OpFlatten, Files: one("form.pdf", out)}).Data
	if text := textOf(t, flat, 2); !strings.Contains(text, "東京") {
		t.Errorf("page 2 reads %q once flattened, want the city", text)
	}
}

func TestSetFormRefusesWhatTheFormLacks(t *testing.T) {
	for _, c := range []struct {
		fields map[string][]string
		says   string
	}{
		{nil, "is required"},
		{map[string][]string{"address.zip": {"75001"}}, `"address.zip" is not a field of the PDF`},
		{map[string][]string{"agree": {"Maybe"}}, `"agree" has no state "Maybe": its states are Off, Yes`},
		{map[string][]string{"size": {"M"}}, `"size" has no state "M": its states are Off, S, L`},
		{map[string][]string{"color": {"Green"}}, `"color" has no option "Green": its options are "red", "grn", "blue"`},
		{map[string][]string{"name": {"a", "b"}}, `"name" is a text field: it takes one value, not 2`},
		{map[string][]string{"address.city": {strings.Repeat("x", 21)}}, `"address.city" takes at most 20 characters`},
		{map[string][]string{"name": {}}, `"name" has no value`},
	} {
		got, err := code(t, Request{Op: OpSetForm, Fields: c.fields, Files: one("form.pdf", fieldsPDF())})
		qe, _ := asClientError(err)
		if got != quire.CodeValidation || len(qe.Details) != 1 || qe.Details[0].Field != "fields" || !strings.Contains(qe.Details[0].Issue, c.says) {
			t.Errorf("set-form %v: %s %v, want a validation error on fields: %s", c.fields, got, err, c.says)
		}
	}
}

// TestSetFormOfASignedPDF: filling the form of a signed PDF is an
// incremental update, which keeps its signature valid.
func TestSetFormOfASignedPDF(t *testing.T) {
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := pdf.Open(context.Background(), fieldsPDF(), pdf.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	in, _, err := pdfsign.Sign(context.Background(), doc, id, pdfsign.Options{Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	out := do(t, Request{Op: OpSetForm, Files: one("signed.pdf", in), Fields: map[string][]string{"name": {"Grace"}}}).Data
	signaturesValid(t, out, 1)
	list := listFields(t, out)
	if len(list) != 7 || list[0].Value != "Grace" || list[6].Type != "signature" {
		t.Errorf("the signed form lists %s", jsonOf(list))
	}
}

// TestFormOfTheCorpus: form lists the fields of every form of the
// corpus that flatten accepts, and set-form fills its first text field
// or checkbox, which form then lists with its new value.
func TestFormOfTheCorpus(t *testing.T) {
	listed, filled := 0, 0
	for _, path := range corpus(t) {
		if !strings.Contains(path, "form") {
			continue
		}
		data := read(t, path)
		if _, err := testService().Do(t.Context(), Request{Op: OpFlatten, Files: one(path, data), Force: true}); err != nil {
			continue
		}
		res, err := testService().Do(t.Context(), Request{Op: OpForm, Files: one(path, data)})
		if err != nil {
			t.Errorf("%s: form: %v", path, err)
			continue
		}
		var list []FormField
		if err := json.Unmarshal(res.Data, &list); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		listed++
		if fillFirst(t, path, data, list) {
			filled++
		}
	}
	t.Logf("%d forms listed, %d filled", listed, filled)
	if listed == 0 || filled == 0 {
		t.Errorf("%d forms of the corpus listed, %d filled: the test tested nothing", listed, filled)
	}
}

// fillFirst fills the first text field or checkbox of list, and checks
// that form lists its new value; it reports whether it found one.
func fillFirst(t *testing.T, path string, data []byte, list []FormField) bool {
	t.Helper()
	for i, f := range list {
		value := "Quire"
		switch {
		case f.Type == "checkbox" && len(f.States) > 0:
			value = f.States[0]
		case f.Type != "text" || f.MaxLength > 0 && f.MaxLength < len(value):
			continue
		}
		res, err := testService().Do(t.Context(), Request{Op: OpSetForm, Files: one(path, data), Fields: map[string][]string{f.Name: {value}}})
		if err != nil {
			t.Errorf("%s: set-form %s=%s: %v", path, f.Name, value, err)
			return true
		}
		qpdfClean(t, res.Data)
		after := listFields(t, res.Data)
		if len(after) != len(list) || after[i].Name != f.Name || after[i].Value != value {
			t.Errorf("%s: after set-form %s=%s, form lists %s", path, f.Name, value, jsonOf(after))
		}
		return true
	}
	return false
}

// TestHostileInputsThroughForm: hostile inputs through form and set-form
// end in a client error or a listing, the unrepairable ones in a
// refusal, within the memory bound of signing.
func TestHostileInputsThroughForm(t *testing.T) {
	for _, h := range pdftest.HostileFiles() {
		for _, op := range []string{OpForm, OpSetForm} {
			req := Request{Op: op, Fields: map[string][]string{"a": {"x"}}, Files: one(h.Name+".pdf", h.PDF)}
			refusedWithinBound(t, h, req)
		}
	}
}

// TestFormOfACyclicOrDeepFieldTree: a field tree whose kids lead back to
// an ancestor is walked once; one nested deeper than the reader's
// nesting limit is refused.
func TestFormOfACyclicOrDeepFieldTree(t *testing.T) {
	page := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>"
	cyclic := pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page,
		"<< /T (a) /Kids [5 0 R] >>",
		"<< /T (b) /FT /Tx /V (v) /Kids [4 0 R 6 0 R] >>",
		"<< /T (c) /FT /Tx /V (w) >>")
	if got := jsonOf(listFields(t, cyclic)); got != `[{"name":"a.b.c","type":"text","value":"w","pages":[]}]` {
		t.Errorf("the cyclic tree lists %s", got)
	}
	objects := []string{"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [4 0 R] >> >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page}
	const depth = 100 // more than DefaultLimits' MaxNesting
	for i := range depth {
		objects = append(objects, fmt.Sprintf("<< /T (n%d) /FT /Tx /Kids [%d 0 R] >>", i, i+5))
	}
	objects = append(objects, "<< /T (leaf) /FT /Tx >>")
	for _, op := range []string{OpForm, OpSetForm} {
		got, err := code(t, Request{Op: op, Fields: map[string][]string{"a": {"x"}}, Files: one("deep.pdf", pdftest.File(objects...))})
		if got != quire.CodeUnprocessable {
			t.Errorf("%s of a field tree %d deep: %v, want a 422", op, depth, err)
		}
	}
}
