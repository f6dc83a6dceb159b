package libreoffice

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/safeinput"
)

// BenchmarkPrepareCorpus measures the service's own work on each DOCX of
// the corpus before its job is queued (safeinput.Prepare: sniff, the expansion and
// DTD check, the cleaning): the part of the conversion overhead that the
// office package's single pass is about.
//
//	go test -run '^$' -bench PrepareCorpus ./internal/libreoffice/
func BenchmarkPrepareCorpus(b *testing.B) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.docx"))
	if len(files) == 0 {
		b.Skipf("no DOCX corpus at %s (it lives in shared/ beside the repository)", corpusDir)
	}
	sort.Strings(files)
	docs := make([][]byte, len(files))
	var size int64
	for i, f := range files {
		var err error
		if docs[i], err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
		size += int64(len(docs[i]))
	}
	o, err := Options{}.withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	l := o.inputLimits()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			if _, _, err := safeinput.Prepare(&engine.Request{From: engine.FromDOCX, To: engine.ToPDF}, d, l); err != nil {
				b.Fatal(err)
			}
		}
	}
}
