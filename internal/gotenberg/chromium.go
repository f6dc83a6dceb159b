package gotenberg

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/safeinput"
)

// The sources of POST /forms/chromium/convert/{source}.
const (
	sourceHTML     = "html"
	sourceMarkdown = "markdown"
	sourceURL      = "url"
)

var chromiumSources = []string{sourceHTML, sourceMarkdown, sourceURL}

// chromiumForm is what the Chromium routes read; the url route also
// reads "url" and the download's fields (sourceForm).
var chromiumForm = spec{
	served: append(append([]string{"paperWidth", "paperHeight", "marginTop", "marginBottom", "marginLeft", "marginRight", "preferCssPageSize",
		"printBackground", "omitBackground", "landscape", "scale", "nativePageRanges", "generateTaggedPdf", "generateDocumentOutline", "nativeBookmarks", "pdfa", "pdfua",
		"emulatedMediaType", "singlePage"},
		pageFields...), postProcessingFields...),
	unsupported: map[string]string{"cookies": "", "extraHttpHeaders": ""},
	why: map[string]string{
		"extraHttpHeaders": "they apply to the url route's download: an uploaded page loads nothing from the network",
		"cookies":          "they apply to the url route's download: an uploaded page loads nothing from the network",
	},
}

// chromium prints the page of source (html, markdown or url) to PDF.
func (a *API) chromium(source string) http.HandlerFunc {
	form := sourceForm(chromiumForm, source)
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := a.readForm(r, form, a.convertLimits())
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		opts, steps := pageOptions(&f.values, a.maxWait()), postSteps(f)
		opts.Page.SinglePage = f.bool("singlePage")
		opts.Page.HeaderHTML, opts.Page.FooterHTML = templates(f)
		opts.JavaScript = opts.Page.Waits()
		page, name, err := a.page(r.Context(), source, f)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		res, err := a.d.Conversion.Print(r.Context(), page, opts)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		names, outs, _, err := a.postProcess(r.Context(), steps, []string{name}, [][]byte{res.Output})
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		count(r.Context(), 1, res.Engine, res.Pages)
		if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
			httpapi.Fail(w, r, err)
		}
	}
}

// sourceForm is s for the pages of source: the url route also reads
// "url" and the download's fields.
func sourceForm(s spec, source string) spec {
	if source == sourceURL {
		s.served = append(append([]string{"url"}, downloadFields...), s.served...)
	}
	return s
}

// maxWait is the longest waitDelay.
func (a *API) maxWait() time.Duration { return cmp.Or(a.o.MaxWait, DefaultMaxWait) }

// page is the page to print, and the name its PDF is given, once every
// field of f is decoded (the form's errors come first); the url route
// downloads it with the header its fields ask for (fetchHeader).
func (a *API) page(ctx context.Context, source string, f *form) (conversion.Page, string, error) {
	header := fetchHeader(&f.values, f.str("url"))
	if err := f.err(); err != nil {
		return conversion.Page{}, "", err
	}
	switch source {
	case sourceURL:
		if !f.has("url") {
			return conversion.Page{}, "", missing("url", "is required")
		}
		if len(f.files) > 0 {
			return conversion.Page{}, "", missing("files", "is not taken by the url route: send the page's URL only")
		}
		if a.d.Fetch == nil {
			return conversion.Page{}, "", quire.Errorf(quire.CodeEngineBusy, "Fetching pages is disabled on this server.")
		}
		got, err := a.d.Fetch.Download(ctx, f.str("url"), header)
		if err != nil {
			return conversion.Page{}, "", fetch.ToAPIError(err, "url")
		}
		return conversion.Page{Doc: got.Data, From: engine.FromHTML}, "page", nil
	}
	var index []byte
	var assets []conversion.File
	for _, file := range f.files {
		switch name := file.Name; name {
		case "index.html":
			index = file.Data
		case "header.html", "footer.html": // the convert routes took theirs
			return conversion.Page{}, "", missing("files", fmt.Sprintf("holds '%s': a header or a footer is a PDF's, not an image's", name))
		default:
			assets = append(assets, conversion.File{Name: name, Data: file.Data})
		}
	}
	if index == nil {
		return conversion.Page{}, "", missing("files", "must hold 'index.html'")
	}
	if source == sourceMarkdown {
		doc, err := markdownPage(index, assets)
		if err != nil {
			return conversion.Page{}, "", err
		}
		index = doc
	}
	return conversion.Page{Doc: index, From: engine.FromHTML, Assets: assets}, "index", nil
}

func missing(field, issue string) error {
	return quire.Invalid("The form is not valid.", quire.Detail{Field: field, Issue: issue})
}

