package pdfsign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// FuzzRead drives the reading path (cross-reference chain, objects, page
// tree, form fields), the repair of damaged files and Verify with
// arbitrary bytes: no panic, no hang.
// Seeds: generated files and, when present, small corpus files.
func FuzzRead(f *testing.F) {
	f.Add(testPDF(f, 1, false, 0))
	f.Add(testPDF(f, 2, true, 0))
	id := testIdentity(f)
	if signed, _, err := Sign(context.Background(), testPDF(f, 1, true, 0), id, Options{}); err == nil {
		f.Add(signed)
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.pdf"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil && len(data) < 16<<10 {
			f.Add(data)
		}
	}
	lim := Limits{MaxObjects: 10_000, MaxDecodedSize: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		// A slow input is a bug too: crash so the fuzzer keeps it.
		watchdog := time.AfterFunc(5*time.Second, func() { panic("FuzzRead: input took more than 5s") })
		defer watchdog.Stop()
		d, err := readDocument(data, lim)
		if errors.Is(err, errStructure) {
			// What a signing does with it: rebuild it, and read the result.
			if fixed, err := rebuild(context.Background(), data, lim.withDefaults()); err == nil {
				_, _ = readSound(fixed, lim)
			}
			return
		}
		if err != nil {
			return
		}
		_, _ = d.pages()
		_, _ = d.signatureFields()
		_, _ = Verify(data, nil)
	})
}
