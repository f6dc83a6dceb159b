package libreoffice

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestMarkdownAndHTMLToDOCX converts to DOCX on the warm workers, then
// proves that the DOCX is one: it is a Word package, and converted back to
// PDF, pdftotext finds the text of the source.
func TestMarkdownAndHTMLToDOCX(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	for _, c := range []struct {
		from string
		in   string
		want []string
	}{
		{engine.FromMarkdown, "# Quarterly report\n\nRevenue grew **twelve** percent.\n\n| region | total |\n|---|---|\n| north | 41 |\n",
			[]string{"Quarterly report", "Revenue grew twelve percent.", "north", "41"}},
		{engine.FromHTML, "<!DOCTYPE html><html><body><h1>Minutes</h1><p>The board met on Tuesday.</p><ul><li>first item</li></ul></body></html>",
			[]string{"Minutes", "The board met on Tuesday.", "first item"}},
	} {
		r, err := p.ConvertWith(context.Background(), []byte(c.in), c.from, engine.ToDOCX, engine.JobOptions{})
		if err != nil {
			t.Errorf("%s to docx: %v", c.from, err)
			continue
		}
		z, err := zip.NewReader(bytes.NewReader(r.Output), int64(len(r.Output)))
		if err != nil || !hasPart(z, "word/document.xml") || r.Cold {
			t.Errorf("%s to docx: not a Word package (%v), or made cold (%v)", c.from, err, r.Cold)
			continue
		}
		back, err := p.Convert(context.Background(), r.Output, engine.FromDOCX)
		if err != nil {
			t.Errorf("%s to docx: the DOCX does not convert to PDF: %v", c.from, err)
			continue
		}
		out, err := exec.Command("pdftotext", "-layout", pdftest.WriteTemp(t, back), "-").Output()
		if err != nil {
			t.Fatalf("pdftotext (apt-get install poppler-utils): %v", err)
		}
		text := strings.Join(strings.Fields(string(out)), " ")
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s to docx and back: %q not in %q", c.from, w, text)
			}
		}
	}
}

// TestDOCXOnlyFromMarkdownAndHTML: the other formats do not convert to
// DOCX, and nothing converts to a format that does not exist: the
// request is refused, naming its "to".
func TestDOCXOnlyFromMarkdownAndHTML(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	for _, c := range []struct{ from, to string }{{engine.FromDOCX, engine.ToDOCX}, {engine.FromODT, engine.ToDOCX}, {engine.FromHTML, "odt"}} {
		_, err := p.ConvertWith(context.Background(), []byte("x"), c.from, c.to, engine.JobOptions{})
		var qe *quire.Error
		if !errors.As(err, &qe) || qe.Code != quire.CodeValidation || len(qe.Details) != 1 || qe.Details[0].Field != "to" {
			t.Errorf("%s to %s: %v, want a VALIDATION_ERROR naming to", c.from, c.to, err)
		}
	}
}

func hasPart(z *zip.Reader, name string) bool {
	for _, f := range z.File {
		if f.Name == name {
			return true
		}
	}
	return false
}
