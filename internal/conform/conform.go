// Package conform makes the PDF an engine printed conform to what the
// caller asked, PDF/A-1b, 2b or 3b and PDF/UA-1, where the engine leaves
// it short, and refuses to claim a conformance the source does not allow.
//
// LibreOffice and Chromium write most of what the standards need (fonts
// embedded, a structure tree when tagging), but not all of it:
// LibreOffice 25.2 writes the Info dictionary's dates and the XMP's apart
// (the conversion time in one, the document's own or 0000-00-00 in the
// other), no title when the document has none, links and annotations
// without a description, and headings in whatever order the author used;
// Chromium writes no XMP metadata and no output intent at all. Apply
// appends one incremental update that rewrites the metadata as a whole
// (Info and XMP written from the same values, so they cannot disagree),
// adds an sRGB output intent where none is, and repairs the structure for
// PDF/UA. The engine's bytes stay a prefix of the output.
package conform

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

// Options say what the output must conform to.
type Options struct {
	// PDFA is the part of PDF/A (1, 2 or 3, conformance level B); 0 for none.
	PDFA int
	// UA asks for PDF/UA-1.
	UA bool
	// Title is the document's title when the PDF has none: the first
	// heading (the outline's first entry) comes before it.
	Title string
	// DecorativeImages marks the images without alternative text as
	// artifacts (decoration) instead of refusing the document.
	DecorativeImages bool
	// Now is the time written when the PDF carries no date; zero: the
	// current time.
	Now time.Time
}

// ErrMissingAlt is the error of a document whose images have no
// alternative text, which PDF/UA requires: Apply's error wraps it and
// names the images.
var ErrMissingAlt = errors.New("images without alternative text")

// Needed reports whether o asks for anything.
func (o Options) Needed() bool { return o.PDFA != 0 || o.UA }

// Apply returns in, made conform to o by an incremental update. A
// document with images that have no alternative text fails with
// ErrMissingAlt under o.UA, unless o.DecorativeImages.
func Apply(ctx context.Context, in []byte, o Options) (out []byte, err error) {
	if !o.Needed() {
		return in, nil
	}
	defer pdf.Recover(&err)
	d, err := pdf.Open(ctx, in, pdf.DefaultLimits())
	if err != nil {
		return nil, fmt.Errorf("conform: reading the engine's PDF: %w", err)
	}
	catRef, cat, err := d.Catalog()
	if err != nil {
		return nil, fmt.Errorf("conform: %w", err)
	}
	cat = cat.Clone()
	if o.UA {
		if err := repairStructure(ctx, d, cat, o.DecorativeImages); err != nil {
			return nil, err
		}
		if err := describeAnnotations(ctx, d, cat); err != nil {
			return nil, err
		}
		cat["ViewerPreferences"] = viewerPreferences(d, cat["ViewerPreferences"])
		cat["MarkInfo"] = pdf.Dict{"Marked": pdf.Bool(true)}
	}
	if o.PDFA != 0 && !hasOutputIntent(d, cat) {
		cat["OutputIntents"] = pdf.Array{outputIntent()}
	}
	m := newMetadata(d, cat, o)
	infoRef := d.Add(m.info())
	d.SetInfo(infoRef)
	cat["Metadata"] = &pdf.Stream{Dict: pdf.Dict{"Type": pdf.Name("Metadata"), "Subtype": pdf.Name("XML")}, Data: m.xmp()}
	d.Replace(catRef, cat)
	return d.Save()
}

// viewerPreferences returns v with DisplayDocTitle set: a reader shows
// the title, not the file name (PDF/UA-1 7.1).
func viewerPreferences(d *pdf.Document, v pdf.Object) pdf.Dict {
	prefs, err := d.Dict(v)
	if err != nil || prefs == nil {
		prefs = pdf.Dict{}
	}
	prefs = prefs.Clone()
	prefs["DisplayDocTitle"] = pdf.Bool(true)
	return prefs
}
