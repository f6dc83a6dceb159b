package engine

import (
	"errors"
	"slices"
	"strings"

	"github.com/quire-dev/quire"
)

// Request is the conversion of one document, however it arrived (the
// HTTP adapter decodes its query into one per file); Validate tells what
// is wrong with it, once, in the engine's ConvertRequest, when the
// document's format is known.
type Request struct {
	// From is the document's format (one of Formats); "": told by its
	// content and Name (Detect), in the same pass that opens it.
	From string
	Name string // the document's file name, for Detect
	To   string // ToPDF or ToDOCX
	// Merge: the caller merges this document's PDF with others', so To
	// must be ToPDF.
	Merge   bool
	Options JobOptions
	// Malformed lists the fields that the request's adapter could not
	// decode; Validate reports them with the rest.
	Malformed []quire.Detail
}

// Validate reports every bad field of r at once, as a VALIDATION_ERROR
// whose details name the query parameters.
func (r Request) Validate() error {
	var d []quire.Detail
	bad := func(field, issue string) { d = append(d, quire.Detail{Field: field, Issue: issue}) }
	from := strings.ToLower(r.From)
	known := slices.Contains(Formats, from)
	if from != "" && !known {
		bad("from", "must be one of "+strings.Join(Formats, ", ")+", or absent: told from each file")
	}
	if r.Merge && r.To != ToPDF {
		bad("merge", "merges PDFs only (to=pdf)")
	}
	switch {
	case r.To != ToPDF && r.To != ToDOCX:
		bad("to", "must be pdf or docx")
	case known && !CanConvert(from, r.To):
		bad("to", "docx is made from "+strings.Join(DOCXSources, " or ")+" only, not from "+from)
	default:
		var invalid *quire.Error
		if errors.As(r.Options.Validate(from, r.To), &invalid) {
			d = append(d, invalid.Details...)
		}
	}
	return quire.InvalidRequest("The conversion request is not valid.", r.Malformed, d)
}
