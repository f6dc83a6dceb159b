package safeinput

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
)

// A document's format is told by its content where the content says it:
// an OOXML package by the content type of its main part, an OpenDocument
// package by its mimetype entry, a legacy binary document by the streams
// of its compound file, RTF by its signature. Text formats (CSV,
// Markdown, HTML) say nothing reliable about themselves, so for them the
// file's name decides, and markup without a name is HTML.

// ooxmlMainParts are the main parts of the OOXML formats.
var ooxmlMainParts = map[string]string{
	engine.FromDOCX: "word/document.xml",
	engine.FromXLSX: "xl/workbook.xml",
	engine.FromPPTX: "ppt/presentation.xml",
}

// ooxmlContentTypes are the content types of the main parts, as
// [Content_Types].xml names them, by format; macro-enabled and template
// variants are the same documents to a converter.
var ooxmlContentTypes = []struct{ format, contentType string }{
	{engine.FromDOCX, "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"},
	{engine.FromDOCX, "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"},
	{engine.FromDOCX, "application/vnd.ms-word.document.macroEnabled.main+xml"},
	{engine.FromXLSX, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"},
	{engine.FromXLSX, "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml"},
	{engine.FromXLSX, "application/vnd.ms-excel.sheet.macroEnabled.main+xml"},
	{engine.FromPPTX, "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"},
	{engine.FromPPTX, "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml"},
	{engine.FromPPTX, "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml"},
}

// odfMimeTypes are the mimetype entries of the OpenDocument formats.
var odfMimeTypes = map[string]string{
	engine.FromODT: "application/vnd.oasis.opendocument.text",
	engine.FromODS: "application/vnd.oasis.opendocument.spreadsheet",
	engine.FromODP: "application/vnd.oasis.opendocument.presentation",
}

// cfbStreams are the main streams of the legacy binary formats ("Book"
// is Excel 5's).
var cfbStreams = map[string][]string{
	engine.FromDOC: {"WordDocument"},
	engine.FromXLS: {"Workbook", "Book"},
	engine.FromPPT: {"PowerPoint Document"},
}

// formatNames name the formats that detectContent tells, for messages.
var formatNames = map[string]string{
	engine.FromDOCX: "a Word document (docx)",
	engine.FromXLSX: "an Excel workbook (xlsx)",
	engine.FromPPTX: "a PowerPoint presentation (pptx)",
	engine.FromODT:  "an OpenDocument text (odt)",
	engine.FromODS:  "an OpenDocument spreadsheet (ods)",
	engine.FromODP:  "an OpenDocument presentation (odp)",
	engine.FromDOC:  "a Word 97-2003 document (doc)",
	engine.FromXLS:  "an Excel 97-2003 workbook (xls)",
	engine.FromPPT:  "a PowerPoint 97-2003 presentation (ppt)",
}

// textExtensions are the file name extensions that tell a text format.
var textExtensions = map[string]string{
	".csv": engine.FromCSV, ".md": engine.FromMarkdown, ".markdown": engine.FromMarkdown, ".html": engine.FromHTML, ".htm": engine.FromHTML,
}

// Detect returns the format of in (one of Formats), from its content,
// or else from its name: a text file's, and a damaged or encrypted
// document's, whose content does not tell (Convert then says what is
// wrong with it). Its errors match ErrInvalidFormat (not a document it
// can tell) or ErrEncrypted (a password-protected OOXML file, whose kind
// its encryption hides, under a name that does not tell it).
func Detect(name string, in []byte) (string, error) {
	from, _, err := detect(name, in)
	return from, err
}

// detect is Detect, with the ZIP package it opened to tell an office
// package's format (nil for other documents), for the checks that
// follow to use rather than open it again.
func detect(name string, in []byte) (string, *ooxml.Package, error) {
	if f, z := detectContent(in); f != "" {
		return f, z, nil
	}
	ext := strings.ToLower(path.Ext(strings.ReplaceAll(name, `\`, "/")))
	switch named := strings.TrimPrefix(ext, "."); {
	case len(in) > 0 && !isBinary(in) && textExtensions[ext] != "":
		return textExtensions[ext], nil, nil
	case len(in) > 0 && !isBinary(in) && bytes.HasPrefix(trimText(in), []byte("<")):
		return engine.FromHTML, nil, nil
	case slices.Contains(engine.Formats, named) && textExtensions[ext] == "":
		// A damaged or encrypted document of the format its name says:
		// sniff tells which.
		return named, nil, nil
	case isEncryptedOOXML(in):
		return "", nil, engine.ErrEncrypted
	}
	return "", nil, undetected(fmt.Sprintf("cannot tell the format of %s (it looks like %s); name the format with from (%s)",
		quoteName(name), describe(in), strings.Join(engine.Formats, ", ")))
}

// PageFormat returns the format that Detect would tell for in, named
// name, when it is a web page's (html or md), and "" for any other
// document: it tells the pages that Chromium may print without opening
// the office packages, which the conversion opens.
func PageFormat(name string, in []byte) string {
	if bytes.HasPrefix(in, []byte("PK\x03\x04")) || isCFB(in) {
		return ""
	}
	if from, _ := Detect(name, in); from == engine.FromHTML || from == engine.FromMarkdown {
		return from
	}
	return ""
}

// undetected is Detect's error: ErrInvalidFormat, in words of its own
// (there was no declared format).
type undetected string

func (e undetected) Error() string        { return string(e) }
func (e undetected) Is(target error) bool { return target == engine.ErrInvalidFormat }

func quoteName(name string) string {
	if name == "" {
		return "the file"
	}
	return fmt.Sprintf("%q", name)
}

// detectContent returns the format that in's content tells, or "", and
// the package it opened to tell it, if any.
func detectContent(in []byte) (string, *ooxml.Package) {
	switch {
	case bytes.HasPrefix(in, []byte("PK\x03\x04")):
		z, err := ooxml.Open(in, packageLimits)
		if err != nil {
			return "", nil
		}
		if f := cmp.Or(ooxmlFormat(z), odfFormat(z)); f != "" {
			return f, z
		}
	case isCFB(in):
		f, err := parseCFB(in)
		if err != nil {
			return "", nil
		}
		return cfbFormat(f), nil
	case bytes.HasPrefix(trimText(in), []byte(`{\rtf`)):
		return engine.FromRTF, nil
	}
	return "", nil
}

// ooxmlFormat returns the OOXML format of the package z: the one whose
// main content type [Content_Types].xml declares, or without one, the
// one whose main part z holds; "" if none.
func ooxmlFormat(z *ooxml.Package) string {
	types := z.Head("[Content_Types].xml", 1<<20)
	for _, t := range ooxmlContentTypes {
		if bytes.Contains(types, []byte(`"`+t.contentType+`"`)) {
			return t.format
		}
	}
	for _, f := range []string{engine.FromDOCX, engine.FromXLSX, engine.FromPPTX} {
		if z.Has(ooxmlMainParts[f]) {
			return f
		}
	}
	return ""
}

// odfFormat returns the OpenDocument format that the mimetype entry of z
// names, or "".
func odfFormat(z *ooxml.Package) string {
	m := strings.TrimSpace(string(z.Head("mimetype", 100)))
	for f, mime := range odfMimeTypes {
		if m == mime {
			return f
		}
	}
	return ""
}

// cfbFormat returns the legacy format whose main stream f holds, or "".
func cfbFormat(f *cfbFile) string {
	for _, format := range []string{engine.FromDOC, engine.FromXLS, engine.FromPPT} {
		for _, name := range cfbStreams[format] {
			if _, ok := f.stream(name); ok {
				return format
			}
		}
	}
	return ""
}

// isEncryptedOOXML reports whether in is a compound file holding an
// encrypted OOXML package.
func isEncryptedOOXML(in []byte) bool {
	if !isCFB(in) {
		return false
	}
	f, err := parseCFB(in)
	if err != nil {
		return false
	}
	_, ok := f.stream("EncryptionInfo")
	return ok
}
