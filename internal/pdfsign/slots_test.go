package pdfsign

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// readPDF reads b, failing the test if it cannot.
func readPDF(t *testing.T, b []byte) *pdf.Document {
	t.Helper()
	d, err := pdf.Read(b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSlotsSignedLater: the first signature reserves empty signature
// fields; they are listed by prefix, a later signer signs one, and both
// signatures verify, by quire and by pdfsig, the later one a permitted
// change after the first. A slot signed already, or unknown, is refused.
func TestSlotsSignedLater(t *testing.T) {
	t.Parallel()
	requireValidators(t)
	id := testIdentity(t)
	ctx := context.Background()
	slots := []Slot{{Name: "later1", Page: 1, Rect: [4]float64{72, 300, 272, 360}}, {Name: "later2", Page: 1, Rect: [4]float64{300, 300, 500, 360}}}
	first, _, err := signBytes(ctx, contract(docSpec{}), id, Options{Name: "Alice", Slots: slots})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Slots(readPDF(t, first), "later"); err != nil || !slices.Equal(got, slots) {
		t.Fatalf("Slots: %+v %v, want %+v", got, err, slots)
	}
	if got, err := Slots(readPDF(t, first), "other"); err != nil || len(got) != 0 {
		t.Fatalf("Slots of another prefix: %+v %v", got, err)
	}
	second, _, err := signBytes(ctx, first, id, Options{Name: "Bob", Field: "later2", Appearance: EmptyAppearance(200, 60)})
	if err != nil {
		t.Fatalf("signing slot later2: %v", err)
	}
	res, err := Verify(second, id.Roots(), pdf.Limits{})
	if err != nil || !res.Valid || len(res.Signers) != 2 || res.Signers[1].Field != "later2" || res.Signers[1].Name != "Bob" {
		t.Fatalf("Verify: %v %+v", err, res)
	}
	if m := res.Signers[0].Modifications; m.Level != ClassSignature || !m.Permitted {
		t.Errorf("changes after the first signature: %+v", m)
	}
	if report := pdfsig(t, nssDB(t, id), second); strings.Count(report, "Signature is Valid.") != 2 {
		t.Errorf("pdfsig:\n%s", report)
	}
	if got, _ := Slots(readPDF(t, second), "later"); !slices.Equal(got, slots[:1]) {
		t.Errorf("Slots after later2 is signed: %+v", got)
	}
	for field, want := range map[string]string{"later2": `signature field "later2" is signed already`, "later3": `no empty signature field "later3"`} {
		if _, _, err := signBytes(ctx, second, id, Options{Field: field}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("signing %s: %v, want %q", field, err, want)
		}
	}
}

// TestSlotOutsideDocumentRefused: a slot must name a page of the document.
func TestSlotOutsideDocumentRefused(t *testing.T) {
	t.Parallel()
	id := testIdentity(t)
	for _, s := range []Slot{{Name: "x", Page: 2}, {Name: "x", Page: 0}, {Page: 1}} {
		_, _, err := signBytes(context.Background(), pdftest.OnePage("one"), id, Options{Slots: []Slot{s}})
		if err == nil || !strings.Contains(err.Error(), "of 1") {
			t.Errorf("slot %+v: %v, want it refused", s, err)
		}
	}
	if got, err := Slots(readPDF(t, pdftest.OnePage("no form")), ""); err != nil || got != nil {
		t.Errorf("Slots of a document without a form: %+v %v", got, err)
	}
}

// lockedField adds to b an empty signature field "Approval" on page 1
// carrying lock as its /Lock dictionary.
func lockedField(t *testing.T, b []byte, lock pdf.Dict) []byte {
	t.Helper()
	return edit(t, b, func(d *pdf.Document) {
		pages, _ := d.Pages()
		field := pdf.Dict{"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Widget"), "FT": pdf.Name("Sig"), "T": pdf.String("Approval"),
			"Rect": rect(marginRect), "P": pages[0].Ref, "F": pdf.Int(4), "Lock": lock}
		if err := addToForm(d, addAnnotation(t, d, field)); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFieldLockJudged: a signature whose field locks Note (/Lock, FieldMDP)
// makes filling Note afterwards a forbidden change; a lock that leaves
// Note out permits it.
func TestFieldLockJudged(t *testing.T) {
	t.Parallel()
	id := testIdentity(t)
	fields := pdf.Array{pdf.String("Note")}
	for _, c := range []struct {
		lock   pdf.Dict
		locked bool
	}{
		{pdf.Dict{"Type": pdf.Name("SigFieldLock"), "Action": pdf.Name("All")}, true},
		{pdf.Dict{"Type": pdf.Name("SigFieldLock"), "Action": pdf.Name("Include"), "Fields": fields}, true},
		{pdf.Dict{"Type": pdf.Name("SigFieldLock"), "Action": pdf.Name("Exclude"), "Fields": fields}, false},
		{pdf.Dict{"Type": pdf.Name("SigFieldLock"), "Action": pdf.Name("Include"), "Fields": pdf.Array{pdf.String("Other")}}, false},
	} {
		signed, _, err := signBytes(context.Background(), lockedField(t, contract(docSpec{}), c.lock), id, Options{Field: "Approval", Appearance: EmptyAppearance(20, 20)})
		if err != nil {
			t.Fatalf("%v: %v", c.lock, err)
		}
		filled := edit(t, signed, func(d *pdf.Document) {
			fillNote(t, d, "Delivered", &pdf.Stream{Dict: overlay().Dict, Data: []byte("BT /Helv 12 Tf 2 6 Td (Delivered) Tj ET")})
		})
		res, err := Verify(filled, id.Roots(), pdf.Limits{})
		if err != nil || len(res.Signers) != 1 {
			t.Fatalf("%v: Verify: %v %+v", c.lock, err, res)
		}
		m := res.Signers[0].Modifications
		if m.Level != ClassForm || res.Valid == c.locked || m.Permitted == c.locked {
			t.Errorf("%v: valid %v, modifications %+v; locked: %v", c.lock, res.Valid, m, c.locked)
		}
		if c.locked && (len(m.Changes) == 0 || !strings.Contains(m.Changes[0].What, "the field is locked by this signature")) {
			t.Errorf("%v: changes %+v, want the lock named", c.lock, m.Changes)
		}
	}
}

// setAnnots makes annots page 1's /Annots in d.
func setAnnots(t *testing.T, d *pdf.Document, annots pdf.Array) {
	t.Helper()
	pages, err := d.Pages()
	if err != nil {
		t.Fatal(err)
	}
	p := pages[0].Dict.Clone()
	p["Annots"] = annots
	d.Replace(pages[0].Ref, p)
}

// TestAnnotationsRemovedOrReusedJudged: after an approval signature, an
// annotation removed from the margin is a permitted change, the form's
// widget removed is not, and an annotation object already in the signed
// file but on no page, put on the page unchanged, is judged as an
// annotation added: permitted in the margin, not over the signed text.
func TestAnnotationsRemovedOrReusedJudged(t *testing.T) {
	t.Parallel()
	id := testIdentity(t)
	overText := "<< /Type /Annot /Subtype /FreeText /Rect " + textRect + " /Contents (Pay 9999 EUR to Mallory) /DA (/Helv 14 Tf 0 g) >>"
	// Beside the Text note, which the signer saw in marginRect.
	inMargin := "<< /Type /Annot /Subtype /Square /Rect [540 40 560 60] /C [1 0 0] >>"
	var square pdf.Ref
	unsigned := edit(t, contract(docSpec{extra: []string{overText, inMargin}}), func(d *pdf.Document) {
		square = addAnnotation(t, d, pdf.Dict{"Type": pdf.Name("Annot"), "Subtype": pdf.Name("Text"), "Rect": rect(marginRect), "Contents": pdf.String("Checked")})
	})
	signed, _, err := signBytes(context.Background(), unsigned, id, Options{Name: "Alice"})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := readPDF(t, signed).Pages()
	if err != nil {
		t.Fatal(err)
	}
	annots := pages[0].Dict["Annots"].(pdf.Array) // the Note widget, the Text note, the signature's widget
	without := func(r pdf.Ref) pdf.Array {
		return slices.DeleteFunc(slices.Clone(annots), func(o pdf.Object) bool { return o == r })
	}
	for _, c := range []struct {
		name   string
		annots pdf.Array
		valid  bool
		class  string
		what   string
	}{
		{"note removed from the margin", without(square), true, ClassAnnotations, "annotation removed"},
		{"the Note widget removed", without(pdf.Ref{Num: 6}), false, ClassOther, "a form field's widget removed from the page"},
		{"signed annotation put in the margin", append(slices.Clone(annots), pdf.Ref{Num: 8}), true, ClassAnnotations, "annotation added (/Square)"},
		{"signed annotation put over the text", append(slices.Clone(annots), pdf.Ref{Num: 7}), false, ClassAnnotations, "annotation added (/FreeText) (drawn over"},
	} {
		changed := edit(t, signed, func(d *pdf.Document) { setAnnots(t, d, c.annots) })
		res, err := Verify(changed, id.Roots(), pdf.Limits{})
		if err != nil || len(res.Signers) != 1 {
			t.Fatalf("%s: %v %+v", c.name, err, res)
		}
		m := res.Signers[0].Modifications
		if res.Valid != c.valid || m.Permitted != c.valid || m.Level != c.class || len(m.Changes) != 1 || !strings.HasPrefix(m.Changes[0].What, c.what) {
			t.Errorf("%s: valid %v, modifications %+v", c.name, res.Valid, m)
		}
	}
}
