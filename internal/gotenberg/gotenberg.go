// Package gotenberg serves Gotenberg's HTTP API (its 8.x and 9.x routes,
// form fields, headers, status codes and plain-text errors) on quire's
// engines, so that Gotenberg's clients switch to quire by changing one
// URL. It only translates: the conversions, the PDF operations, the
// keys' limits, fair engines and metering are quire's own services and
// middleware (internal/httpapi), as on /v1.
package gotenberg

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/metering"
)

// Deps are the services the routes use, as internal/httpapi names them.
type Deps struct {
	// Conversion converts (internal/conversion): without an engine, its
	// routes answer 503.
	Conversion Conversion
	Convert    httpapi.Engine   // the LibreOffice pool, for /health; nil: off
	Chromium   httpapi.Engine   // the Chromium pool, for /health; nil: off
	PDFTools   httpapi.PDFTools // nil: PDF routes not served
	Fetch      Fetcher          // downloads the url route's pages and downloadFrom's files; nil: those answer 503
	Version    string
}

// Conversion converts documents as the routes ask (*conversion.Service).
type Conversion interface {
	ConvertEach(ctx context.Context, req conversion.Request) (conversion.Result, error)
	Print(ctx context.Context, page conversion.Page, opts engine.JobOptions) (conversion.Result, error)
	Screenshot(ctx context.Context, page conversion.Page, opts engine.JobOptions) (conversion.Result, error)
}

// Fetcher downloads a page or a file by URL, never from a private
// network (*fetch.Fetcher).
type Fetcher interface {
	Download(ctx context.Context, rawURL string, header http.Header) (fetch.Download, error)
}

// Options are the settings of the routes.
type Options struct {
	// Anonymous is QUIRE_GOTENBERG_ANONYMOUS: "loopback" serves callers
	// without a key from loopback addresses; anything else requires one.
	Anonymous       string
	ConvertMaxBytes int64 // largest document to convert
	ConvertMaxFiles int   // most files in one conversion request
	// MaxWait bounds waitDelay: the time limit of a page's scripts
	// (QUIRE_CHROMIUM_SCRIPT_TIMEOUT), which its load and its waits
	// share, within the job's (default DefaultMaxWait).
	MaxWait time.Duration
}

// API is Gotenberg's API.
type API struct {
	d Deps
	o Options
}

// New returns Gotenberg's API over d.
func New(d Deps, o Options) *API {
	return &API{d: d, o: o}
}

// multipartOverhead is the room a form needs beyond its files.
const multipartOverhead = 1 << 20

// Routes are the routes of the API, for httpapi.Deps.Foreign.
func (a *API) Routes() []httpapi.Route {
	convertLimit := a.o.ConvertMaxBytes + multipartOverhead
	rs := []httpapi.Route{
		{Method: "GET", Path: "/health", Handler: a.health, Probe: true},
		{Method: "HEAD", Path: "/health", Handler: a.health, Probe: true},
		{Method: "GET", Path: "/version", Handler: a.version},
		a.route("/forms/libreoffice/convert", a.libreOffice, convertLimit, quire.OpConvert),
	}
	for _, from := range chromiumSources {
		rs = append(rs, a.route("/forms/chromium/convert/"+from, a.chromium(from), convertLimit, quire.OpConvert),
			a.route("/forms/chromium/screenshot/"+from, a.screenshot(from), convertLimit, quire.OpConvert))
	}
	if a.d.PDFTools != nil {
		for _, p := range pdfRoutes {
			rs = append(rs, a.route(p.path, a.pdf(p), a.d.PDFTools.MaxBytes()+multipartOverhead, quire.OpPDF))
		}
		rs = append(rs, a.route("/forms/pdf/pipe", a.pipe, a.d.PDFTools.MaxBytes()+multipartOverhead, quire.OpPDF),
			a.route("/forms/pdfengines/bookmarks/write", a.writeBookmarks8, a.d.PDFTools.MaxBytes()+multipartOverhead, quire.OpPDF),
			a.route("/forms/pdfengines/factur-x", a.facturX, a.d.PDFTools.MaxBytes()+multipartOverhead, quire.OpPDF))
		for path, rt := range readRoutes {
			read := a.route(path, a.read(rt), a.d.PDFTools.MaxBytes()+multipartOverhead, quire.OpPDF)
			read.Async = false // answers JSON at once, as Gotenberg's read routes do
			rs = append(rs, read)
		}
	}
	lacked := unsupportedRoutes()
	for _, path := range slices.Sorted(maps.Keys(lacked)) {
		rs = append(rs, httpapi.Route{Method: "POST", Path: path, Handler: unsupported(path, lacked[path]), MaxBody: convertLimit})
	}
	keyed, public := &httpapi.Dialect{Key: a.key, Fail: answerError, Async: async, Accepted: accepted}, &httpapi.Dialect{Fail: answerError}
	for i := range rs {
		rs[i].Dialect = keyed
		if rs[i].Method != "POST" {
			rs[i].Dialect = public
		}
		rs[i].Handler = traced(rs[i].Handler)
	}
	return rs
}

// unsupportedRoutes are the routes of Gotenberg's reference that quire
// does not serve, and what to do instead: they answer 400 naming the
// route, as a field quire cannot honour does, rather than 404, which
// would read as a wrong URL. Those of the stages quire lacks are among
// them.
func unsupportedRoutes() map[string]string {
	routes := map[string]string{
		"/forms/pdfengines/convert": "convert the source document with pdfa or pdfua on /forms/libreoffice/convert",
		"/forms/pdf/validate": "quire has no PDF/A or PDF/UA validator to run on a request; it makes PDF/A and PDF/UA " +
			"with pdfa and pdfua on the conversion routes, and Factur-X invoices with /forms/pdfengines/factur-x",
	}
	for op, why := range stagesQuireLacks {
		routes["/forms/pdf/"+op] = why
	}
	return routes
}

