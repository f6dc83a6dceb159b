package pdf

import (
	"context"
	"errors"
)

const corpusDir = "../../../shared/corpus/pdf"

func errorsIs(err, target error) bool { return errors.Is(err, target) }

// layout is what a signing with a certificate page reads of a document
// before appending to it.
type layout struct {
	pages         int
	width, height float64
}

// pageLayout opens b as for signing and reads its layout.
func pageLayout(ctx context.Context, b []byte) (layout, error) {
	d, err := Open(ctx, b, Limits{})
	if err != nil {
		return layout{}, err
	}
	ps, err := d.Pages()
	if err != nil {
		return layout{}, err
	}
	w, h, err := d.LastPageSize()
	return layout{pages: len(ps), width: w, height: h}, err
}

// appended opens b, appends pages and saves the result.
func appended(ctx context.Context, b []byte, pages []Page) ([]byte, error) {
	d, err := Open(ctx, b, Limits{})
	if err != nil {
		return nil, err
	}
	if _, err := d.AppendPages(pages); err != nil {
		return nil, err
	}
	return d.Save()
}
