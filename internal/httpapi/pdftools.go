package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/zipout"
)

// pdfRoutes are the PDF tools, one route per operation; without the
// service (Deps.PDFTools nil), none.
func (s *Server) pdfRoutes() []Route {
	if s.deps.PDFTools == nil {
		return nil
	}
	var rs []Route
	for _, op := range pdftools.Operations {
		rs = append(rs, Route{Method: "POST", Path: "/v1/pdf/" + op, Handler: s.pdfOperation(op), Check: s.checkPDF(op),
			MaxBody: s.deps.PDFTools.MaxBytes() + multipartOverhead, Metered: quire.OpPDF, Budgeted: true, Async: true, Auth: KeyRequired})
	}
	return rs
}

// pdfParams are the query parameters of POST /v1/pdf/{operation}, as
// DESIGN.md names them; set.KEY sets a document property (metadata).
var pdfParams = func() []string {
	p := []string{"force", "ranges", "every", "angle", "pages", "userPassword", "ownerPassword", "allow",
		"text", "opacity", "stamp", "facturx", "page", "dpi"}
	for _, k := range pdftools.MetadataKeys {
		p = append(p, "set."+k)
	}
	return p
}()

// pdfOperation answers one PDF operation on the multipart "file" parts,
// with the options of the query: a PDF, or a ZIP (split), a PNG (render),
// JSON (metadata without set.*).
func (s *Server) pdfOperation(op string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		req, files, err := s.pdfInput(op, r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		res, err := s.deps.PDFTools.Do(r.Context(), req)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		out := res.Data
		if res.Parts != nil {
			if out, err = splitZIP(files[0].Name, res.Parts); err != nil {
				s.fail(w, r, err)
				return
			}
		}
		u := meter(r.Context())
		u.Documents, u.Pages = int64(res.Documents), int64(res.Pages)
		w.Header().Set("Content-Type", res.ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
		w.Write(out)
	}
}

// pdfInput reads the request of PDF operation op: its query and files.
func (s *Server) pdfInput(op string, r *http.Request) (pdftools.Request, []Upload, error) {
	req, err := pdfRequestOf(op, r)
	if err != nil {
		return req, nil, err
	}
	files, err := FileParts(r, "file", s.deps.PDFTools.MaxFiles())
	if err != nil {
		return req, nil, err
	}
	for _, f := range files {
		req.Files = append(req.Files, pdftools.File{Name: f.Name, Data: f.Data})
	}
	return req, files, nil
}

// checkPDF is the Check of PDF operation op's route.
func (s *Server) checkPDF(op string) func(*http.Request) error {
	return func(r *http.Request) error {
		req, _, err := s.pdfInput(op, r)
		if err != nil {
			return err
		}
		return s.deps.PDFTools.Check(r.Context(), req)
	}
}

// pdfRequestOf reads the query of a PDF operation; the service validates
// the values (pdftools.Request.Validate).
func pdfRequestOf(op string, r *http.Request) (pdftools.Request, error) {
	q := newQueryDecoder(r.URL.Query(), pdfParams)
	req := pdftools.Request{Op: op, Force: q.bool("force"), Ranges: q.string("ranges"), Every: q.int("every"),
		Angle: q.int("angle"), Pages: q.string("pages"), UserPassword: q.string("userPassword"), OwnerPassword: q.string("ownerPassword"),
		Text: q.string("text"), Opacity: q.float("opacity"), Stamp: q.bool("stamp"), FacturX: q.bool("facturx"),
		Page: q.intOr("page", pdftools.DefaultPage), DPI: q.intOr("dpi", pdftools.DefaultDPI)}
	if a := q.string("allow"); a != "" {
		req.Allow = strings.Split(a, ",")
	}
	for _, k := range pdftools.MetadataKeys {
		if r.URL.Query().Has("set." + k) {
			if req.Set == nil {
				req.Set = map[string]string{}
			}
			req.Set[k] = q.string("set." + k)
		}
	}
	return req, q.err("The PDF " + op + " request is not valid.")
}

// splitZIP is the ZIP of a split's parts, named after the upload and the
// pages each holds: "report_1-3.pdf".
func splitZIP(upload string, parts []pdftools.Part) ([]byte, error) {
	names := make([]string, len(parts))
	data := make([][]byte, len(parts))
	base := zipout.Base(upload)
	for i, p := range parts {
		names[i], data[i] = base+"_"+p.Pages+".pdf", p.Data
	}
	return zipout.Archive(names, data)
}
