package safeinput

import (
	"bytes"
	"regexp"
	"strings"

	"github.com/quire-dev/quire/internal/ooxml"
)

// LibreOfficeKit 7.4 refuses to load a Writer document that has comments
// (see cold.go), and the PDF export leaves comments out anyway (its
// ExportNotes option is off). So before a DOCX goes to a worker, its
// comments are taken out: the relationship to the comments part, and the
// comment anchors and references in the text. The PDF is the same (the
// corpus test compares page counts with a cold soffice of the original
// file), made in about 20 ms by a warm worker instead of a second by a cold
// soffice. ODT and RTF files with comments still go to the cold soffice,
// and so does a DOCX whose conversion asks for its comments in the PDF
// (Gotenberg's exportNotes).

// maxCommentPartBytes bounds a part that the rewrite reads; a package
// with a larger one is left as it is (LibreOffice judges it, as before).
const maxCommentPartBytes = 64 << 20

var (
	// commentsRelationship is the relationship of the main document part to
	// its comments part (ECMA-376 Part 1, 17.13.4.2).
	commentsRelationship = regexp.MustCompile(`<Relationship\s[^>]*Type="[^"]*/relationships/comments"[^>]*/>`)
	// commentMarkup matches the empty elements that anchor and reference
	// comments in a story, in any namespace prefix, self-closed or not.
	commentMarkup = regexp.MustCompile(`<(\w+:)?comment(?:RangeStart|RangeEnd|Reference)\b[^>]*?(?:/>|>\s*</(\w+:)?comment(?:RangeStart|RangeEnd|Reference)>)`)
)

// hasComments reports whether the relationships rels hold one to a
// comments part. Most documents have none: a search for the type's
// literal tail, which every match holds, answers for them at a fraction
// of the regular expression's cost (it was a tenth of the service's work
// on the corpus before a job is queued, BenchmarkPrepareCorpus).
func hasComments(rels []byte) bool {
	return bytes.Contains(rels, []byte(`/relationships/comments"`)) && commentsRelationship.Match(rels)
}

// documentRels are the main document part's relationships.
const documentRels = "word/_rels/document.xml.rels"

// isStoryPart reports whether the DOCX part name may anchor comments.
func isStoryPart(name string) bool {
	return strings.HasPrefix(name, "word/") && strings.HasSuffix(name, ".xml")
}

// withoutComments adds to e the parts of the DOCX without its comments;
// nothing when it has none, or when a part to rewrite is too large for
// this rewrite (LibreOffice then judges the document as it is).
func (p *officePackage) withoutComments(e *ooxml.Edits) {
	rels := p.part(e, documentRels)
	if !hasComments(rels) {
		return
	}
	fixed := map[string][]byte{documentRels: commentsRelationship.ReplaceAll(rels, nil)}
	for _, name := range p.zip.Names() {
		if !isStoryPart(name) {
			continue
		}
		body := p.part(e, name)
		if body == nil {
			return
		}
		if out := commentMarkup.ReplaceAll(body, nil); !bytes.Equal(out, body) {
			fixed[name] = out
		}
	}
	for name, b := range fixed {
		e.Set(p.zip, name, b)
	}
}
