package convert

import (
	"archive/zip"
	"bytes"
	"io"
	"regexp"
	"strings"
)

// LibreOfficeKit 7.4 refuses to load a Writer document that has comments
// (see cold.go), and the PDF export leaves comments out anyway (its
// ExportNotes option is off). So before a DOCX goes to a worker, its
// comments are taken out: the relationship to the comments part, and the
// comment anchors and references in the text. The PDF is the same (the
// corpus test compares page counts with a cold soffice of the original
// file), made in about 20 ms by a warm worker instead of a second by a cold
// soffice. ODT and RTF files with comments still go to the cold soffice.

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

// withoutComments returns the DOCX in without its comments, or in itself
// when it has none or is not a package this rewrite can read within its
// limits.
func withoutComments(in []byte) []byte {
	z, err := openZIP(in, FromDOCX) // checkExpansion has bounded what it expands to
	if err != nil {
		return in
	}
	rels := zipFile(z, "word/_rels/document.xml.rels")
	if !commentsRelationship.Match(readZIPFile(rels, maxCommentPartBytes)) {
		return in
	}
	out, err := rewriteParts(z, func(name string) func([]byte) []byte {
		switch {
		case name == rels.Name:
			return func(b []byte) []byte { return commentsRelationship.ReplaceAll(b, nil) }
		case strings.HasPrefix(name, "word/") && strings.HasSuffix(name, ".xml"):
			return func(b []byte) []byte { return commentMarkup.ReplaceAll(b, nil) }
		}
		return nil
	})
	if err != nil {
		return in
	}
	return out
}

// rewriteParts copies the package z, with the parts for which edit returns
// a function rewritten by it; the others are copied compressed, as they are.
func rewriteParts(z *zip.Reader, edit func(name string) func([]byte) []byte) ([]byte, error) {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range z.File {
		if err := rewritePart(w, f, edit(f.Name)); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func rewritePart(w *zip.Writer, f *zip.File, fix func([]byte) []byte) error {
	if fix == nil {
		src, err := f.OpenRaw()
		if err != nil {
			return err
		}
		dst, err := w.CreateRaw(&f.FileHeader)
		if err != nil {
			return err
		}
		_, err = io.Copy(dst, src)
		return err
	}
	body := readZIPFile(f, maxCommentPartBytes+1)
	if body == nil || len(body) > maxCommentPartBytes {
		return io.ErrUnexpectedEOF
	}
	dst, err := w.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
	if err != nil {
		return err
	}
	_, err = dst.Write(fix(body))
	return err
}
