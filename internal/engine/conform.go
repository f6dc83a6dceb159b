package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quire-dev/quire/internal/conform"
)

// ConformanceOptions returns what o asks the PDF of a document named
// name to conform to, for package conform: the PDF/A part, PDF/UA, and
// the file name (without extension) as the title of last resort.
func (o JobOptions) ConformanceOptions(name string) conform.Options {
	c := conform.Options{UA: o.PDFUA, DecorativeImages: o.DecorativeImages}
	if i := slices.Index(PDFAVersions, o.PDFA); i >= 0 {
		c.PDFA = i + 1
	}
	c.Title = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	if name == "" {
		c.Title = ""
	}
	return c
}

// Conform makes the PDF an engine printed for o conform to the PDF/A and
// PDF/UA that o asks for (package conform), after the engine: each
// engine leaves something short of the standards. A document that lacks
// what PDF/UA needs (an image without alternative text) fails with
// ErrUnprocessable, naming what is missing.
func Conform(ctx context.Context, res Result, err error, name string, o JobOptions) (Result, error) {
	c := o.ConformanceOptions(name)
	if err != nil || !c.Needed() {
		return res, err
	}
	out, err := conform.Apply(ctx, res.Output, c)
	switch {
	case errors.Is(err, conform.ErrMissingAlt):
		return Result{}, fmt.Errorf("%w: PDF/UA-1 needs alternative text for every image, and the document has %v; "+
			"add it to the images, or set %s=true to mark them as decorative", ErrUnprocessable, err, ParamDecorativeImages)
	case err != nil:
		return Result{}, fmt.Errorf("%w: making the PDF conform: %v", ErrUnprocessable, err)
	}
	res.Output = out
	return res, nil
}
