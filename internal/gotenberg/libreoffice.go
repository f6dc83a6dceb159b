package gotenberg

import (
	"cmp"
	"net/http"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/convert"
	"github.com/quire-dev/quire/internal/httpapi"
)

// libreOfficeForm is what POST /forms/libreoffice/convert reads.
var libreOfficeForm = spec{
	served: append([]string{"landscape", "nativePageRanges", "exportFormFields", "password", "losslessImageCompression", "quality",
		"reduceImageResolution", "maxImageResolution", "merge", "pdfa", "pdfua", "nativePdfFormats"}, postProcessingFields...),
	unsupported: merged(conversionDefaults, map[string]string{
		"updateIndexes": "true", "allowDuplicateFieldNames": "false", "exportBookmarks": "true", "exportBookmarksToPdfDestination": "false",
		"exportPlaceholders": "false", "exportNotes": "false", "exportNotesPages": "false", "exportOnlyNotesPages": "false",
		"exportNotesInMargin": "false", "convertOooTargetToPdfTarget": "false", "exportLinksRelativeFsys": "false",
		"exportHiddenSlides": "false", "skipEmptyPages": "false", "addOriginalDocumentAsStream": "false", "singlePageSheets": "false",
	}),
	why: conversionWhy,
}

// conversionDefaults are the fields of Gotenberg's conversion routes that
// quire honours at their defaults only.
var conversionDefaults = map[string]string{"downloadFrom": "", "stages": "", "generateDocumentOutline": "false"}

var conversionWhy = map[string]string{"downloadFrom": "upload the files", "stages": "run the operations on their own routes"}

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
	f, err := readForm(r, libreOfficeForm, a.maxFiles())
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	req := convert.Request{To: convert.ToPDF, Merge: f.bool("merge"), Options: convert.JobOptions{
		Landscape: f.bool("landscape"), PageRanges: f.str("nativePageRanges"), Password: f.str("password"),
		PDFA: f.str("pdfa"), PDFUA: f.bool("pdfua"), LosslessImageCompression: f.bool("losslessImageCompression"),
		Quality: f.int("quality"), ReduceImageResolution: f.bool("reduceImageResolution"), MaxImageResolution: f.int("maxImageResolution"),
	}}
	if f.has("exportFormFields") {
		export := f.bool("exportFormFields")
		req.Options.ExportFormFields = &export
	}
	f.boolOr("nativePdfFormats", true) // either way, LibreOffice makes PDF/A and PDF/UA itself
	steps := postSteps(&f.values)
	if len(f.files) == 0 {
		f.bad = append(f.bad, quire.Detail{Field: "files", Issue: "is required: the documents to convert"})
	}
	if err := f.err(); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	results, err := httpapi.ConvertAll(r.Context(), a.d.Convert, req, f.files)
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	names, outs := make([]string, len(f.files)), make([][]byte, len(results))
	var engine time.Duration
	var pages int64
	for i, res := range results {
		names[i], outs[i], engine = f.files[i].Name, res.Output, engine+res.Engine
		pages += httpapi.PDFPages(res.Output)
	}
	if req.Merge && len(outs) > 1 {
		pdf, err := httpapi.Merge(r.Context(), req, names[0], outs)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		names, outs = names[:1], [][]byte{pdf}
	}
	if names, outs, err = a.postProcess(r.Context(), steps, names, outs); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	count(r.Context(), len(f.files), engine, pages)
	if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
		httpapi.Fail(w, r, err)
	}
}

func (a *API) maxFiles() int { return cmp.Or(a.o.ConvertMaxFiles, 10) }
