package gotenberg

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/pdftools"
)

// readRoute is a route that reads the PDFs: each file's answer to op,
// as answer words it (with the pages the file has), in JSON keyed by
// file name.
type readRoute struct {
	op     string
	answer func(pdftools.Result) (any, int, error)
}

// readRoutes are the routes that read the PDFs: their metadata, each
// with the names of its version (9.x's are those metadata/write takes,
// 8.x's are ExifTool's tags), 9.x's info on the document's traits, and
// the bookmarks (bookmarks.go).
var readRoutes = map[string]readRoute{
	"/forms/pdf/metadata":              {pdftools.OpMetadata, metadataAs(metadataOf9)},
	"/forms/pdfengines/metadata/read":  {pdftools.OpMetadata, metadataAs(metadataOf8)},
	"/forms/pdf/info":                  {pdftools.OpMetadata, metadataAs(infoOf)},
	"/forms/pdf/attachments":           {pdftools.OpAttachments, asListed},
	"/forms/pdf/form":                  {pdftools.OpForm, asListed},
	"/forms/pdf/bookmarks":             {pdftools.OpBookmarks, bookmarksAs(bookmarkOf9)},
	"/forms/pdfengines/bookmarks/read": {pdftools.OpBookmarks, bookmarksAs(bookmarkOf8)},
}

// asListed is an answer as pdftools lists it (the attachments, the form's
// fields: each key when the PDF says it), with no page.
func asListed(res pdftools.Result) (any, int, error) {
	return json.RawMessage(res.Data), 0, nil
}

// metadataAs reads a metadata operation's answer, named by tags.
func metadataAs(tags func(pdftools.Metadata) map[string]any) func(pdftools.Result) (any, int, error) {
	return func(res pdftools.Result) (any, int, error) {
		var m pdftools.Metadata
		err := json.Unmarshal(res.Data, &m)
		return tags(m), m.Pages, err
	}
}

// infoOf is 9.x's info on m. encrypted is always false: quire refuses an
// encrypted PDF (422) rather than reading it.
func infoOf(m pdftools.Metadata) map[string]any {
	return map[string]any{"pages": m.Pages, "version": m.Version, "encrypted": false, "tagged": m.Tagged,
		"linearized": m.Linearized, "formFields": m.FormFields}
}

// readSpec is what the read routes take: the PDFs, not encrypted.
var readSpec = spec{unsupported: map[string]string{"password": ""},
	why: map[string]string{"password": "quire reads PDFs that are not encrypted, and refuses an encrypted one (422)"}}

// read answers, as JSON keyed by file name, what rt reads of each file.
func (a *API) read(rt readRoute) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := a.readForm(r, readSpec, a.pdfLimits())
		switch {
		case asksWebhook(r):
			err = quire.Errorf(quire.CodeValidation, "Invalid request header: the webhook headers are not supported by this route, which answers at once")
		case err == nil && len(f.files) == 0:
			err = missing("files", "is required: the PDFs")
		}
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		answer, pages := map[string]any{}, 0
		for _, file := range f.files {
			res, err := a.d.PDFTools.Do(r.Context(), pdftools.Request{Op: rt.op, Files: []pdftools.File{{Name: file.Name, Data: file.Data}}})
			n := 0
			if err == nil {
				answer[file.Name], n, err = rt.answer(res)
			}
			if err != nil {
				httpapi.Fail(w, r, err)
				return
			}
			pages += n
		}
		count(r.Context(), len(f.files), 0, int64(pages))
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		json.NewEncoder(w).Encode(answer)
	}
}

// metadataOf9 is m in Gotenberg 9's names, each when set.
func metadataOf9(m pdftools.Metadata) map[string]any {
	out := map[string]any{}
	for k, v := range m.Properties {
		out[k] = v
	}
	for k, v := range map[string]string{"creationDate": m.CreationDate, "modDate": m.ModDate} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// metadataOf8 is m in ExifTool's tags, as Gotenberg 8 answers them.
func metadataOf8(m pdftools.Metadata) map[string]any {
	out := map[string]any{"MIMEType": "application/pdf", "PageCount": m.Pages}
	for k, v := range m.Properties {
		out[strings.ToUpper(k[:1])+k[1:]] = v
	}
	for tag, v := range map[string]string{"CreateDate": m.CreationDate, "ModifyDate": m.ModDate} {
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			out[tag] = t.Format("2006:01:02 15:04:05Z07:00")
		}
	}
	return out
}
