package main

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
)

// A DOCX that Word saved records its page count, as Word laid it out, in
// docProps/app.xml. The fidelity check converts those documents of the
// corpus and compares the page count of each PDF with Word's: a measure of
// layout fidelity that needs no reference renderer, per engine version.

// wordPages returns the page count that Word recorded in the DOCX data,
// and false when Word did not save it (another application, or no count).
func wordPages(data []byte) (int, bool) {
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return 0, false
	}
	for _, f := range z.File {
		if f.Name != "docProps/app.xml" {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return 0, false
		}
		defer r.Close()
		var app struct {
			Application string
			Pages       *int
		}
		if xml.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&app) != nil || app.Pages == nil ||
			!strings.Contains(app.Application, "Microsoft") || !strings.Contains(app.Application, "Word") {
			return 0, false
		}
		return *app.Pages, true
	}
	return 0, false
}

// agreement is the page-count comparison over the Word-saved documents.
type agreement struct {
	documents, converted, equal, withinOne int
	differ                                 []string // "name (Word n, PDF m)"
}

// pageAgreement compares the PDFs (by document name; a missing one did
// not convert) of the Word-saved documents of docs with Word's counts.
func pageAgreement(docs []docxFile, pdfs map[string][]byte) agreement {
	var a agreement
	for _, d := range docs {
		want, ok := wordPages(d.data)
		if !ok {
			continue
		}
		a.documents++
		pdf, ok := pdfs[d.name]
		if !ok {
			continue
		}
		got, err := api.PageCount(bytes.NewReader(pdf), nil)
		if err != nil {
			a.differ = append(a.differ, fmt.Sprintf("`%s` (PDF unreadable: %v)", d.name, err))
			continue
		}
		a.converted++
		switch {
		case got == want:
			a.equal++
			a.withinOne++
		case got == want-1 || got == want+1:
			a.withinOne++
			fallthrough
		default:
			a.differ = append(a.differ, fmt.Sprintf("`%s` (Word %d, PDF %d)", d.name, want, got))
		}
	}
	return a
}

// agreementHead heads a table of agreements, one row (agreement.row) per
// LibreOffice version.
const agreementHead = "| engine | Word-saved documents | converted | same page count | within one page |\n|---|---|---|---|---|\n"

func (a agreement) row(version string) string {
	return fmt.Sprintf("| LibreOffice %s | %d | %d | %d | %d |\n", version, a.documents, a.converted, a.equal, a.withinOne)
}

// fidelityBenchmark converts the Word-saved documents of the DOCX corpus
// once and reports the page-count agreement with Word for the LibreOffice
// installed.
func fidelityBenchmark() result {
	const title = "Fidelity: PDF page count against Word's"
	docs, err := readCorpus(convertCorpus)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	docs = slices.DeleteFunc(docs, func(d docxFile) bool { _, ok := wordPages(d.data); return !ok })
	q := startQuire("QUIRE_CONVERT_WORKERS=1")
	defer q.stop()
	engines, err := waitWorkers(q.url, 1, workersTimeout)
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Skipped: %v.\n", err)}
	}
	key := createKey(q.data)
	client := &http.Client{Timeout: 5 * time.Minute}
	pdfs := map[string][]byte{}
	var failed []string
	for _, d := range docs {
		_, pdf, err := convertOnce(client, q.url+"/v1/convert?from=docx", key, d)
		if err != nil {
			failed = append(failed, fmt.Sprintf("`%s` (%v)", d.name, err))
			continue
		}
		pdfs[d.name] = pdf
	}
	a := pageAgreement(docs, pdfs)
	table := agreementHead + a.row(engines["libreoffice"])
	notes := fmt.Sprintf("The documents of `%s` whose `docProps/app.xml` names Microsoft Word as `<Application>` and holds `<Pages>`, "+
		"the page count Word laid out; each is converted once (POST /v1/convert?from=docx) and the PDF's pages counted (pdfcpu). "+
		"Page counts that differ: %s.", convertCorpus, orNone(a.differ))
	if len(failed) > 0 {
		notes += " Not converted: " + strings.Join(failed, ", ") + "."
	}
	figs := []figure{infoFigure("LibreOffice "+engines["libreoffice"]+": PDF page count equal to Word's (within one page)",
		fmt.Sprintf("%d of %d (%d)", a.equal, a.documents, a.withinOne))}
	return result{title: title, table: table, notes: notes + "\n", figures: figs}
}

func orNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
