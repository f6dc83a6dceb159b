package pdfsign

import (
	"context"
	"fmt"
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
		if want := fmt.Sprintf("slot %q on page %d of 1", s.Name, s.Page); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("slot %+v: %v, want it refused", s, err)
		}
	}
	if got, err := Slots(readPDF(t, pdftest.OnePage("no form")), ""); err != nil || got != nil {
		t.Errorf("Slots of a document without a form: %+v %v", got, err)
	}
}
