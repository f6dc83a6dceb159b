package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/zipout"
)

// Dialect is how the routes of another API quire speaks (Deps.Foreign,
// internal/gotenberg) differ from quire's own: where the caller's key is,
// and the form of an error answer. Everything else (body limits, memory
// budget, the key's limits, fair engines, metering) is the same as on
// /v1.
type Dialect struct {
	// Key returns the API key r presents, or "" to serve r without one;
	// an error (401) refuses it. Nil: the route is public.
	Key func(r *http.Request) (string, error)
	// Fail writes the error qe, of HTTP status status.
	Fail func(w http.ResponseWriter, r *http.Request, status int, qe *quire.Error)
	// Async, when set, replaces Prefer: respond-async on the dialect's
	// Async routes: whether r asks to be run as a job, and the addresses
	// its end is delivered to (the first is the job's webhook), each
	// checked as Quire-Webhook-Url is; an error refuses r.
	Async func(r *http.Request) (webhooks []Webhook, ok bool, err error)
	// Accepted answers r, taken as job j; nil: 202 with the job.
	Accepted func(w http.ResponseWriter, r *http.Request, j quire.Job)
}

// Webhook is an address a request names in one of its headers.
type Webhook struct {
	Header, URL string
}

// speak returns r as a route of dialect d serves it: its errors answered
// by d, authenticated by the key d finds, if any.
func (s *Server) speak(d *Dialect, r *http.Request) (*http.Request, error) {
	infoOf(r.Context()).dialect = d
	if _, ok := APIKey(r.Context()); ok || d.Key == nil { // public, or a job's request run as its key (runAsJobKey)
		return r, nil
	}
	token, err := d.Key(r)
	if err != nil || token == "" {
		return r, err
	}
	key, err := s.deps.Auth.Authenticate(r.Context(), token)
	if err != nil {
		return r, err
	}
	return withKey(r, key), nil
}

// RequestID is the id of the request of ctx (X-Request-Id).
func RequestID(ctx context.Context) string { return infoOf(ctx).id }

// ZIP is a ZIP of outs, each named after the upload it was made from
// (names) with the extension ext, as POST /v1/convert names them.
func ZIP(names []string, ext string, outs [][]byte) ([]byte, error) {
	return zipout.Archive(zipout.Names(names, ext), outs)
}

// Form is a multipart form as other APIs send it: files under any field
// name, and text values.
type Form struct {
	Files  []Upload
	Fields []string            // the names of the files' fields, in order
	Values map[string][]string // the text fields
}

// maxFormValueBytes bounds the text fields of a Form together.
const maxFormValueBytes = 1 << 20

// ReadForm reads the multipart form of r: at most maxFiles files (a part
// with a file name, whatever its field), none empty, and text fields of
// at most 1 MiB together.
func ReadForm(r *http.Request, maxFiles int) (Form, error) {
	f := Form{Values: map[string][]string{}}
	mr, err := r.MultipartReader()
	if err != nil {
		return f, quire.Errorf(quire.CodeUnsupportedMedia, "The request is not multipart/form-data.")
	}
	room := int64(maxFormValueBytes)
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return f, nil
		}
		if err != nil {
			return f, badMultipart(r, err)
		}
		if p.FileName() == "" {
			b, err := io.ReadAll(io.LimitReader(p, room+1))
			if err != nil {
				return f, badMultipart(r, err)
			}
			if room -= int64(len(b)); room < 0 {
				return f, quire.Invalid("The form's text fields are too large.",
					quire.Detail{Field: p.FormName(), Issue: fmt.Sprintf("the text fields are at most %d bytes together", maxFormValueBytes)})
			}
			f.Values[p.FormName()] = append(f.Values[p.FormName()], string(b))
			continue
		}
		if len(f.Files) == maxFiles {
			return f, quire.Invalid("The request has too many files.",
				quire.Detail{Field: p.FormName(), Issue: fmt.Sprintf("at most %d files per request", maxFiles)})
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return f, badMultipart(r, err)
		}
		if len(b) == 0 {
			return f, quire.Invalid("The file is empty.", quire.Detail{Field: p.FormName(), Issue: fmt.Sprintf("file %q must not be empty", p.FileName())})
		}
		f.Files = append(f.Files, Upload{Name: p.FileName(), Data: b})
		f.Fields = append(f.Fields, p.FormName())
	}
}

// FileBase is the base of a client's file name, without its extension,
// safe as a file name ("document" when nothing is left).
func FileBase(name string) string { return zipout.Base(name) }

// Fail answers err as the route of r answers errors: in its Dialect's
// form, or in the error body.
func Fail(w http.ResponseWriter, r *http.Request, err error) { serverOf(r).fail(w, r, err) }
