package pdfsign

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
)

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
