package httpapi

import (
	"cmp"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
)

// multipartOverhead is the room a multipart body needs beyond its file.
const multipartOverhead = 1 << 20

func (s *Server) convertRoutes() []Route {
	return []Route{{Method: "POST", Path: "/v1/convert", Handler: s.convertDocument, MaxBody: s.opt.ConvertMaxBytes + multipartOverhead, Async: true, Check: s.checkConvert, Metered: quire.OpConvert, Budgeted: true, Auth: KeyRequired}}
}

// convertDocument answers the PDF (or DOCX, to=docx) of the multipart field
// "file", converted with the options of the query (engine.JobOptions);
// with several files, one merged PDF (merge=true) or a ZIP of the
// converted files, as the conversion service makes them
// (internal/conversion). The Server-Timing header tells the engine's own
// time from the queue's. The answer carries its length, as every
// document answer does: the client then has it whole once its last byte
// arrives, not once the request's log line and metrics are done.
func (s *Server) convertDocument(w http.ResponseWriter, r *http.Request) {
	req, err := s.conversionRequestOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.deps.Conversion.Convert(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	u := meter(r.Context())
	u.Documents, u.EngineSeconds, u.Pages = int64(len(req.Files)), res.Engine.Seconds(), res.Pages
	w.Header().Set("Content-Type", res.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(res.Output)))
	w.Header().Set("Server-Timing", fmt.Sprintf("engine;dur=%.1f, queue;dur=%.1f, total;dur=%.1f",
		ms(res.Engine.Seconds()), ms(res.Queued.Seconds()), ms(res.Total.Seconds())))
	w.Write(res.Output)
}

// checkConvert is the convert route's Check: each file as its engine
// checks it before converting it (conversion.Service.Check).
func (s *Server) checkConvert(r *http.Request) error {
	req, err := s.conversionRequestOf(r)
	if err != nil {
		return err
	}
	return s.deps.Conversion.Check(req)
}

// defaultConvertMaxFiles is Options.ConvertMaxFiles's default.
const defaultConvertMaxFiles = 10

// conversionRequestOf decodes the query and the files of POST
// /v1/convert; what of the query does not decode is in its Malformed,
// for the service to report with the rest.
func (s *Server) conversionRequestOf(r *http.Request) (conversion.Request, error) {
	start := time.Now()
	q := newQueryDecoder(r.URL.Query(), convertParams)
	req := conversion.Request{Start: start, Request: engine.Request{From: strings.ToLower(q.string("from")),
		To: strings.ToLower(cmp.Or(q.string("to"), engine.ToPDF)), Merge: q.bool(conversion.ParamMerge), Options: q.convertOptions()}}
	req.Malformed = q.details
	files, err := FileParts(r, "file", cmp.Or(s.opt.ConvertMaxFiles, defaultConvertMaxFiles))
	for _, f := range files {
		req.Files = append(req.Files, conversion.File{Name: f.Name, Data: f.Data})
	}
	return req, err
}

func ms(seconds float64) float64 { return seconds * 1000 }

// convertStatus is the health check line of the conversion engine.
func convertStatus(pool Engine) string {
	if pool == nil {
		return "disabled"
	}
	return engineStatus(pool.Status(), "workers")
}

// engineStatus is the health check line of an engine whose processes
// (unit: "workers", "browsers") are in st.
func engineStatus(st engine.Status, unit string) string {
	line := fmt.Sprintf("%d/%d %s ready, %d busy, %d queued", st.Ready, st.Workers, unit, st.Busy, st.Queued)
	if st.Ready == 0 && st.LastError != "" {
		line += "; last error: " + st.LastError
	}
	return line
}

// convertReady reports whether the engine can take a job now: disabled
// (nil) counts as ready, since nothing waits for it.
func convertReady(pool Engine) bool {
	return pool == nil || engineReady(pool.Status())
}

// engineReady reports whether an engine in st can take a job now.
func engineReady(st engine.Status) bool { return st.Ready+st.Busy > 0 }
