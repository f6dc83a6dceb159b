// Package safeinput is what stands between a client's document and an
// engine: it tells the document's format (Detect, the one detection),
// checks it against its declared format, the input limits, what it
// inflates to and how deep it nests (Check, CheckRequest, CheckText), and
// rewrites it so that nothing in it reaches outside it (Prepare): office
// packages lose their outside links and a DOCX its comments, HTML is
// sanitised, Markdown rendered to safe HTML, RTF loses its include
// fields. Each office package is opened once (ooxml.Package) and handed
// along from the detection to the checks and the rewriting.
//
// Its errors match the Err* values of package engine.
package safeinput

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
)

// Defaults of an engine's Limits, for the engines' options.
const (
	DefaultMaxInputBytes       = 25 << 20
	DefaultMaxExpandedBytes    = 256 << 20
	DefaultMaxCompressionRatio = 200
)

// Limits bound a document before any engine sees it. The engine applies
// its defaults first: here, zero is zero.
type Limits struct {
	// MaxInputBytes is the largest accepted input, and the largest
	// package nested in a document (ErrTooLarge).
	MaxInputBytes int64
	// MaxExpandedBytes bounds what a ZIP-based document (OOXML, ODF) and
	// the packages nested in it inflate to (negative: no limit); see
	// expand.go.
	MaxExpandedBytes int64
	// MaxCompressionRatio bounds the ratio of inflated to compressed size
	// of each part larger than 1 MiB of such a package (zero or negative:
	// no limit).
	MaxCompressionRatio int
	// Text bounds the nesting and tables of Markdown and HTML.
	Text TextLimits
}

// CheckRequest runs the checks of Prepare, which spend no engine time: it
// validates r (its format told first when r.From is empty) and checks in
// against l and its declared format (a ZIP package also against what it
// expands to and for a DTD, expand.go; Markdown and HTML for their
// nesting, nesting.go).
func CheckRequest(r engine.Request, in []byte, l Limits) error {
	_, _, _, err := check(in, &r, l)
	return err
}

// check is CheckRequest, returning the package it opened (nil for a text
// format) and the format, and whether in goes to the engine as it is: an
// encrypted document, given with its password, cannot be read here, so
// LibreOffice's profile's link blocking, the workers' namespaces and the
// memory limit alone guard it.
func check(in []byte, r *engine.Request, l Limits) (pkg *officePackage, from string, asIs bool, err error) {
	z, err := detectAndValidate(r, in)
	if err != nil {
		return nil, "", false, err
	}
	from = strings.ToLower(r.From)
	if int64(len(in)) > l.MaxInputBytes {
		return nil, "", false, fmt.Errorf("%w: %d bytes, the limit is %d", engine.ErrTooLarge, len(in), l.MaxInputBytes)
	}
	pkg, err = sniff(in, from, z)
	if err != nil {
		if errors.Is(err, engine.ErrEncrypted) && r.Options.Password != "" {
			return nil, from, true, nil
		}
		return nil, "", false, err
	}
	if pkg != nil {
		// Comments asked for in the PDF stay: LibreOffice then loads the
		// document as it is (cold.go when LibreOfficeKit cannot).
		pkg.keepComments = r.Options.ExportsNotes()
		return pkg, from, false, pkg.check(l)
	}
	return nil, from, false, CheckText(in, from, l.Text)
}

// Prepare checks in (CheckRequest), renders Markdown to HTML, takes out
// what would load content from outside the document (html.go,
// packages.go, rtf.go), and takes the comments out of a DOCX
// (comments.go) unless r's options export them. It returns the input to convert and its format, which it
// sets in r when r names none.
func Prepare(r *engine.Request, in []byte, l Limits) ([]byte, string, error) {
	pkg, from, asIs, err := check(in, r, l)
	switch {
	case err != nil:
		return nil, "", err
	case asIs:
		return in, from, nil
	case pkg != nil:
		return pkg.clean(), from, nil
	}
	opts := r.Options
	switch from {
	case engine.FromMarkdown:
		html, err := markdownToHTML(in)
		if err != nil {
			return nil, "", err
		}
		return withPageSetup(sanitizeHTML(html), opts), engine.FromHTML, nil // goldmark's output is safe; this makes sure
	case engine.FromHTML:
		return withPageSetup(sanitizeHTML(in), opts), from, nil
	case engine.FromRTF:
		return withoutIncludeFields(in), from, nil
	}
	return in, from, nil
}

// PrepareEdited is Prepare for a DOCX template that its caller opened and
// edited (annotate fills one): the template's own entries are checked as
// any package's are (expand.go), the caller's edits, which it wrote
// itself, are not; they are cleaned with the rest (office.go) and the
// package is written out once, edits and cleaning together.
func PrepareEdited(template *ooxml.Package, edits *ooxml.Edits, l Limits) ([]byte, error) {
	if ooxmlFormat(template) != engine.FromDOCX {
		return nil, fmt.Errorf("%w: declared %s, but the ZIP package has no %s", engine.ErrInvalidFormat, engine.FromDOCX, ooxmlMainParts[engine.FromDOCX])
	}
	pkg := &officePackage{from: engine.FromDOCX, zip: template, kept: map[string][]byte{}}
	if err := pkg.check(l); err != nil {
		return nil, err
	}
	in, err := pkg.cleanWith(edits)
	if err != nil {
		return nil, fmt.Errorf("convert: writing the edited package: %w", err)
	}
	if int64(len(in)) > l.MaxInputBytes {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", engine.ErrTooLarge, len(in), l.MaxInputBytes)
	}
	return in, nil
}
