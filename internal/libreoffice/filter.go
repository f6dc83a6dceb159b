package libreoffice

import (
	"cmp"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/quire-dev/quire/internal/engine"
)

// filterOption is one property of LibreOffice's PDF export filter, in the
// JSON form LibreOffice reads from LibreOfficeKit and the command line.
type filterOption struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// filterOptions returns the options of LibreOffice's export filter to
// format to for o. PDF: those of every conversion (pdfExportOptions) and those o
// asks for; without PDF options it is pdfExportOptions itself, so that a
// plain conversion costs nothing more than before. Other formats: none.
func filterOptions(o engine.JobOptions, to string) string {
	switch {
	case to != engine.ToPDF:
		return ""
	case !o.PDFOnly():
		return pdfExportOptions
	}
	opts := map[string]filterOption{"ExportLinksRelativeFsys": {"boolean", "true"}}
	boolean := func(name string, v bool) { opts[name] = filterOption{"boolean", strconv.FormatBool(v)} }
	long := func(name string, v int) { opts[name] = filterOption{"long", strconv.Itoa(v)} }
	if i := slices.Index(engine.PDFAVersions, o.PDFA); i >= 0 {
		long("SelectPdfVersion", i+1) // 1: PDF/A-1b, 2: PDF/A-2b, 3: PDF/A-3b
	}
	if o.PDFUA {
		boolean("PDFUACompliance", true)
		boolean("UseTaggedPDF", true)
	}
	if o.PageRanges != "" {
		opts["PageRange"] = filterOption{"string", o.PageRanges}
	}
	if o.ExportFormFields != nil {
		boolean("ExportFormFields", *o.ExportFormFields)
	}
	if o.LosslessImageCompression {
		boolean("UseLosslessCompression", true)
	}
	if o.Quality != 0 {
		long("Quality", o.Quality)
	}
	if o.ReduceImageResolution {
		boolean("ReduceImageResolution", true)
		long("MaxImageResolution", cmp.Or(o.MaxImageResolution, 300))
	}
	for name, v := range o.Export { // names Validate checked against engine.ExportProperties
		boolean(name, v)
	}
	b, _ := json.Marshal(opts) // strings and a map of them: cannot fail
	return string(b)
}

// exportHint words what in o may have made LibreOffice's export fail: a
// page range that selects no page of the document makes it write nothing.
func exportHint(o engine.JobOptions) string {
	if o.PageRanges == "" {
		return ""
	}
	return " (pageRanges " + o.PageRanges + " may select no page of the document)"
}
