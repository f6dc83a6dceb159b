package libreoffice

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/conform/veratest"
	"github.com/quire-dev/quire/internal/engine"
)

// convertAll converts every file with r's options, two at a time, and
// writes each PDF into dir; it returns the PDFs' paths, and the files
// the engine refused (as TestCorpusMatchesColdSoffice allows).
func convertAll(t *testing.T, p *Pool, r engine.Request, files []string, dir string) (pdfs, refused []string) {
	t.Helper()
	var mu sync.Mutex
	work := make(chan string)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				path, err := convertFile(p, r, f, dir)
				mu.Lock()
				switch {
				case errors.Is(err, engine.ErrUnprocessable) || errors.Is(err, engine.ErrInvalidFormat):
					refused = append(refused, filepath.Base(f)+" ("+err.Error()+")")
				case err != nil:
					t.Errorf("%s: %v", filepath.Base(f), err)
				default:
					pdfs = append(pdfs, path)
				}
				mu.Unlock()
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	return pdfs, refused
}

func convertFile(p *Pool, r engine.Request, file, dir string) (string, error) {
	in, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r.Name = filepath.Base(file)
	res, err := p.ConvertRequest(ctx, r, in)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, strings.TrimSuffix(r.Name, filepath.Ext(r.Name))+".pdf")
	return path, os.WriteFile(path, res.Output, 0o600)
}

// TestCorpusPDFAVeraPDF converts every DOCX of the corpus to PDF/A-1b, 2b and
// 3b, and veraPDF finds every PDF compliant.
func TestCorpusPDFAVeraPDF(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	files := corpusFiles(t)
	for i, part := range engine.PDFAVersions {
		flavour := []string{"1b", "2b", "3b"}[i]
		t.Run(flavour, func(t *testing.T) {
			pdfs, refused := convertAll(t, p, engine.Request{From: engine.FromDOCX, To: engine.ToPDF, Options: engine.JobOptions{PDFA: part}}, files, t.TempDir())
			if len(refused) > len(files)/10 {
				t.Errorf("%d of %d files refused: %s", len(refused), len(files), strings.Join(refused, ", "))
			}
			veratest.RequireCompliant(t, flavour, pdfs)
		})
	}
}

// uaDOCX are corpus files with what PDF/UA asks of a converter: a title
// in the core properties or none, headings, links (to the web and
// within the document), footnotes, tables, headers and footers.
var uaDOCX = []string{"python-docx__doc-coreprops.docx", "docx4j__Bookmark_crossrefs.docx",
	"mammoth__footnote-hyperlink.docx", "mammoth__endnotes.docx", "mammoth__tables.docx"}

// uaHTML are pages with headings out of order, links, and an image with
// alternative text.
var uaHTML = []string{
	`<!doctype html><html lang="en"><head><title>Report</title></head><body><h2>Starts at two</h2><p>See <a href="https://example.com/">the site</a>.</p><h4>Skips three</h4><p>Text.</p></body></html>`,
	`<!doctype html><html lang="en"><body><h1>Untitled page</h1><p>A <a href="#end">link within</a> the page.</p><h2 id="end">End</h2></body></html>`,
	`<!doctype html><html lang="en"><body><p>No heading, no title.</p><img alt="A black dot" src="data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"><table><tr><th>a</th><td>1</td></tr></table></body></html>`,
}

// TestPDFUAVeraPDF converts DOCX files and HTML pages to PDF/UA-1 with
// LibreOffice, and veraPDF finds every PDF compliant.
func TestPDFUAVeraPDF(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	corpusFiles(t)
	dir := t.TempDir()
	var files []string
	for _, f := range uaDOCX {
		files = append(files, filepath.Join(corpusDir, f))
	}
	pdfs, refused := convertAll(t, p, engine.Request{From: engine.FromDOCX, To: engine.ToPDF, Options: engine.JobOptions{PDFUA: true}}, files, dir)
	var pages []string
	for i, h := range uaHTML {
		pages = append(pages, filepath.Join(dir, "page"+string(rune('1'+i))+".html"))
		if err := os.WriteFile(pages[i], []byte(h), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	html, _ := convertAll(t, p, engine.Request{From: engine.FromHTML, To: engine.ToPDF, Options: engine.JobOptions{PDFUA: true, Engine: engine.EngineLibreOffice}}, pages, dir)
	both, _ := convertAll(t, p, engine.Request{From: engine.FromDOCX, To: engine.ToPDF, Options: engine.JobOptions{PDFUA: true, PDFA: "PDF/A-2b"}}, files[:1], t.TempDir())
	if len(pdfs) != len(uaDOCX) || len(html) != len(uaHTML) || len(both) != 1 {
		t.Fatalf("converted %d DOCX, %d HTML, %d PDF/A and UA, want all; refused: %s", len(pdfs), len(html), len(both), refused)
	}
	veratest.RequireCompliant(t, "ua1", append(append(pdfs, html...), both...))
	veratest.RequireCompliant(t, "2b", both)
}

// TestPDFUAImageWithoutAlt: a picture without alternative text is
// refused with 422 naming it, unless the caller takes it for decoration,
// and then the PDF is compliant.
func TestPDFUAImageWithoutAlt(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	corpusFiles(t)
	file := filepath.Join(corpusDir, "mammoth__tiny-picture.docx")
	dir := t.TempDir()
	_, err := convertFile(p, engine.Request{From: engine.FromDOCX, To: engine.ToPDF, Options: engine.JobOptions{PDFUA: true}}, file, dir)
	if !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "page 1, image 1") || !strings.Contains(err.Error(), engine.ParamDecorativeImages) {
		t.Fatalf("image without alt: %v, want ErrUnprocessable naming page 1, image 1 and %s", err, engine.ParamDecorativeImages)
	}
	var paths []string
	for _, f := range []string{file, filepath.Join(corpusDir, "docx4j__headers_footers.docx")} {
		path, err := convertFile(p, engine.Request{From: engine.FromDOCX, To: engine.ToPDF, Options: engine.JobOptions{PDFUA: true, DecorativeImages: true}}, f, dir)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	veratest.RequireCompliant(t, "ua1", paths)
}