// unsupported answers a route quire does not serve, saying why.
func unsupported(path, why string) http.HandlerFunc {
	msg := fmt.Sprintf("Invalid request: route '%s' is not supported by quire: %s", path, why)
	return func(w http.ResponseWriter, r *http.Request) {
		httpapi.Fail(w, r, quire.Errorf(quire.CodeValidation, "%s", msg))
	}
}

// route is a metered form route of the API, run as a job when it sends
// the webhook headers.
func (a *API) route(path string, h http.HandlerFunc, maxBody int64, op string) httpapi.Route {
	return httpapi.Route{Method: "POST", Path: path, Handler: h, MaxBody: maxBody, Budgeted: true, Metered: op, Async: true}
}

// traced sets Gotenberg-Trace, quire's request id, on every answer.
func traced(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Gotenberg-Trace", httpapi.RequestID(r.Context()))
		h(w, r)
	}
}

// key finds the caller's API key as Gotenberg's clients send it: a
// bearer token, the password of basic authentication (any user name), or
// X-Api-Key. Without one, a caller is served only from loopback, and only
// when the operator allows it.
func (a *API) key(r *http.Request) (string, error) {
	if _, password, ok := r.BasicAuth(); ok {
		return password, nil
	}
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(token), nil
	}
	if key := r.Header.Get("X-Api-Key"); key != "" { // the hosted Gotenberg's header, which chromiumly sends
		return key, nil
	}
	if a.o.Anonymous == "loopback" && loopback(httpapi.ClientIP(r)) {
		return "", nil
	}
	return "", quire.Errorf(quire.CodeAuthentication,
		"An API key is required: send it as 'Authorization: Bearer <key>' or as the password of basic authentication.")
}

func loopback(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && a.Unmap().IsLoopback()
}

// answerError answers qe as Gotenberg does: a status and a plain-text
// message.
func answerError(w http.ResponseWriter, r *http.Request, status int, qe *quire.Error) {
	switch {
	case status == http.StatusUnprocessableEntity && failedCheck(qe):
		status = http.StatusConflict
	case status == http.StatusUnprocessableEntity: // a file quire cannot use: Gotenberg's 400
		status = http.StatusBadRequest
	}
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=UTF-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Gotenberg-Trace", httpapi.RequestID(r.Context()))
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Basic realm="quire", Bearer`)
	}
	w.WriteHeader(status)
	io.WriteString(w, message(qe, strings.HasPrefix(r.URL.Path, "/forms/pdf/")))
}

// pageChecks are the fields that fail a page, once loaded, with
// Gotenberg's 409 (engine.PageFailure).
var pageChecks = []string{"failOnConsoleExceptions", "failOnResourceHttpStatusCodes", "failOnResourceLoadingFailed"}

// failedCheck reports whether qe is a page's failure of one of the
// checks its form asked for: the detail names the check.
func failedCheck(qe *quire.Error) bool {
	return len(qe.Details) == 1 && slices.Contains(pageChecks, qe.Details[0].Field)
}

// message is the plain-text message of qe: its details as Gotenberg
// words them when they name form fields (on a 9.x PDF route, pdf9), else
// quire's message.
func message(qe *quire.Error, pdf9 bool) string {
	if qe.Code != quire.CodeValidation || len(qe.Details) == 0 {
		return qe.Message
	}
	parts := make([]string, len(qe.Details))
	for i, d := range qe.Details {
		parts[i] = fmt.Sprintf("form field '%s' %s", fieldName(d.Field, pdf9), d.Issue)
	}
	return "Invalid form data: " + strings.Join(parts, "; ")
}

// fieldName is the Gotenberg name of a field quire's services name; a
// 9.x PDF route (pdf9) names a split's fields as quire does.
func fieldName(quireName string, pdf9 bool) string {
	if n, ok := quireNames[quireName]; ok && !(pdf9 && n == "splitSpan") {
		return n
	}
	if strings.HasPrefix(quireName, "file[") || quireName == "file" {
		return "files"
	}
	return quireName
}

// quireNames are the options quire's services name otherwise than
// Gotenberg does.
var quireNames = map[string]string{
	"pageRanges": "nativePageRanges",
	"paper":      "paperWidth",
	"margin":     "marginTop",
	"ranges":     "splitSpan",
	"every":      "splitSpan",
}

// health answers as Gotenberg's /health: each engine's state.
func (a *API) health(w http.ResponseWriter, r *http.Request) {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	up, details := true, map[string]any{}
	for name, e := range map[string]httpapi.Engine{"libreoffice": a.d.Convert, "chromium": a.d.Chromium} {
		if e == nil {
			continue
		}
		st := e.Status()
		d := map[string]string{"status": "up", "timestamp": now}
		if st.Ready+st.Busy == 0 {
			up = false
			d["status"], d["error"] = "down", cmp.Or(st.LastError, "no process ready")
		}
		details[name] = d
	}
	status, code := "up", http.StatusOK
	if !up {
		status, code = "down", http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		json.NewEncoder(w).Encode(map[string]any{"status": status, "details": details})
	}
}

// version answers the version of quire, as plain text.
func (a *API) version(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	io.WriteString(w, "quire "+a.d.Version)
}

// count records what an answer did, for the metering of its key.
func count(ctx context.Context, documents int, engine time.Duration, pages int64) {
	if u := metering.TallyOf(ctx); u != nil {
		u.Documents, u.EngineSeconds, u.Pages = int64(documents), engine.Seconds(), pages
	}
}
