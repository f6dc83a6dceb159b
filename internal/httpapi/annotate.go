package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate"
)

// UnmatchedFieldsHeader lists the fields of an annotate request that no
// content control took: comma-separated, each percent-encoded, a group as
// "group:" and its name. Absent when every field matched.
const UnmatchedFieldsHeader = "X-Quire-Unmatched-Fields"

func (s *Server) annotateRoutes() []Route {
	if s.deps.Annotate == nil {
		return nil
	}
	// The template grows by 4/3 in base64; images ride in the fields.
	max := s.deps.Annotate.MaxDocumentBytes()/3*4 + 4 + 16<<20
	return []Route{{Method: "POST", Path: "/v1/annotate", Handler: s.annotate, MaxBody: max, Budgeted: true, Async: true, Check: s.checkAnnotate, Metered: quire.OpAnnotate, Auth: KeyRequired}}
}

func (s *Server) annotate(w http.ResponseWriter, r *http.Request) {
	req, err := s.annotateRequestOf(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.deps.Annotate.Annotate(r.Context(), req)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(res.Unmatched) > 0 {
		keys := make([]string, len(res.Unmatched))
		for i, k := range res.Unmatched {
			keys[i] = url.PathEscape(k)
		}
		w.Header().Set(UnmatchedFieldsHeader, strings.Join(keys, ","))
	}
	if req.PDF {
		meter(r.Context()).Pages = res.Pages
	}
	writeDocument(w, res.Document, res.ContentType)
}

// annotateRequestOf reads an annotate request (decodeAnnotate).
func (s *Server) annotateRequestOf(r *http.Request) (annotate.Request, error) {
	body, err := readBody(r)
	if err != nil {
		return annotate.Request{}, err
	}
	return decodeAnnotate(body, r.URL.Query(), s.deps.Annotate.MaxDocumentBytes())
}

// checkAnnotate is the annotate route's Check.
func (s *Server) checkAnnotate(r *http.Request) error {
	req, err := s.annotateRequestOf(r)
	if err != nil {
		return err
	}
	return s.deps.Annotate.Check(r.Context(), req)
}

// The fields each object of an annotate request may hold.
var (
	annotateFields  = []string{"document", "fields"}
	fieldFields     = []string{"id", "group", "type", "value", "options"}
	optionFields    = []string{"keepTextNodeStyles", "dimensions", "arcElement", "topLabel", "bottomLabel", "copyRowStyle"}
	dimensionFields = []string{"width", "height"}
	labelFields     = []string{"color", "text"}
)

// decodeAnnotate reads an annotate request: the JSON body and the query's
// to. A body that is not a JSON object is refused here; any other field
// that does not decode is left in the request's Malformed, for the
// service's Validate to report with those that break the request's rules.
// The template's base64 is decoded as the sign request's document is,
// without a copy of the body.
func decodeAnnotate(body []byte, q url.Values, maxDocument int64) (annotate.Request, error) {
	d, body := newDecoder(body, maxDocument, 0)
	var req annotate.Request
	switch to := q.Get("to"); to {
	case "", "docx":
	case "pdf":
		req.PDF = true
	default:
		d.bad("to", fmt.Sprintf("must be docx or pdf, not %q", to))
	}
	top := d.object("", json.RawMessage(body), annotateFields)
	if top == nil {
		return req, d.err(annotateInvalid)
	}
	req.Document = d.document(top["document"], maxDocument)
	if isAbsent(top["fields"]) {
		d.bad("fields", "is required")
	} else {
		var items []json.RawMessage
		if d.decode("fields", top["fields"], &items, "an array") {
			if len(items) > annotate.MaxFields {
				d.bad("fields", fmt.Sprintf("must hold at most %d fields", annotate.MaxFields))
				items = nil
			}
			for i, item := range items {
				req.Fields = append(req.Fields, d.field(fmt.Sprintf("fields[%d]", i), item))
			}
		}
	}
	req.Malformed = d.details
	return req, nil
}

const annotateInvalid = "The annotate request is not valid."

func (d *decoder) field(at string, raw json.RawMessage) annotate.Field {
	f := annotate.Field{Options: annotate.Options{KeepTextNodeStyles: true}}
	m := d.requiredObject(at, raw, fieldFields)
	if m == nil {
		return f
	}
	f.ID = d.id(at+".id", m["id"])
	f.Group = d.string(at+".group", m["group"])
	if isAbsent(m["type"]) {
		d.bad(at+".type", "is required")
	}
	f.Type = d.string(at+".type", m["type"])
	switch {
	case isAbsent(m["value"]):
		d.bad(at+".value", "is required")
	case f.Type == annotate.TypeTable:
		d.decode(at+".value", m["value"], &f.Rows, "an array of rows, each an array of strings")
	default:
		d.decode(at+".value", m["value"], &f.Value, "a string")
	}
	if o := d.object(at+".options", m["options"], optionFields); o != nil {
		d.options(at+".options", o, &f.Options)
	}
	return f
}

// id reads a field id: a string, or a number as written (ids are decimal
// numbers in Word, and JavaScript clients may send them as such).
func (d *decoder) id(at string, raw json.RawMessage) string {
	var n json.Number
	if !isAbsent(raw) && json.Unmarshal(raw, &n) == nil && !strings.HasPrefix(strings.TrimSpace(string(raw)), `"`) {
		return n.String()
	}
	return d.string(at, raw)
}

func (d *decoder) options(at string, o map[string]json.RawMessage, opt *annotate.Options) {
	if raw := o["keepTextNodeStyles"]; !isAbsent(raw) {
		d.decode(at+".keepTextNodeStyles", raw, &opt.KeepTextNodeStyles, "a boolean")
	}
	if raw := o["copyRowStyle"]; !isAbsent(raw) {
		d.decode(at+".copyRowStyle", raw, &opt.CopyRowStyle, "a boolean")
	}
	if dim := d.object(at+".dimensions", o["dimensions"], dimensionFields); dim != nil {
		opt.Width = d.pixels(at+".dimensions.width", dim["width"])
		opt.Height = d.pixels(at+".dimensions.height", dim["height"])
	}
	if a := d.object(at+".arcElement", o["arcElement"], []string{"color"}); a != nil {
		opt.ArcColor = d.string(at+".arcElement.color", a["color"])
	}
	opt.TopLabel = d.label(at+".topLabel", o["topLabel"])
	opt.BottomLabel = d.label(at+".bottomLabel", o["bottomLabel"])
}

func (d *decoder) label(at string, raw json.RawMessage) annotate.Label {
	var l annotate.Label
	if m := d.object(at, raw, labelFields); m != nil {
		l.Color = d.string(at+".color", m["color"])
		l.Text = d.string(at+".text", m["text"])
	}
	return l
}

// pixels reads a dimension: a number, or a string holding one ("180");
// its range is the request's rule (annotate.Request.Validate).
func (d *decoder) pixels(at string, raw json.RawMessage) float64 {
	if isAbsent(raw) {
		return 0
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			d.bad(at, "must be a number of pixels")
			return 0
		}
		var err error
		if n, err = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "px"), 64); err != nil {
			d.bad(at, "must be a number of pixels")
			return 0
		}
	}
	return n
}
