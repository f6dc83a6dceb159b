package gotenberg

import (
	"cmp"
	"maps"
	"net/http"
	"slices"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
)

// libreOfficeForm is what POST /forms/libreoffice/convert reads.
var libreOfficeForm = spec{
	served: append(append([]string{"landscape", "nativePageRanges", "exportFormFields", "password", "losslessImageCompression", "quality",
		"reduceImageResolution", "maxImageResolution", "merge", "pdfa", "pdfua", "nativePdfFormats", "exportLinksRelativeFsys"},
		slices.Sorted(maps.Keys(exportFields))...), postProcessingFields...),
	unsupported: merged(conversionDefaults, map[string]string{"updateIndexes": "true"}),
}

// exportFields are the route's fields that set a property of LibreOffice's
// PDF export (engine.ExportProperties), each named after its property.
var exportFields = map[string]string{
	"exportBookmarks": "ExportBookmarks", "exportBookmarksToPdfDestination": "ExportBookmarksToPDFDestination",
	"exportPlaceholders": "ExportPlaceholders", "exportNotes": "ExportNotes", "exportNotesPages": "ExportNotesPages",
	"exportOnlyNotesPages": "ExportOnlyNotesPages", "exportNotesInMargin": "ExportNotesInMargin",
	"convertOooTargetToPdfTarget": "ConvertOOoTargetToPDFTarget", "exportHiddenSlides": "ExportHiddenSlides",
	"skipEmptyPages": "IsSkipEmptyPages", "addOriginalDocumentAsStream": "IsAddStream", "singlePageSheets": "SinglePageSheets",
	"allowDuplicateFieldNames": "AllowDuplicateFieldNames",
}

// conversionDefaults are the fields of Gotenberg's conversion routes that
// quire honours at their defaults only.
var conversionDefaults = map[string]string{"generateDocumentOutline": "false"}

// merged is the union of maps, the later winning.
func merged(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// libreOffice converts office documents to PDF: each file, or one PDF
// merged from them in the files' order (merge=true), then runs the
// post-processing the form asks for (split, metadata, flatten, encrypt).
func (a *API) libreOffice(w http.ResponseWriter, r *http.Request) {
	f, err := a.readForm(r, libreOfficeForm, a.convertLimits())
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	steps := postSteps(f) // before the files are read: the stages take theirs out
	// Every file goes to LibreOffice, web pages too: Gotenberg's LibreOffice
	// route does not print them (its Chromium routes do).
	req := conversion.Request{Request: engine.Request{To: engine.ToPDF, Merge: f.bool("merge"), Options: engine.JobOptions{
		Engine: engine.EngineLibreOffice, Landscape: f.bool("landscape"), PageRanges: f.str("nativePageRanges"), Password: f.str("password"),
		PDFA: f.str("pdfa"), PDFUA: f.bool("pdfua"), LosslessImageCompression: f.bool("losslessImageCompression"),
		Quality: f.int("quality"), ReduceImageResolution: f.bool("reduceImageResolution"), MaxImageResolution: f.int("maxImageResolution"),
	}}}
	for _, file := range f.files {
		req.Files = append(req.Files, conversion.File{Name: file.Name, Data: file.Data})
	}
	if f.has("exportFormFields") {
		export := f.bool("exportFormFields")
		req.Options.ExportFormFields = &export
	}
	for field, property := range exportFields {
		if f.has(field) {
			if req.Options.Export == nil {
				req.Options.Export = map[string]bool{}
			}
			req.Options.Export[property] = f.bool(field)
		}
	}
	f.boolOr("nativePdfFormats", true) // either way, LibreOffice makes PDF/A and PDF/UA itself
	f.bool("exportLinksRelativeFsys")  // either way, links to files are relative (filter.go): no PDF names a path of the server
	if len(req.Files) == 0 {
		f.bad = append(f.bad, quire.Detail{Field: "files", Issue: "is required: the documents to convert"})
	}
	if err := f.err(); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	res, err := a.d.Conversion.ConvertEach(r.Context(), req)
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	names, outs := make([]string, len(res.Parts)), make([][]byte, len(res.Parts))
	for i, p := range res.Parts {
		names[i], outs[i] = p.Name, p.Data
	}
	if names, outs, _, err = a.postProcess(r.Context(), steps, names, outs); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	count(r.Context(), len(f.files), res.Engine, res.Pages)
	if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
		httpapi.Fail(w, r, err)
	}
}

// convertLimits bound the forms of the conversion routes.
func (a *API) convertLimits() limits {
	return limits{files: cmp.Or(a.o.ConvertMaxFiles, 10), bytes: a.o.ConvertMaxBytes}
}

// pdfLimits bound the forms of the PDF routes.
func (a *API) pdfLimits() limits {
	return limits{files: a.d.PDFTools.MaxFiles(), bytes: a.d.PDFTools.MaxBytes()}
}
