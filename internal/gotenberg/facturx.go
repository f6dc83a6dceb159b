package gotenberg

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/pdftools"
)

// facturXForm is the form of 8.x's /forms/pdfengines/factur-x: the PDFs
// under files, the CII invoice under facturxXml. quire embeds the invoice
// as pdftools' attach with facturx does (POST /v1/pdf/attach?facturx=true):
// in a PDF that is PDF/A already, as an incremental update that makes it
// PDF/A-3b, with the Factur-X XMP metadata.
var facturXForm = spec{
	served:  []string{"facturxConformanceLevel"},
	invoice: true,
	unsupported: map[string]string{"facturxDocumentType": "INVOICE", "facturxVersion": "1.0", "pdfa": "PDF/A-3b",
		"pdfua": "false"},
	why: map[string]string{
		"facturxDocumentType": "quire writes invoices (INVOICE)",
		"facturxVersion":      "quire writes the Factur-X metadata of version 1.0",
		"pdfa":                "quire makes PDF/A-3b",
		"pdfua":               "make the PDF/UA document with pdfua on the conversion routes, then this route",
	},
}

// facturXLevels are the values of facturxConformanceLevel quire takes:
// those it reads from an invoice's guideline (pdftools.FacturXLevel).
var facturXLevels = []string{"MINIMUM", "BASIC WL", "BASIC", "EN 16931", "EXTENDED"}

// facturX is 8.x's /forms/pdfengines/factur-x: the invoice embedded in
// each PDF, as factur-x.xml whatever its uploaded name.
func (a *API) facturX(w http.ResponseWriter, r *http.Request) {
	f, err := a.readForm(r, facturXForm, a.pdfLimits())
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	invoice := checkInvoice(f)
	if len(f.files) == 0 {
		f.bad = append(f.bad, quire.Detail{Field: "files", Issue: "is required: the PDFs"})
	}
	if err := f.err(); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	names, outs, documents, pages, err := a.apply(r.Context(), pdftools.Request{Op: pdftools.OpAttach, FacturX: true}, f.files, invoice)
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	count(r.Context(), documents, 0, int64(pages))
	if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
		httpapi.Fail(w, r, err)
	}
}

// checkInvoice checks the invoice of f and the level the form states for
// it, which must be the one of its guideline; it returns the invoice
// named as it is embedded. What is wrong is added to f's errors.
func checkInvoice(f *form) []httpapi.Upload {
	level := f.str("facturxConformanceLevel")
	switch {
	case level == "":
		f.bad = append(f.bad, quire.Detail{Field: "facturxConformanceLevel", Issue: "is required: MINIMUM, BASIC WL, BASIC, EN 16931 or EXTENDED"})
	case !slices.Contains(facturXLevels, level):
		f.bad = append(f.bad, quire.Detail{Field: "facturxConformanceLevel",
			Issue: fmt.Sprintf("is not supported by quire (got '%s'): quire writes MINIMUM, BASIC WL, BASIC, EN 16931 and EXTENDED invoices as factur-x.xml (not XRECHNUNG's xrechnung.xml)", level)})
	}
	if len(f.invoice) != 1 {
		f.bad = append(f.bad, quire.Detail{Field: "facturxXml", Issue: "is required, once: the Factur-X (CII) invoice XML"})
		return nil
	}
	got, err := pdftools.FacturXLevel(f.invoice[0].Data)
	switch {
	case err != nil:
		f.bad = append(f.bad, quire.Detail{Field: "facturxXml", Issue: "is invalid: " + err.Error()})
	case slices.Contains(facturXLevels, level) && got != level:
		f.bad = append(f.bad, quire.Detail{Field: "facturxConformanceLevel",
			Issue: fmt.Sprintf("is invalid (got '%s'): the invoice's guideline is of the level %s", level, got)})
	}
	return []httpapi.Upload{{Name: pdftools.FacturXName, Data: f.invoice[0].Data}}
}
