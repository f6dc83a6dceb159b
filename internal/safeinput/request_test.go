package safeinput

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// TestPrepareDetectsOnce: without a format, prepare tells it from the
// package that the checks then read (detect hands it on), validates the
// request with it, and prepares the same input as with the format named.
func TestPrepareDetectsOnce(t *testing.T) {
	l := testLimits()
	for from, doc := range map[string][]byte{engine.FromXLSX: convtest.XLSX(2), engine.FromPPTX: convtest.PPTX(1), engine.FromODS: convtest.ODS(1)} {
		f, z, err := detect("no-extension", doc)
		if f != from || z == nil || err != nil {
			t.Fatalf("detect %s = %q, %v, %v; want the format and its opened package", from, f, z, err)
		}
		named, _, err := Prepare(&engine.Request{From: from, To: engine.ToPDF}, doc, l)
		if err != nil {
			t.Fatal(err)
		}
		r := &engine.Request{Name: "no-extension", To: engine.ToPDF}
		told, gotFrom, err := Prepare(r, doc, l)
		if err != nil || gotFrom != from || r.From != from || !bytes.Equal(told, named) {
			t.Errorf("%s without from: %q, %v (request's %q); the same input as with from: %v", from, gotFrom, err, r.From, bytes.Equal(told, named))
		}
	}
	r := &engine.Request{Name: "x.docx", To: engine.ToPDF, Options: engine.JobOptions{Landscape: true}}
	if _, _, err := Prepare(r, convtest.PPTX(1), l); err == nil || !strings.Contains(err.Error(), "not valid") || r.From != engine.FromPPTX {
		t.Errorf("landscape on a detected pptx: %v (from %q), want the request refused", err, r.From)
	}
	if _, _, err := Prepare(&engine.Request{Name: "notes.txt", To: engine.ToPDF}, []byte("plain words"), l); !errors.Is(err, engine.ErrInvalidFormat) {
		t.Errorf("a text that tells nothing: %v, want ErrInvalidFormat", err)
	}
}
