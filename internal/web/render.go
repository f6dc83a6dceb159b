package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/keylimit"
)

// parseTemplates parses each page with the layout it fills in, or alone
// when it is a whole document.
func parseTemplates() map[string]*template.Template {
	funcs := template.FuncMap{
		"stamp": func(t time.Time) string {
			if t.IsZero() {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04 UTC")
		},
		"stampSeconds": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") },
		"brief":        brief,
		"add":          func(a, b int) int { return a + b },
		"join":         strings.Join,
		"mib":          func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) },
		"seconds":      func(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) },
		"quota":        func(n int64) string { return keylimit.Quota(n).String() },
		"words":        words,
	}
	layout := template.Must(template.New("layout").Funcs(funcs).ParseFS(files, "templates/layout.html"))
	pages, _ := fs.Glob(files, "templates/*.html")
	out := map[string]*template.Template{}
	for _, p := range pages {
		name := strings.TrimSuffix(path.Base(p), ".html")
		if name == "layout" {
			continue
		}
		src, _ := fs.ReadFile(files, p)
		if bytes.HasPrefix(src, []byte("<!doctype")) {
			out[name] = template.Must(template.New(name).Funcs(funcs).Parse(string(src)))
		} else {
			out[name] = template.Must(template.Must(layout.Clone()).ParseFS(files, p))
		}
	}
	return out
}

// render writes page with data, in the layout unless the page is whole.
func (p *Pages) render(w http.ResponseWriter, status int, page string, data any) {
	t := p.tmpl[page]
	name := "layout"
	if t.Lookup(name) == nil {
		name = page
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		p.deps.Logger.Error("render page", "page", page, "err", err, "request_id", w.Header().Get("X-Request-Id"))
		http.Error(w, "The page cannot be shown; quote request id "+w.Header().Get("X-Request-Id")+" when reporting it.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// message is a page that only says something, such as an error.
type message struct {
	Title, Text string
}

// fail renders err as a page: the contract's status and message for a
// *quire.Error, a generic text for the rest (logged with the request id).
func (p *Pages) fail(w http.ResponseWriter, r *http.Request, page string, data func(msg string) any, err error) {
	status, msg := p.explain(w, r, err)
	p.render(w, status, page, data(msg))
}

// explain is the status and the sentence that answer err (with
// Retry-After set when the error has one).
func (p *Pages) explain(w http.ResponseWriter, r *http.Request, err error) (int, string) {
	var qe *quire.Error
	if !errors.As(err, &qe) {
		p.deps.Logger.Error("page failed", "path", r.URL.Path, "err", err, "request_id", w.Header().Get("X-Request-Id"))
		return http.StatusInternalServerError, "Something went wrong on our side; quote request id " + w.Header().Get("X-Request-Id") + " when reporting it."
	}
	if qe.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(qe.RetryAfter.Seconds()+0.999)))
	}
	return httpapi.Status(qe.Code), qe.Message
}

// briefChars is how much of an audit event's data the verification page
// shows (static/verify.js cuts it the same way): a drawn signature's image
// would otherwise fill the page.
const briefChars = 160

// brief is data as JSON, cut after briefChars characters.
func brief(data map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // html/template escapes the page
	if err := enc.Encode(data); err != nil {
		return "(data not shown: " + err.Error() + ")"
	}
	s := strings.TrimSuffix(b.String(), "\n")
	if r := []rune(s); len(r) > briefChars {
		return string(r[:briefChars]) + "…"
	}
	return s
}
