package pdfsign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// FuzzVerify drives the form field walk and Verify with arbitrary bytes:
// no panic, and work bounded by the memory of one request
// (pdftest.FuzzBound). (The reading path itself is fuzzed by pdf.FuzzRead.)
// Seeds: generated files, a signed one and, when present, small corpus
// files.
func FuzzVerify(f *testing.F) {
	f.Add(pdftest.Generated(1, false, 0))
	f.Add(pdftest.Generated(2, true, 0))
	id := testIdentity(f)
	if signed, _, err := signBytes(context.Background(), pdftest.Generated(1, true, 0), id, Options{}); err == nil {
		f.Add(signed)
	}
	// Revisions to compare: a contract signed, its field filled, signed again.
	if signed, _, err := signBytes(context.Background(), contract(docSpec{noteRect: textRect}), id, Options{DocMDP: 2}); err == nil {
		if d, err := pdf.Open(context.Background(), signed, pdf.Limits{}); err == nil {
			note, _ := d.Dict(pdf.Ref{Num: 6})
			n := note.Clone()
			n["V"] = pdf.String("filled")
			d.Replace(pdf.Ref{Num: 6}, n)
			if filled, err := d.Save(); err == nil {
				if twice, _, err := signBytes(context.Background(), filled, id, Options{}); err == nil {
					f.Add(twice)
				}
			}
		}
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.pdf"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil && len(data) < 16<<10 {
			f.Add(data)
		}
	}
	lim := pdf.Limits{MaxObjects: 10_000, MaxDecodedSize: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		var err error
		pdftest.FuzzBound(t, len(data), func() {
			if d, err := pdf.Read(data, lim); err == nil {
				_, _ = signatureFields(d)
			}
			_, err = Verify(data, nil, lim)
		})
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("Verify panicked: %v", err) // pdf.Recover turned a panic into an error
		}
	})
}
