package pdf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// FuzzRead drives the reading path (cross-reference chain, objects, page
// tree), the repair of damaged files and an update that appends a page
// with arbitrary bytes: no panic, and work bounded by the memory of one
// request (pdftest.FuzzBound).
// Seeds: generated files and, when present, small corpus files.
func FuzzRead(f *testing.F) {
	f.Add(pdftest.Generated(1, false, 0))
	f.Add(pdftest.Generated(2, true, 0))
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.pdf"))
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil && len(data) < 16<<10 {
			f.Add(data)
		}
	}
	lim := Limits{MaxObjects: 10_000, MaxDecodedSize: 1 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		pdftest.FuzzBound(t, len(data), func() { readLikeSigning(data, lim) })
	})
}

// readLikeSigning reads data as signing does: read it, or rebuild it and
// read the result; walk its pages, size its last one, append a page, save.
func readLikeSigning(data []byte, lim Limits) {
	d, err := read(data, lim, true)
	if errors.Is(err, errStructure) {
		if fixed, err := rebuild(context.Background(), data, lim.withDefaults()); err == nil {
			_, _ = readSound(fixed, lim)
		}
		return
	}
	if err != nil {
		return
	}
	if _, err := d.Pages(); err != nil {
		return
	}
	_, _, _ = d.LastPageSize()
	if _, err := d.AppendPages([]Page{{MediaBox: [4]float64{0, 0, 100, 100}}}); err == nil {
		_, _ = d.Save()
	}
}
