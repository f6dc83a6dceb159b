package engine

import "slices"

// Source formats the engines convert, as the `from` parameter spells them.
const (
	FromDOCX     = "docx"
	FromDOC      = "doc"
	FromODT      = "odt"
	FromRTF      = "rtf"
	FromHTML     = "html"
	FromMarkdown = "md"
	FromXLSX     = "xlsx" // spreadsheets, which open in Calc
	FromXLS      = "xls"
	FromODS      = "ods"
	FromCSV      = "csv"
	FromPPTX     = "pptx" // presentations, which open in Impress
	FromPPT      = "ppt"
	FromODP      = "odp"
)

// Formats lists the accepted source formats.
var Formats = []string{FromDOCX, FromDOC, FromODT, FromRTF, FromHTML, FromMarkdown,
	FromXLSX, FromXLS, FromODS, FromCSV, FromPPTX, FromPPT, FromODP}

// Output formats, as the `to` parameter spells them.
const (
	ToPDF  = "pdf"
	ToDOCX = "docx" // Writer's "MS Word 2007 XML" export
)

// DOCXSources are the formats that convert to DOCX: those the hosted API
// converts (a DOCX to DOCX would be a copy; the rest are not asked for).
var DOCXSources = []string{FromHTML, FromMarkdown}

// CanConvert reports whether documents of format from convert to format to.
func CanConvert(from, to string) bool {
	switch to {
	case ToPDF:
		return slices.Contains(Formats, from)
	case ToDOCX:
		return slices.Contains(DOCXSources, from)
	}
	return false
}
