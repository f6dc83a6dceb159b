package gotenberg

import (
	"cmp"
	"net/http"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/convert"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/pdfmerge"
)

// libreOfficeForm is what POST /forms/libreoffice/convert reads.
var libreOfficeForm = spec{
	served: []string{"landscape", "nativePageRanges", "exportFormFields", "password", "losslessImageCompression", "quality",
		"reduceImageResolution", "maxImageResolution", "merge", "pdfa", "pdfua", "nativePdfFormats"},
	unsupported: merged(postProcessing, map[string]string{
		"updateIndexes": "true", "allowDuplicateFieldNames": "false", "exportBookmarks": "true", "exportBookmarksToPdfDestination": "false",
		"exportPlaceholders": "false", "exportNotes": "false", "exportNotesPages": "false", "exportOnlyNotesPages": "false",
		"exportNotesInMargin": "false", "convertOooTargetToPdfTarget": "false", "exportLinksRelativeFsys": "false",
		"exportHiddenSlides": "false", "skipEmptyPages": "false", "addOriginalDocumentAsStream": "false", "singlePageSheets": "false",
	}),
	why: postProcessingWhy,
}

// postProcessing are the fields with which Gotenberg's conversion routes
// work on the PDFs they made, with their defaults: quire runs these
// operations on its own routes (/forms/pdfengines/*, /forms/pdf/*).
var postProcessing = map[string]string{
	"splitMode": "", "splitSpan": "", "splitUnify": "false", "metadata": "", "flatten": "false", "userPassword": "",
	"ownerPassword": "", "downloadFrom": "", "stages": "", "generateDocumentOutline": "false",
}

var postProcessingWhy = map[string]string{
	"splitMode": "split the PDF with /forms/pdfengines/split", "splitSpan": "split the PDF with /forms/pdfengines/split",
	"metadata": "write it with /forms/pdfengines/metadata/write", "flatten": "flatten the PDF with /forms/pdfengines/flatten",
	"userPassword": "encrypt the PDF with /forms/pdfengines/encrypt", "ownerPassword": "encrypt the PDF with /forms/pdfengines/encrypt",
	"downloadFrom": "upload the files", "stages": "run the operations on their own routes",
}

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
// merged from them in the files' order (merge=true).
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
		names[i], outs[i], engine = f.files[i].Name, res.PDF, engine+res.Engine
		pages += httpapi.PDFPages(res.PDF)
	}
	if req.Merge && len(outs) > 1 {
		pdf, err := pdfmerge.Merge(outs)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		names, outs = names[:1], [][]byte{pdf}
	}
	count(r.Context(), len(f.files), engine, pages)
	if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
		httpapi.Fail(w, r, err)
	}
}

func (a *API) maxFiles() int { return cmp.Or(a.o.ConvertMaxFiles, 10) }
