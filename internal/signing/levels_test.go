package signing

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdf/pdftest/dsstest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// levelService signs with quire's own CA, at the configured level, with
// tsa as its time-stamp authority (nil: none), fetching on loopback.
func levelService(t *testing.T, level pdfsign.Level, tsa *pdftest.TSA) *Service {
	t.Helper()
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{MaxDocumentBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Level: level}
	if tsa != nil {
		opt.Timestamper = &pdfsign.TSAClient{URL: tsa.URL}
	}
	return New(id, storetest.Open(t, storetest.URL(t, "sqlite")), nil, loopbackFetcher(), opt)
}

// TestLevelDelivered: the level asked (configured, or the request's
// level) is the level quire and EU DSS find, and the one the result
// names. DSS, trusting quire's CA and the TSA's (whose certificate names
// a CRL, as real ones do), passes B-LT and B-LTA (TOTAL_PASSED); B-B and
// B-T carry no revocation data, which DSS, offline, cannot find
// elsewhere: INDETERMINATE, never failed. B-B has no time-stamp even
// with an authority configured.
func TestLevelDelivered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tsa := pdftest.NewTSA(t)
	svc := levelService(t, pdfsign.LevelB, tsa)
	var files, formats []string
	dir := t.TempDir()
	for _, c := range []struct{ asked, want string }{{"", "B-B"}, {"B-B", "B-B"}, {"B-T", "B-T"}, {"B-LT", "B-LT"}, {"B-LTA", "B-LTA"}} {
		req := submitted(pdftest.OnePage("level "+c.asked), true)
		req.Level, req.Strict = c.asked, true
		res, err := svc.Sign(ctx, req, "key")
		if err != nil {
			t.Fatalf("level %q: %v", c.asked, err)
		}
		v, err := svc.Verify(ctx, Document{Bytes: res.PDF})
		if err != nil || !v.Valid {
			t.Fatalf("level %q: %v %+v", c.asked, err, v)
		}
		s := v.Signers[0]
		if res.Level.String() != c.want || s.Level == nil || *s.Level != "PAdES-BASELINE-"+strings.TrimPrefix(c.want, "B-") {
			t.Errorf("level %q: delivered %s, verified %v; want %s", c.asked, res.Level, deref(s.Level), c.want)
		}
		if (c.want == "B-B") != (s.TimestampTime == nil) {
			t.Errorf("level %q: time-stamp %v", c.asked, s.TimestampTime)
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("%d.pdf", len(files))))
		formats = append(formats, "PAdES-BASELINE-"+strings.TrimPrefix(c.want, "B-"))
		os.WriteFile(files[len(files)-1], res.PDF, 0o600)
	}
	dsstest.Require(t)
	for i, verdicts := range dsstest.Validate(t, files, trustFiles(t, svc, tsa), "") {
		if len(verdicts) != 1 {
			t.Errorf("%s: DSS reports %d signatures", formats[i], len(verdicts))
		}
		for field, d := range verdicts {
			longTerm := strings.HasSuffix(formats[i], "LT") || strings.HasSuffix(formats[i], "LTA")
			if d.Format != formats[i] || (longTerm && d.Indication != pdfsign.TotalPassed) || d.Indication == pdfsign.TotalFailed {
				t.Errorf("%s: DSS on %s: %+v", formats[i], field, d)
			}
		}
	}
}

// trustFiles are PEM files of quire's CA and the TSA's root, for DSS.
func trustFiles(t *testing.T, svc *Service, tsa *pdftest.TSA) []string {
	dir := t.TempDir()
	root, tsaRoot := filepath.Join(dir, "quire-ca.pem"), filepath.Join(dir, "tsa.pem")
	if os.WriteFile(root, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: svc.id.Root().Raw}), 0o600) != nil ||
		os.WriteFile(tsaRoot, tsa.RootPEM, 0o600) != nil {
		t.Fatal("cannot write the trust anchors")
	}
	return []string{root, tsaRoot}
}

// TestLevelNotReached: with an authority whose certificate names no
// revocation data, B-LT and B-LTA stop at B-T: the result says so, a
// strict request is refused with 422, and the startup check names the
// certificate; EU DSS finds B-T as answered. Without an authority, B-T
// is B-B, or 422 when strict.
func TestLevelNotReached(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare := pdftest.NewTSAWithoutRevocation(t)
	svc := levelService(t, pdfsign.LevelLT, bare)
	var reached []string // files signed at the level reached, for DSS
	if missing := svc.CheckLongTerm(ctx); len(missing) != 1 || !strings.Contains(missing[0], "test TSA") {
		t.Errorf("startup check: %q, want the TSA's certificate", missing)
	}
	if missing := levelService(t, pdfsign.LevelLT, pdftest.NewTSA(t)).CheckLongTerm(ctx); len(missing) != 0 {
		t.Errorf("startup check of a TSA naming its CRL: %q", missing)
	}
	for _, asked := range []string{"", "B-LT", "B-LTA"} {
		req := submitted(pdftest.OnePage("not reached"), false)
		req.Level = asked
		res, err := svc.Sign(ctx, req, "key")
		if err != nil || res.Level != pdfsign.LevelT {
			t.Fatalf("level %q: %v, delivered %s; want B-T", asked, err, res.Level)
		}
		reached = append(reached, pdftest.WriteTemp(t, res.PDF))
		req.Strict = true
		if _, err := svc.Sign(ctx, req, "key"); !unprocessable(err, "revocation data") {
			t.Errorf("level %q, strict: %v; want 422 naming revocation data", asked, err)
		}
	}
	none := levelService(t, pdfsign.LevelB, nil)
	req := submitted(pdftest.OnePage("no TSA"), false)
	req.Level = "B-T"
	if res, err := none.Sign(ctx, req, "key"); err != nil || res.Level != pdfsign.LevelB {
		t.Errorf("B-T without an authority: %v, delivered %s; want B-B", err, res.Level)
	}
	req.Strict = true
	if _, err := none.Sign(ctx, req, "key"); !unprocessable(err, "QUIRE_TSA_URL") {
		t.Errorf("B-T without an authority, strict: %v", err)
	}
	if err := none.Check(ctx, req); !unprocessable(err, "QUIRE_TSA_URL") { // before a job is queued
		t.Errorf("B-T without an authority, strict, checked: %v", err)
	}
	req.Level = "B-X"
	var qe *quire.Error
	if _, err := none.Sign(ctx, req, "key"); !errors.As(err, &qe) || qe.Code != quire.CodeValidation || qe.Details[0].Field != "level" {
		t.Errorf("level B-X: %v", err)
	}
	dsstest.Require(t) // what the answer named is what DSS finds
	for i, verdicts := range dsstest.Validate(t, reached, trustFiles(t, svc, bare), "") {
		for field, d := range verdicts {
			if d.Format != "PAdES-BASELINE-T" {
				t.Errorf("file %d, %s: DSS finds %s where B-T was answered", i, field, d.Format)
			}
		}
	}
}

func unprocessable(err error, says string) bool {
	var qe *quire.Error
	return errors.As(err, &qe) && qe.Code == quire.CodeUnprocessable && strings.Contains(qe.Message, says)
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
