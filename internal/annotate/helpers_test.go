package annotate

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/ooxml"
)

const corpusDir = "../../../shared/corpus/annotate"

// fixture reads a template of the shared corpus, skipping when the corpus is absent.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("the shared corpus is not here (%s): %v", corpusDir, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtures lists the templates of the corpus (not the reference output).
func fixtures(t testing.TB) []string {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(corpusDir, "*.docx"))
	if len(names) == 0 {
		t.Skipf("the shared corpus is not here (%s)", corpusDir)
	}
	var out []string
	for _, n := range names {
		if b := filepath.Base(n); b != referenceOutput {
			out = append(out, b)
		}
	}
	return out
}

const referenceOutput = "synthetic-sc-filled-by-superdoc-1.46.3.docx"

// noFetch is the fetcher of engines whose tests use no URL.
func noFetch(context.Context, string) ([]byte, error) {
	return nil, errors.New("no downloads in this test")
}

func newTestEngine(t testing.TB, fetch Fetcher) *Engine {
	t.Helper()
	if fetch == nil {
		fetch = noFetch
	}
	e, err := NewEngine(DefaultLimits, fetch, certpage.DefaultFonts("")[0].Path)
	if err != nil {
		t.Fatalf("%v (install fonts-dejavu-core)", err)
	}
	return e
}

// entries returns the decompressed entries of a package by name.
func entries(t testing.TB, docx []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(docx), int64(len(docx)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	return out
}

// rawEntries returns each entry's header and compressed bytes, to check
// untouched entries are copied byte for byte.
func rawEntries(t testing.TB, docx []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(docx), int64(len(docx)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		r, err := f.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r)
		out[f.Name] = string(b) + "|" + f.Modified.String() + "|" + string(rune(f.CRC32))
	}
	return out
}

// parse parses a part of a package.
func parse(t testing.TB, docx []byte, name string) *ooxml.Doc {
	t.Helper()
	data, ok := entries(t, docx)[name]
	if !ok {
		t.Fatalf("no %s in the package", name)
	}
	d, err := ooxml.Parse(data, ooxml.XMLLimits{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

// pngDataURI is a w x h PNG as a data: URI.
func pngDataURI(t testing.TB, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, h/2, color.Black)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}
