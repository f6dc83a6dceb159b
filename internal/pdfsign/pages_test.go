package pdfsign

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestAppendPagesThenSign(t *testing.T) {
	requireValidators(t)
	id := testIdentity(t)
	for _, xs := range []bool{false, true} {
		in := pdftest.Generated(2, xs, 0)
		page := pdf.Page{
			MediaBox:  [4]float64{0, 0, 595.28, 841.89},
			Content:   []byte("BT /F1 18 Tf 72 770 Td (Signature certificate) Tj ET"),
			Resources: pdf.Dict{"Font": pdf.Dict{"F1": pdf.Dict{"Type": pdf.Name("Font"), "Subtype": pdf.Name("Type1"), "BaseFont": pdf.Name("Helvetica")}}},
		}
		withPage, err := appendPages(t.Context(), in, []pdf.Page{page})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(withPage, in) {
			t.Fatal("input is not a prefix")
		}
		d, err := pdf.Read(withPage, pdf.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		pages, _ := d.Pages()
		if len(pages) != 3 {
			t.Fatalf("%d pages after append, want 3", len(pages))
		}
		qpdfCheck(t, withPage)
		out, _, err := signBytes(context.Background(), withPage, id, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if out, _ := run(t, "qpdf", "--show-npages", writeTemp(t, "n.pdf", out)); strings.TrimSpace(out) != "3" {
			t.Fatalf("qpdf counts %q pages", out)
		}
		if report := pdfsig(t, nssDB(t, id), out); !strings.Contains(report, "Signature is Valid.") {
			t.Fatalf("pdfsig:\n%s", report)
		}
	}
}

func TestAppendPagesKeepsEarlierSignature(t *testing.T) {
	id := testIdentity(t)
	signed, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	more, err := appendPages(t.Context(), signed, []pdf.Page{{MediaBox: [4]float64{0, 0, 100, 100}, Content: []byte("0 0 m 10 10 l S")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(more, id.Roots(), pdf.Limits{})
	if err != nil || len(res.Signers) != 1 || !res.Signers[0].SignatureValid || res.Signers[0].CoversWholeDocument || res.Valid {
		t.Fatalf("want an intact signature that no longer covers the file: %v %+v", err, res)
	}
}

func TestRefusals(t *testing.T) {
	id := testIdentity(t)
	if _, _, err := signBytes(context.Background(), []byte("not a pdf"), id, Options{}); !errorsIs(err, pdf.ErrUnreadable) {
		t.Fatalf("garbage: %v", err)
	}
	big := pdftest.Generated(1, false, 0)
	if _, err := pdf.Open(context.Background(), big, pdf.Limits{MaxInputSize: 100}); !errorsIs(err, pdf.ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if _, _, err := signBytes(context.Background(), big, id, Options{ContentsSize: 100}); !errorsIs(err, ErrSignatureTooLarge) {
		t.Fatalf("small placeholder: %v", err)
	}
	// Damage the xref of a signed file: it must be refused, not rewritten.
	signed, _, _ := signBytes(context.Background(), big, id, Options{})
	broken := bytes.Replace(signed, []byte("startxref"), []byte("startxreF"), -1)
	if _, _, err := signBytes(context.Background(), broken, id, Options{}); !errorsIs(err, pdf.ErrDamagedSigned) {
		t.Fatalf("damaged signed: %v", err)
	}
}
