package libreoffice

import (
	"context"

	"github.com/quire-dev/quire/internal/engine"
)

// The tests' shorthands for ConvertRequest, the pool's conversion of a
// document (ConvertEdited converts annotate's).

// Convert converts in, of format from, to PDF.
func (p *Pool) Convert(ctx context.Context, in []byte, from string) ([]byte, error) {
	r, err := p.ConvertTimed(ctx, in, from)
	return r.Output, err
}

// ConvertTimed is Convert, with the whole result (times, pages).
func (p *Pool) ConvertTimed(ctx context.Context, in []byte, from string) (engine.Result, error) {
	return p.ConvertWith(ctx, in, from, engine.ToPDF, engine.JobOptions{})
}

// ConvertWith converts in, of format from, to format to with opts.
func (p *Pool) ConvertWith(ctx context.Context, in []byte, from, to string, opts engine.JobOptions) (engine.Result, error) {
	return p.ConvertRequest(ctx, engine.Request{From: from, To: to, Options: opts}, in)
}
