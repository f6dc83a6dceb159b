package signing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdf/pdftest/dsstest"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// TestLaterSignersKeepEarlierValid signs one document six times with the
// certificate pages on, at B-LT: the first signing appends the pages and
// reserves boxes for later signers; the next four sign those boxes, the
// sixth (no box left) signs invisibly. No signing after the first adds a
// page, and every signature stays valid, for quire and for EU DSS (under
// the policy that fails any change it does not permit), each at B-LT.
func TestLaterSignersKeepEarlierValid(t *testing.T) {
	dsstest.Require(t)
	ctx := context.Background()
	tsa := pdftest.NewTSA(t)
	svc := levelService(t, pdfsign.LevelLT, tsa)
	doc := pdftest.OnePage("signed by six")
	var pages int
	var files []string
	dir := t.TempDir()
	for i, who := range []string{"Ann", "Bob", "Chandra", "Dmitri", "Eve", "Fatima"} {
		res, err := svc.Sign(ctx, submittedBy(doc, who), "key")
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		doc = res.PDF
		v, err := svc.Verify(ctx, Document{Bytes: doc})
		if err != nil || !v.Valid || len(v.Signers) != i+1 {
			t.Fatalf("%s: %v %+v", who, err, v)
		}
		for _, s := range v.Signers {
			if !s.Valid || !s.Modifications.Permitted || s.Indication != pdfsign.TotalPassed {
				t.Errorf("after %s: signature %s %s %s, changes %+v", who, s.Field, s.Indication, deref(s.SubIndication), s.Modifications)
			}
		}
		want := map[int]string{1: "Later signature 1", 4: "Later signature 4"}
		if f, ok := want[i]; ok && v.Signers[i].Field != f {
			t.Errorf("%s signed field %q, want %q", who, v.Signers[i].Field, f)
		}
		if i == 0 {
			pages = v.Document.Pages
		} else if v.Document.Pages != pages {
			t.Fatalf("%s: %d pages, %d after the first signature", who, v.Document.Pages, pages)
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("signed-%d.pdf", i+1)))
		if err := os.WriteFile(files[i], doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if slots, _ := pdfsign.Slots(mustRead(t, doc), slotPrefix); len(slots) != 0 {
		t.Errorf("%d boxes left free after five signers", len(slots))
	}
	for i, verdicts := range dsstest.Validate(t, files, trustFiles(t, svc, tsa), dsstest.StrictPolicy(t)) {
		if len(verdicts) != i+1 {
			t.Errorf("%d signatures: DSS reports %d", i+1, len(verdicts))
		}
		for field, d := range verdicts {
			if d.Indication != pdfsign.TotalPassed || d.Format != "PAdES-BASELINE-LT" {
				t.Errorf("%d signatures: DSS on %s: %+v", i+1, field, d)
			}
		}
	}
}

func submittedBy(doc []byte, who string) Request {
	r := submitted(doc, true)
	r.Signer = Signer{Name: who, Email: who + "@example.com"}
	return r
}

func mustRead(t *testing.T, b []byte) *pdf.Document {
	t.Helper()
	d, err := pdf.Read(b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
