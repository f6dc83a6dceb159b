package pdfsign

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestAppendPagesThenSign(t *testing.T) {
	requireValidators(t)
	id := testIdentity(t)
	for _, xs := range []bool{false, true} {
		in := testPDF(t, 2, xs, 0)
		page := Page{
			MediaBox:  [4]float64{0, 0, 595.28, 841.89},
			Content:   []byte("BT /F1 18 Tf 72 770 Td (Signature certificate) Tj ET"),
			Resources: Dict{"Font": Dict{"F1": Dict{"Type": Name("Font"), "Subtype": Name("Type1"), "BaseFont": Name("Helvetica")}}},
		}
		withPage, err := AppendPages(t.Context(), in, []Page{page})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(withPage, in) {
			t.Fatal("input is not a prefix")
		}
		d, err := readDocument(withPage, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		pages, _ := d.pages()
		if len(pages) != 3 {
			t.Fatalf("%d pages after append, want 3", len(pages))
		}
		qpdfCheck(t, withPage)
		out, _, err := Sign(context.Background(), withPage, id, Options{})
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
	signed, _, err := Sign(context.Background(), testPDF(t, 1, false, 0), id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	more, err := AppendPages(t.Context(), signed, []Page{{MediaBox: [4]float64{0, 0, 100, 100}, Content: []byte("0 0 m 10 10 l S")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(more, id.Roots())
	if err != nil || len(res.Signers) != 1 || !res.Signers[0].SignatureValid || res.Signers[0].CoversWholeDocument || res.Valid {
		t.Fatalf("want an intact signature that no longer covers the file: %v %+v", err, res)
	}
}

func TestRefusals(t *testing.T) {
	id := testIdentity(t)
	if _, _, err := Sign(context.Background(), []byte("not a pdf"), id, Options{}); !errorsIs(err, ErrUnreadable) {
		t.Fatalf("garbage: %v", err)
	}
	big := testPDF(t, 1, false, 0)
	if _, _, err := Sign(context.Background(), big, id, Options{Limits: Limits{MaxInputSize: 100}}); !errorsIs(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if _, _, err := Sign(context.Background(), big, id, Options{ContentsSize: 100}); !errorsIs(err, ErrSignatureTooLarge) {
		t.Fatalf("small placeholder: %v", err)
	}
	// Damage the xref of a signed file: it must be refused, not rewritten.
	signed, _, _ := Sign(context.Background(), big, id, Options{})
	broken := bytes.Replace(signed, []byte("startxref"), []byte("startxreF"), -1)
	if _, _, err := Sign(context.Background(), broken, id, Options{}); !errorsIs(err, ErrDamagedSigned) {
		t.Fatalf("damaged signed: %v", err)
	}
}
