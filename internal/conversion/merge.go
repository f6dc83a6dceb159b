package conversion

import (
	"context"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/pdftools"
)

// merge joins the PDFs of r's files, and makes the result conform as
// each part did (engine.Conform): the merge writes metadata of its own
// (and, unless told, cross-reference streams, which PDF/A-1 forbids).
// The result is named after the first file.
func merge(ctx context.Context, r Request, parts []File) ([]byte, error) {
	name := r.Files[0].Name
	pdfs := make([][]byte, len(parts))
	for i, p := range parts {
		pdfs[i] = p.Data
	}
	c := r.Options.ConformanceOptions(name)
	out, err := pdftools.Merge(pdfs, c.PDFA == 1)
	if err != nil {
		return nil, err
	}
	res, err := engine.Conform(ctx, engine.Result{Output: out}, nil, name, r.Options)
	return res.Output, engine.ToAPIError(err, 0)
}
