package httpapi_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/quire-dev/quire/internal/conform/veratest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestMergedConformance: merge=true with pdfa or pdfua answers a PDF that
// veraPDF finds compliant, as each part is: the merge's own metadata and
// cross-reference streams would break it.
func TestMergedConformance(t *testing.T) {
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("merged@example.com")
	dir := t.TempDir()
	byFlavour := map[string][]string{}
	for query, flavours := range map[string][]string{
		"merge=true&pdfa=PDF/A-1b": {"1b"},
		"merge=true&pdfa=PDF/A-2b": {"2b"},
		"merge=true&pdfua=true":    {"ua1"},
	} {
		r := e.convertFiles(key, query, mixed[1], mixed[2])
		if r.status != 200 {
			t.Fatalf("%s: %d %.300s", query, r.status, r.body)
		}
		path := filepath.Join(dir, flavours[0]+".pdf")
		if err := os.WriteFile(path, r.body, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, f := range flavours {
			byFlavour[f] = append(byFlavour[f], path)
		}
	}
	for f, paths := range byFlavour {
		veratest.RequireCompliant(t, f, paths)
	}
}
