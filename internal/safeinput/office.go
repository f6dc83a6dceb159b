package safeinput

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
)

// An office package (OOXML: DOCX, XLSX, PPTX; OpenDocument: ODT, ODS,
// ODP) is opened once from the bytes received: its ZIP directory is read
// once (ooxml.Package), its format and encryption are told from it
// (sniff.go), it is checked once (expand.go: what it inflates to, a DTD,
// packages nested in it, entry names), and the parts that the cleaning
// rewrites are kept as that check inflated them. It is then rewritten at
// most once, uncompressed (it goes straight to an engine), with its
// outside links (packages.go) and a DOCX's comments (comments.go) taken
// out in the same pass; a package that needs neither goes as it came.

// officePackage is an opened office package of format from.
type officePackage struct {
	from string
	in   []byte
	zip  *ooxml.Package
	// kept holds the parts that clean may rewrite, as check inflated
	// them (those no larger than maxCommentPartBytes).
	kept map[string][]byte
	// unclean: an entry's name is not a clean relative path
	// (ooxml.CleanName); the rewrite drops such entries.
	unclean bool
	// comments: a DOCX whose main part has comments to take out, told
	// by a peek at its relationships before check, so that check keeps
	// its story parts only then (most documents have none).
	comments bool
	// keepComments: the conversion exports the comments
	// (engine.JobOptions.ExportsNotes), so they stay.
	keepComments bool
}

// packageLimits are those an office package is opened with: parts read
// whole are those cleaned (maxCommentPartBytes).
var packageLimits = ooxml.Limits{MaxPartSize: maxCommentPartBytes}

// openPackage opens in, declared of format from, unless z is in opened
// already (by detect): not a ZIP archive is ErrInvalidFormat, a damaged
// one ErrUnprocessable.
func openPackage(in []byte, from string, z *ooxml.Package) (*officePackage, error) {
	if !bytes.HasPrefix(in, []byte("PK\x03\x04")) {
		return nil, invalid(from, in, "it is not a ZIP package")
	}
	if z == nil {
		var err error
		if z, err = ooxml.Open(in, packageLimits); err != nil {
			return nil, fmt.Errorf("%w: its ZIP container is damaged: %s", engine.ErrUnprocessable, strings.TrimPrefix(err.Error(), ooxml.ErrNotPackage.Error()+": "))
		}
	}
	return &officePackage{from: from, in: in, zip: z, kept: map[string][]byte{}}, nil
}

// rewrites reports whether clean may rewrite the part name.
func (p *officePackage) rewrites(name string) bool {
	return outsideLinksFix(name, p.from) != nil || p.comments && isStoryPart(name)
}

// clean returns the package without references to content outside it
// and, a DOCX, without its comments: in itself when nothing is to be
// taken out.
func (p *officePackage) clean() []byte {
	out, err := p.cleanWith(&ooxml.Edits{Uncompressed: true})
	if err != nil {
		return p.in
	}
	return out
}

// cleanWith is clean over the caller's edits of the package (edited
// parts are cleaned as edited), written out with them in one rewrite.
func (p *officePackage) cleanWith(e *ooxml.Edits) ([]byte, error) {
	p.withoutOutsideLinks(e)
	if p.from == engine.FromDOCX && !p.keepComments {
		p.withoutComments(e)
	}
	if e.Empty() && !p.unclean && !p.zip.StoredWithDescriptor() && p.in != nil {
		return p.in, nil
	}
	return p.zip.Rewrite(e, ooxmlMainParts[p.from])
}

// part returns the content of the part name as the edits so far leave
// it, or nil when it is too large to rewrite here or cannot be read.
func (p *officePackage) part(e *ooxml.Edits, name string) []byte {
	if b, ok := e.Get(name); ok {
		return b
	}
	if b, ok := p.kept[name]; ok {
		return b
	}
	b := p.zip.Head(name, maxCommentPartBytes+1)
	if len(b) > maxCommentPartBytes {
		return nil
	}
	return b
}
