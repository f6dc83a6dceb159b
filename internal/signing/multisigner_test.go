package signing

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdf/pdftest/dsstest"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// TestLaterSignersKeepEarlierValid signs one document four times with the
// certificate pages on, at B-LT, and another three times at B-LTA: the
// first signing appends the pages and reserves boxes for later signers
// (certpage.LaterSigners, 2); the next two sign those boxes, the fourth
// (no box left) signs invisibly. No signing after the first adds a page, and every signature
// stays valid, for quire and for EU DSS (under the policy that fails any
// change it does not permit), each at the level asked.
func TestLaterSignersKeepEarlierValid(t *testing.T) {
	t.Parallel()
	dsstest.Require(t)
	tsa := pdftest.NewTSA(t)
	lt := levelService(t, pdfsign.LevelLT, tsa)
	files := signInTurn(t, lt, "Ann", "Bob", "Chandra", "Dmitri")
	formats := slices.Repeat([]string{"PAdES-BASELINE-LT"}, len(files))
	lta := levelService(t, pdfsign.LevelLTA, tsa)
	more := signInTurn(t, lta, "Ann", "Bob", "Chandra")
	files = append(files, more...)
	formats = append(formats, slices.Repeat([]string{"PAdES-BASELINE-LTA"}, len(more))...)
	trust := append(trustFiles(t, lt, tsa), trustFiles(t, lta, tsa)[0])
	for i, verdicts := range dsstest.Validate(t, files, trust, dsstest.StrictPolicy(t)) {
		name := filepath.Base(files[i])
		if want := signatureCount(name); len(verdicts) != want {
			t.Errorf("%s: DSS reports %d signatures, want %d", name, len(verdicts), want)
		}
		for field, d := range verdicts {
			if d.Indication != pdfsign.TotalPassed || d.Format != formats[i] {
				t.Errorf("%s: DSS on %s: %+v, want %s TOTAL_PASSED", name, field, d, formats[i])
			}
		}
	}
}

// signInTurn has each of names sign one document in turn, with the
// certificate on, checking with svc.Verify after each that every
// signature is valid and no page was added after the first; it returns
// the files after each signature ("LEVEL-N.pdf", N signatures).
func signInTurn(t *testing.T, svc *Service, names ...string) []string {
	t.Helper()
	ctx := context.Background()
	doc := pdftest.OnePage("signed in turn")
	var pages int
	var files []string
	dir := t.TempDir()
	for i, who := range names {
		res, err := svc.Sign(ctx, submittedBy(doc, who), "key")
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		doc = res.PDF
		v, err := svc.Verify(ctx, Document{Bytes: doc})
		if err != nil || !v.Valid || len(v.Signers) != i+1 && len(v.Signers) != 2*(i+1) { // B-LTA: a time-stamp each
			t.Fatalf("%s: %v %+v", who, err, v)
		}
		for _, s := range v.Signers {
			if !s.Valid || !s.Modifications.Permitted || s.Indication != pdfsign.TotalPassed {
				t.Errorf("after %s: signature %s %s %s, changes %+v", who, s.Field, s.Indication, deref(s.SubIndication), s.Modifications)
			}
		}
		want := map[int]string{1: "Later signature 1", 2: "Later signature 2"}
		if f, ok := want[i]; ok && v.Signer != nil && !hasField(v, f) {
			t.Errorf("%s did not sign field %q", who, f)
		}
		if i == 0 {
			pages = v.Document.Pages
		} else if v.Document.Pages != pages {
			t.Fatalf("%s: %d pages, %d after the first signature", who, v.Document.Pages, pages)
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("%s-%d.pdf", res.Level, i+1)))
		if err := os.WriteFile(files[i], doc, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if slots, _ := pdfsign.Slots(mustRead(t, doc), slotPrefix); len(names) > certpage.LaterSigners && len(slots) != 0 {
		t.Errorf("%d boxes left free after %d signers", len(slots), len(names))
	}
	return files
}

func hasField(v VerifyResult, field string) bool {
	for _, s := range v.Signers {
		if s.Field == field {
			return true
		}
	}
	return false
}

// signatureCount reads N of "LEVEL-N.pdf".
func signatureCount(name string) int {
	n, _ := strconv.Atoi(strings.TrimSuffix(name[strings.LastIndex(name, "-")+1:], ".pdf"))
	return n
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