// markdownPage executes Gotenberg's Markdown template: index.html, in
// which {{ toHTML "file.md" }} is the HTML of that uploaded file.
func markdownPage(index []byte, assets []conversion.File) ([]byte, error) {
	files := map[string][]byte{}
	for _, a := range assets {
		files[a.Name] = a.Data
	}
	toHTML := func(name string) (template.HTML, error) {
		md, ok := files[name]
		if !ok {
			return "", fmt.Errorf("file '%s' is not among the uploaded files", name)
		}
		html, err := safeinput.MarkdownPage(md)
		return template.HTML(html), err
	}
	t, err := template.New("index.html").Funcs(template.FuncMap{"toHTML": toHTML}).Parse(string(index))
	if err != nil {
		return nil, missing("files", "holds an 'index.html' that is not a valid template: "+err.Error())
	}
	var b bytes.Buffer
	if err := t.Execute(&b, nil); err != nil {
		return nil, missing("files", "holds an 'index.html' whose template fails: "+err.Error())
	}
	return b.Bytes(), nil
}

// pageOptions are Chromium's options from Gotenberg's fields. Gotenberg
// prints on Letter paper with 0.39in margins unless told otherwise;
// preferCssPageSize lets the page's own @page size win (quire's default,
// on A4 when the page has none).
func pageOptions(v *values, maxWait time.Duration) engine.JobOptions {
	o := engine.JobOptions{Engine: engine.EngineChromium, PrintBackground: v.bool("printBackground"), Landscape: v.bool("landscape"),
		Scale: v.float("scale"), PageRanges: v.str("nativePageRanges"), PDFA: v.str("pdfa"), PDFUA: v.bool("pdfua"), Media: v.str("emulatedMediaType")}
	// Chromium's PDFs are tagged and have the outline of their headings
	// unless these fields are false (their default on Gotenberg; 9.x
	// names the outline's nativeBookmarks).
	noTags, noOutline := !v.boolOr("generateTaggedPdf", true), !v.boolOr("generateDocumentOutline", true)
	if v.has("nativeBookmarks") {
		if v.has("generateDocumentOutline") {
			v.bad = append(v.bad, quire.Detail{Field: "nativeBookmarks", Issue: "is generateDocumentOutline's name in Gotenberg 9: send one of them"})
		}
		noOutline = !v.bool("nativeBookmarks")
	}
	// Chromium makes the outline from the tags.
	if noTags && !noOutline && (v.has("generateDocumentOutline") || v.has("nativeBookmarks")) {
		v.bad = append(v.bad, quire.Detail{Field: "generateTaggedPdf", Issue: "must be true for an outline: Chromium makes it from the tags"})
	}
	noOutline = noOutline || noTags
	// Chromium paints no default background in a PDF: without a
	// background of its own, the page is transparent already.
	if v.bool("omitBackground") && !o.PrintBackground {
		v.bad = append(v.bad, quire.Detail{Field: "omitBackground", Issue: "requires printBackground set to true"})
	}
	if o.PDFA == engine.PDFAVersions[0] {
		v.bad = append(v.bad, quire.Detail{Field: "pdfa",
			Issue: "is not supported by quire with 'PDF/A-1b' on Chromium's routes: use PDF/A-2b or PDF/A-3b, or convert the HTML with /forms/libreoffice/convert"})
	}
	paper := v.has("paperWidth") || v.has("paperHeight")
	switch {
	case v.bool("preferCssPageSize") && paper:
		v.bad = append(v.bad, quire.Detail{Field: "preferCssPageSize",
			Issue: "is not supported by quire with paperWidth or paperHeight: the page's CSS size applies on A4 otherwise"})
	case !v.bool("preferCssPageSize"):
		o.Paper = fmt.Sprintf("%sx%sin", inches(v, "paperWidth", 8.5), inches(v, "paperHeight", 11))
	}
	if v.has("marginTop") || v.has("marginRight") || v.has("marginBottom") || v.has("marginLeft") {
		o.Margin = strings.Join([]string{inches(v, "marginTop", 0.39) + "in", inches(v, "marginRight", 0.39) + "in",
			inches(v, "marginBottom", 0.39) + "in", inches(v, "marginLeft", 0.39) + "in"}, ",")
	}
	o.Page = pageExtras(v, maxWait)
	o.Page.NoTags, o.Page.NoOutline = noTags, noOutline
	return o
}

// lengthUnits are Gotenberg's units of length, in inches; a bare number
// is in inches.
var lengthUnits = map[string]float64{"in": 1, "pt": 1.0 / 72, "px": 1.0 / 96, "pc": 1.0 / 6, "mm": 1 / 25.4, "cm": 1 / 2.54}

// inches is the length field name in inches, def when absent.
func inches(v *values, name string, def float64) string {
	if !v.has(name) {
		return strconv.FormatFloat(def, 'f', -1, 64)
	}
	s, factor := strings.ToLower(v.str(name)), 1.0
	for unit, f := range lengthUnits {
		if strings.HasSuffix(s, unit) {
			s, factor = strings.TrimSuffix(s, unit), f
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || n < 0 {
		v.invalid(name, "a length such as 8.5, 8.5in, 210mm, 21cm, 612pt or 816px")
		return "0"
	}
	return strconv.FormatFloat(n*factor, 'f', 4, 64)
}
