package pdftools

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
)

// render draws one page as a PNG with poppler's pdftoppm, after checking
// that the image stays within RenderMaxPixels: the page's size (its crop
// box, else its media box, in points, times UserUnit) at the resolution
// asked. pdftoppm runs under the operation's timeout.
func (s *Service) render(ctx context.Context, in *input, req Request) (Result, error) {
	page, dpi := req.Page, req.DPI
	if page > in.pages {
		return Result{}, quire.Invalid("The page is not in the document.",
			quire.Detail{Field: "page", Issue: fmt.Sprintf("the PDF has %d pages", in.pages)})
	}
	w, h, err := pageSize(in.doc, page)
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	px := math.Ceil(w*float64(dpi)/72) * math.Ceil(h*float64(dpi)/72)
	if px > float64(s.opt.RenderMaxPixels) {
		most := int(72 * math.Sqrt(float64(s.opt.RenderMaxPixels)/(w*h)))
		return Result{}, quire.Invalid("The rendered page would be too large.", quire.Detail{Field: "dpi",
			Issue: fmt.Sprintf("page %d at %d dpi is %.0f pixels, more than the %d allowed (QUIRE_PDF_RENDER_MAX_PIXELS); at most %d dpi for this page", page, dpi, px, s.opt.RenderMaxPixels, most)})
	}
	dir, err := os.MkdirTemp("", "quire-render-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(path, in.doc.Bytes(), 0o600); err != nil {
		return Result{}, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "pdftoppm", "-png", "-singlefile", "-r", fmt.Sprint(dpi),
		"-f", fmt.Sprint(page), "-l", fmt.Sprint(page), path)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		if _, ok := err.(*exec.ExitError); !ok {
			return Result{}, &quire.Error{Code: quire.CodeEngineBusy, Message: "The renderer (pdftoppm, Debian's poppler-utils) is not available on this server.", RetryAfter: time.Minute}
		}
		s.opt.Logger.Info("pdftoppm refused a PDF", "file", in.name, "err", err, "stderr", stderr.String())
		return Result{}, quire.Errorf(quire.CodeUnprocessable, "%s: page %d could not be rendered.", display(File{Name: in.name}), page)
	}
	return Result{Data: stdout.Bytes(), ContentType: TypePNG, Documents: 1, Pages: 1}, nil
}

// pageSize is the size in points of the page's visible area (CropBox,
// else MediaBox), scaled by its UserUnit.
func pageSize(d *pdf.Document, page int) (w, h float64, err error) {
	pages, err := d.Pages()
	if err != nil {
		return 0, 0, err
	}
	p := pages[page-1]
	box := attr(p, "CropBox")
	if box == nil {
		box = attr(p, "MediaBox")
	}
	arr, err := d.Array(box)
	if err != nil || len(arr) != 4 {
		return 612, 792, nil // pdftoppm's default: US Letter
	}
	var v [4]float64
	for i, o := range arr {
		o, _ = d.Resolve(o)
		v[i] = number(o)
	}
	unit := 1.0
	if u := number(p.Dict["UserUnit"]); u > 0 {
		unit = u
	}
	w, h = math.Abs(v[2]-v[0])*unit, math.Abs(v[3]-v[1])*unit
	if w < 1 || h < 1 || w > 1e6 || h > 1e6 {
		return 0, 0, fmt.Errorf("%w: page %d has a box of %gx%g points", pdf.ErrUnreadable, page, w, h)
	}
	return w, h, nil
}

// attr is the page's own or inherited attribute.
func attr(p pdf.PageObject, key pdf.Name) pdf.Object {
	if o, ok := p.Dict[key]; ok {
		return o
	}
	return p.Inherited[key]
}

func number(o pdf.Object) float64 {
	switch v := o.(type) {
	case pdf.Int:
		return float64(v)
	case pdf.Real:
		return float64(v)
	}
	return 0
}
