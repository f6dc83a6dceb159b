package chromium

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// find returns the first word of pages whose text is w.
func find(t *testing.T, pages [][]word, w string) word {
	t.Helper()
	for _, p := range pages {
		for _, x := range p {
			if x.Text == w {
				return x
			}
		}
	}
	t.Fatalf("%q is not in the PDF: %v", w, pages)
	return word{}
}

func html(doc string) Page { return Page{Doc: []byte(doc), From: engine.FromHTML} }

// TestGridSideBySide: a CSS grid of two cells comes out side by side
// (LibreOffice's HTML import stacks them).
func TestGridSideBySide(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	r, err := p.Convert(context.Background(), html(`<!DOCTYPE html><html><head><style>
.grid { display: grid; grid-template-columns: 1fr 1fr; gap: 1cm }
</style></head><body><div class="grid"><div>Leftcell</div><div>Rightcell</div></div></body></html>`), engine.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pages := pdfWords(t, r.Output)
	l, rt := find(t, pages, "Leftcell"), find(t, pages, "Rightcell")
	if rt.XMin <= l.XMax || abs(rt.YMin-l.YMin) > 1 {
		t.Errorf("the cells are not side by side: left %+v, right %+v", l, rt)
	}
}

func abs(x float64) float64 { return max(x, -x) }

// TestAssetsByRelativeName: the page's style sheet and image, given as
// the request's other files, load by their relative names.
func TestAssetsByRelativeName(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	page := html(`<!DOCTYPE html><html><head><link rel="stylesheet" href="style.css"></head>
<body><p class="mark">Body</p><img src="images/dot.png"></body></html>`)
	page.Assets = []Asset{{Name: "style.css", Data: []byte(`.mark::after { content: " Fromstylesheet" }`)}, {Name: "images/dot.png", Data: pngOf(t, 37, 23)}}
	r, err := p.Convert(context.Background(), page, engine.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	find(t, pdfWords(t, r.Output), "Fromstylesheet")
	if got := pdfImageSizes(t, r.Output); len(got) != 1 || got[0] != "37x23" {
		t.Errorf("images of the PDF: %v, want the one 37x23 image", got)
	}
}

// pngOf is a grey PNG image of w by h pixels but for one red.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pdfImageSizes lists the sizes of the images of pdf, as pdfimages
// (poppler-utils) reads them.
func pdfImageSizes(t *testing.T, pdf []byte) []string {
	t.Helper()
	f := t.TempDir() + "/in.pdf"
	if err := writeFile(f, pdf); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfimages", "-list", f).Output()
	if err != nil {
		t.Fatalf("pdfimages (apt-get install poppler-utils): %v", err)
	}
	var sizes []string
	for _, line := range strings.Split(string(out), "\n")[2:] {
		if f := strings.Fields(line); len(f) > 4 && f[2] == "image" {
			sizes = append(sizes, f[3]+"x"+f[4])
		}
	}
	return sizes
}

// TestMarkdownWithOptions: Markdown is rendered and printed with the
// paper, margin, landscape and page range asked for.
func TestMarkdownWithOptions(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	md := "# Title\n\nFirstpage text.\n\n<div style=\"break-before: page\"></div>\n\n" + strings.Repeat("More text.\n\n", 200) + "Lastword\n"
	r, err := p.Convert(context.Background(), Page{Doc: []byte(md), From: engine.FromMarkdown},
		engine.JobOptions{Paper: "Letter", Margin: "1in", Landscape: true, PageRanges: "1"})
	if err != nil {
		t.Fatal(err)
	}
	pages := pdfWords(t, r.Output)
	if len(pages) != 1 || r.Pages != 1 {
		t.Fatalf("pageRanges=1 printed %d pages, counted %d", len(pages), r.Pages)
	}
	w := find(t, pages, "Title")
	if w.XMin < 71 || w.XMin > 80 || w.YMin < 71 {
		t.Errorf("with a 1in margin the title is at %+v", w)
	}
	info := pdfInfo(t, r.Output)
	if !regexp.MustCompile(`Page size:\s+792 x 612 pts`).MatchString(info) {
		t.Errorf("landscape Letter: %s", info)
	}
}

func pdfInfo(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdfinfo", "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdfinfo (apt-get install poppler-utils): %v", err)
	}
	return string(out)
}

// TestOptionsRefused: bad options never reach a browser.
func TestOptionsRefused(t *testing.T) {
	p := newPool(t, 1, nil)
	for _, o := range []engine.JobOptions{{Paper: "B7"}, {Margin: "3 apples"}, {Scale: 3}, {Paper: "10x10mm"}, {Margin: "150mm"}, {Engine: "gecko"}, {PDFA: "PDF/A-1b", Engine: "chromium"}, {DecorativeImages: true}} {
		_, err := p.Convert(context.Background(), html("<p>x</p>"), o)
		if !isValidation(err) {
			t.Errorf("%+v: %v, want a validation error", o, err)
		}
	}
	if c := p.Status().Counters; c.Converted+c.Failed != 0 {
		t.Errorf("bad options reached a browser: %+v", c)
	}
}

func isValidation(err error) bool {
	var e *quire.Error
	return errors.As(err, &e) && e.Code == quire.CodeValidation
}
