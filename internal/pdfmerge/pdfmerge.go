// Package pdfmerge joins PDF files into one, page after page, with
// pdfcpu. It is meant for PDFs this service made itself (LibreOffice's
// output), not for untrusted ones.
package pdfmerge

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
)

// Merge returns one PDF with the pages of pdfs, in their order. A single
// PDF is returned as it is. classic writes a cross-reference table and no
// object streams, as PDF/A-1 requires (PDF 1.4 has neither).
func Merge(pdfs [][]byte, classic bool) ([]byte, error) {
	switch len(pdfs) {
	case 0:
		return nil, errors.New("pdfmerge: no PDF to merge")
	case 1:
		return pdfs[0], nil
	}
	in := make([]io.ReadSeeker, len(pdfs))
	for i, p := range pdfs {
		in[i] = bytes.NewReader(p)
	}
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	if classic {
		conf.WriteObjectStream, conf.WriteXRefStream = false, false
	}
	var out bytes.Buffer
	if err := api.MergeRaw(in, &out, false, conf); err != nil {
		return nil, fmt.Errorf("pdfmerge: %w", err)
	}
	return out.Bytes(), nil
}
