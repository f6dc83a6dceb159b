package pdfsign

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest/dsstest"
)

// dssSig is DSS's verdict on one signature.
type dssSig = dsstest.Sig

// TestAgreesWithDSS verifies every signed document the other tests make
// (quire's own at each level, openssl's, the attacks, several signers)
// with quire and with EU DSS, under the same trust anchors, and requires
// the same format level, indication and sub-indication for each
// signature, but where the difference is on purpose (dssDiffers).
func TestAgreesWithDSS(t *testing.T) {
	dsstest.Require(t)
	s := newSignerSet(t)
	s.attacks(t)
	s.permitted(t)
	s.foreign(t)
	for _, lvl := range []Level{LevelB, LevelT, LevelLT, LevelLTA} {
		opt := Options{Name: "Level " + lvl.String(), Level: lvl, Fetch: fetchHTTP}
		if lvl > LevelB {
			opt.Timestamper = &TSAClient{URL: s.tsa.URL}
		}
		b, _, err := signBytes(context.Background(), contract(docSpec{}), s.id, opt)
		if err != nil {
			t.Fatal(err)
		}
		s.files = append(s.files, namedFile{"quire " + lvl.String(), b})
	}
	for _, f := range signedCorpus(t) {
		b, _ := os.ReadFile(f)
		s.files = append(s.files, namedFile{"corpus " + filepath.Base(f), b})
	}
	trust := []string{pemFile(t, s.id.Root()), s.ca.caPEM, writeTemp(t, "tsa.pem", s.tsa.RootPEM)}
	dir := t.TempDir()
	paths := make([]string, len(s.files))
	for i, f := range s.files {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%03d.pdf", i))
		if err := os.WriteFile(paths[i], f.pdf, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	verdicts := dsstest.Validate(t, paths, trust, dsstest.StrictPolicy(t))
	agreed, differed := 0, 0
	for i, f := range s.files {
		res, err := VerifyWith(f.pdf, s.opts, pdf.Limits{})
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		for _, sr := range res.Signers {
			if sr.SubFilter == "ETSI.RFC3161" {
				continue // DSS reports document time-stamps apart from signatures
			}
			d, ok := verdicts[i][sr.Field]
			ours := dssSig{Format: deref(sr.Level), Indication: sr.Indication, Sub: deref(sr.SubIndication)}
			if !ok {
				d = dssSig{Format: "(not reported)"}
			}
			if d.Sub == "" || d.Sub == "-" {
				d.Sub = "null"
			}
			if d.Format == "PDF-NOT-ETSI" { // a PAdES SubFilter whose CMS is no baseline: quire's level is null
				d.Format = "null"
			}
			if ours == d {
				agreed++
				continue
			}
			why := dssDiffers(f.name, ours, d)
			if why == "" {
				t.Errorf("%s, %s: quire %v, DSS %v", f.name, sr.Field, ours, d)
				continue
			}
			differed++
			t.Logf("%s, %s: quire %v, DSS %v: %s", f.name, sr.Field, ours, d, why)
		}
	}
	t.Logf("%d signatures agree with EU DSS, %d differ on purpose, over %d files", agreed, differed, len(s.files))
}

// dssDiffers says why quire's verdict differs from DSS's on purpose, or
// "" when it should not.
func dssDiffers(name string, ours, d dssSig) string {
	failed := ours.Indication == TotalFailed && ours.Sub == subFormat
	switch {
	case failed && d.Format == "(not reported)" && strings.HasPrefix(name, "USF"):
		return "DSS takes a signature dictionary without a usable /ByteRange or /Contents for no signature at all; " +
			"quire reports the signed field's value as a forged signature (neither calls the document valid)"
	case failed && strings.HasPrefix(name, "ISA") && d.Indication != TotalFailed:
		return "bytes appended after the last revision that no cross-reference section reaches: DSS's reader ignores them, " +
			"quire fails the signatures, since a viewer that repairs the file shows them"
	case failed && (strings.HasPrefix(name, "shadow hide") || strings.HasPrefix(name, "sneaky") || strings.HasPrefix(name, "evil")) && d.Indication != TotalFailed:
		return "a field, signature widget or annotation drawn over signed text: DSS's policy only warns (PdfVisualDifference, " +
			"PdfAnnotationOverlap), and failing those there would fail legitimate form filling too; quire compares with what the signed page paints"
	case name == "SWA" && ours.Indication == d.Indication && ours.Sub == d.Sub:
		return "signature wrapping: DSS reads the wrapped dictionary's entries after /Contents from the relocated bytes, and so its format differently"
	}
	return ""
}

// signedCorpus lists the signed PDFs of the shared corpus that read.
func signedCorpus(t *testing.T) []string {
	var out []string
	for _, f := range corpusFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), "/ByteRange") {
			continue
		}
		if _, err := pdf.Read(b, pdf.Limits{}); err == nil {
			out = append(out, f)
		}
	}
	return out
}
