package pdfsign

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// certified returns a one-page PDF certified by id with DocMDP level p.
func certified(t *testing.T, id *Identity, p int) []byte {
	t.Helper()
	out, _, err := Sign(context.Background(), testPDF(t, 1, false, 0), id, Options{Name: "Certifier", DocMDP: p})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCertifiedNoChangesRefused(t *testing.T) {
	id := testIdentity(t)
	_, _, err := Sign(context.Background(), certified(t, id, 1), id, Options{})
	if !errors.Is(err, ErrCertified) || !strings.Contains(err.Error(), "P=1") {
		t.Fatalf("signing a P=1 document: %v", err)
	}
}

func TestCertifiedFormFillingAllowsSignatureNotPages(t *testing.T) {
	requireValidators(t)
	id := testIdentity(t)
	for _, p := range []int{2, 3} {
		doc := certified(t, id, p)
		l, err := PageLayout(context.Background(), doc)
		if err != nil || l.Certified != p {
			t.Fatalf("P=%d: layout %+v, %v", p, l, err)
		}
		pages, _ := ImportPages(context.Background(), testPDF(t, 1, false, 0))
		if _, err := AppendPages(context.Background(), doc, pages); !errors.Is(err, ErrCertified) {
			t.Fatalf("P=%d: a page was appended: %v", p, err)
		}
		out, _, err := Sign(context.Background(), doc, id, Options{Name: "Approver"})
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
		res, err := Verify(out, id.Roots())
		if err != nil || !res.Valid || res.Signers[0].Certification != p || res.Signers[1].Certification != 0 {
			t.Fatalf("P=%d: verify %v %+v", p, err, res)
		}
		if report := pdfsig(t, nssDB(t, id), out); strings.Count(report, "Signature is Valid.") != 2 {
			t.Fatalf("P=%d: pdfsig:\n%s", p, report)
		}
	}
}
