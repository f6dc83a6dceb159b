package pdfsign

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// certified returns a one-page PDF certified by id with DocMDP level p.
func certified(t *testing.T, id *Identity, p int) []byte {
	t.Helper()
	out, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{Name: "Certifier", DocMDP: p})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCertifiedNoChangesRefused(t *testing.T) {
	id := testIdentity(t)
	_, _, err := signBytes(context.Background(), certified(t, id, 1), id, Options{})
	if !errors.Is(err, ErrCertified) || !strings.Contains(err.Error(), "P=1") {
		t.Fatalf("signing a P=1 document: %v", err)
	}
}

func TestCertifiedFormFillingAllowsSignature(t *testing.T) {
	requireValidators(t)
	id := testIdentity(t)
	for _, p := range []int{2, 3} {
		doc := certified(t, id, p)
		d, err := pdf.Open(context.Background(), doc, pdf.Limits{})
		if err != nil || Certification(d) != p {
			t.Fatalf("P=%d: Certification %v", p, err)
		}
		out, _, err := signBytes(context.Background(), doc, id, Options{Name: "Approver"})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
		res, err := Verify(out, id.Roots(), pdf.Limits{})
		if err != nil || !res.Valid || res.Signers[0].Certification != p || res.Signers[1].Certification != 0 {
			t.Fatalf("P=%d: verify %v %+v", p, err, res)
		}
		if report := pdfsig(t, nssDB(t, id), out); strings.Count(report, "Signature is Valid.") != 2 {
			t.Fatalf("P=%d: pdfsig:\n%s", p, report)
		}
	}
}
