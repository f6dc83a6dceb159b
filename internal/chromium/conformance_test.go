package chromium

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/conform/veratest"
	"github.com/quire-dev/quire/internal/engine"
)

// conformancePages are HTML and Markdown pages with what the standards
// ask about: headings out of order, links within and out of the page, a
// table, an image with alternative text, pages with and without a title.
var conformancePages = []Page{
	{From: engine.FromHTML, Name: "report.html", Doc: []byte(`<!doctype html><html lang="en"><head><title>Report</title></head><body>
<h2>Starts at two</h2><p>See <a href="https://example.com/">the site</a> and <a href="#end">the end</a>.</p>
<h4>Skips three</h4><table><tr><th>Name</th><td>Value</td></tr></table>
<img alt="A black dot" src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7">
<h2 id="end" style="opacity:.5">End</h2></body></html>`)},
	{From: engine.FromHTML, Name: "untitled.html", Doc: []byte(`<!doctype html><html lang="en"><body><p>No title and no heading: the file name is the title.</p></body></html>`)},
	{From: engine.FromMarkdown, Name: "notes.md", Doc: []byte("# Notes\n\nA list:\n\n- one\n- [a link](https://example.org/)\n\n### Deeper\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")},
}

// TestConformance prints each page as PDF/A-2b, as PDF/UA-1 and as
// both, and veraPDF finds every PDF compliant.
func TestConformance(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	dir := t.TempDir()
	byFlavour := map[string][]string{}
	for _, c := range []struct {
		opts     engine.JobOptions
		flavours []string
	}{
		{engine.JobOptions{PDFA: "PDF/A-2b"}, []string{"2b"}},
		{engine.JobOptions{PDFA: "PDF/A-3b"}, []string{"3b"}},
		{engine.JobOptions{PDFUA: true}, []string{"ua1"}},
		{engine.JobOptions{PDFA: "PDF/A-2b", PDFUA: true}, []string{"2b", "ua1"}},
	} {
		for _, pg := range conformancePages {
			r, err := p.Convert(context.Background(), pg, c.opts)
			if err != nil {
				t.Fatalf("%s with %+v: %v", pg.Name, c.opts, err)
			}
			path := filepath.Join(dir, strings.Join(c.flavours, "-")+"-"+pg.Name+".pdf")
			if err := os.WriteFile(path, r.Output, 0o600); err != nil {
				t.Fatal(err)
			}
			for _, f := range c.flavours {
				byFlavour[f] = append(byFlavour[f], path)
			}
		}
	}
	for f, paths := range byFlavour {
		veratest.RequireCompliant(t, f, paths)
	}
}

// TestImageWithoutAlt: PDF/UA refuses a page whose image has no
// alternative text, unless the caller takes it for decoration.
func TestImageWithoutAlt(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	pg := Page{From: engine.FromHTML, Name: "dot.html", Doc: []byte(`<!doctype html><html lang="en"><head><title>Dot</title></head><body><h1>Dot</h1>
<img src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7" width="40" height="40"></body></html>`)}
	_, err := p.Convert(context.Background(), pg, engine.JobOptions{PDFUA: true})
	if !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "page 1, image 1") {
		t.Fatalf("an image without alt: %v, want ErrUnprocessable naming page 1, image 1", err)
	}
	r, err := p.Convert(context.Background(), pg, engine.JobOptions{PDFUA: true, DecorativeImages: true})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dot.pdf")
	if err := os.WriteFile(path, r.Output, 0o600); err != nil {
		t.Fatal(err)
	}
	veratest.RequireCompliant(t, "ua1", []string{path})
}
