package conversion

import (
	"testing"

	"github.com/quire-dev/quire/internal/engine"
)

// TestEngineFor: HTML and Markdown to PDF go to Chromium unless the
// options name LibreOffice or set one of its options; the rest goes to
// LibreOffice.
func TestEngineFor(t *testing.T) {
	for _, c := range []struct {
		from, to string
		o        engine.JobOptions
		want     string
	}{
		{engine.FromHTML, engine.ToPDF, engine.JobOptions{}, engine.EngineChromium},
		{"MD", engine.ToPDF, engine.JobOptions{Paper: "A4"}, engine.EngineChromium},
		{engine.FromHTML, engine.ToPDF, engine.JobOptions{PDFA: "PDF/A-1b"}, engine.EngineLibreOffice},
		{engine.FromHTML, engine.ToPDF, engine.JobOptions{PDFA: "PDF/A-2b", PDFUA: true}, engine.EngineChromium},
		{engine.FromHTML, engine.ToPDF, engine.JobOptions{Engine: "LibreOffice"}, engine.EngineLibreOffice},
		{engine.FromHTML, engine.ToDOCX, engine.JobOptions{}, engine.EngineLibreOffice},
		{engine.FromDOCX, engine.ToPDF, engine.JobOptions{}, engine.EngineLibreOffice},
	} {
		if got := engineFor(c.o, c.from, c.to); got != c.want {
			t.Errorf("%+v from %s to %s: %s, want %s", c.o, c.from, c.to, got, c.want)
		}
	}
}
