package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/jsonreq"
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
	return []Route{{Method: "POST", Path: "/v1/annotate", Handler: s.annotate, MaxBody: max}}
}

func (s *Server) annotate(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, bodyError(err))
		return
	}
	req, err := decodeAnnotate(body, r.URL.Query(), s.deps.Annotate.MaxDocumentBytes())
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
	var out SignResponse // the same {"document":{"base64","contentType"}} shape
	out.Document.Base64 = base64.StdEncoding.EncodeToString(res.Document)
	out.Document.ContentType = res.ContentType
	writeJSON(w, http.StatusOK, out)
}

// The fields each object of an annotate request may hold.
var (
	annotateFields  = []string{"document", "fields"}
	fieldFields     = []string{"id", "group", "type", "value", "options"}
	optionFields    = []string{"keepTextNodeStyles", "dimensions", "arcElement", "topLabel", "bottomLabel", "copyRowStyle"}
	dimensionFields = []string{"width", "height"}
	labelFields     = []string{"color", "text"}
)

// decodeAnnotate reads an annotate request: the JSON body and the query's to.
func decodeAnnotate(body []byte, q url.Values, maxDocument int64) (annotate.Request, error) {
	var v jsonreq.Validator
	var req annotate.Request
	switch to := q.Get("to"); to {
	case "", "docx":
	case "pdf":
		req.PDF = true
	default:
		v.Bad("to", fmt.Sprintf("must be docx or pdf, not %q", to))
	}
	top := v.Object("", json.RawMessage(body), annotateFields)
	if top == nil {
		if v.OK() {
			v.Bad("body", "must be a JSON object")
		}
		return req, v.Err("The annotate request is not valid.")
	}
	req.Document.Bytes, req.Document.URL = v.Document("document", top["document"], maxDocument)
	if jsonreq.Absent(top["fields"]) {
		v.Bad("fields", "is required")
	} else {
		var items []json.RawMessage
		if v.Decode("fields", top["fields"], &items, "an array") {
			if len(items) > annotate.MaxFields {
				v.Bad("fields", fmt.Sprintf("must hold at most %d fields", annotate.MaxFields))
				items = nil
			}
			for i, item := range items {
				req.Fields = append(req.Fields, decodeField(&v, fmt.Sprintf("fields[%d]", i), item))
			}
		}
	}
	if !v.OK() {
		return req, v.Err("The annotate request is not valid.")
	}
	return req, nil
}

func decodeField(v *jsonreq.Validator, at string, raw json.RawMessage) annotate.Field {
	f := annotate.Field{Options: annotate.Options{KeepTextNodeStyles: true}}
	m := v.RequiredObject(at, raw, fieldFields)
	if m == nil {
		return f
	}
	f.ID = idString(v, at+".id", m["id"])
	f.Group = v.OptionalString(at+".group", m["group"], 1000)
	f.Type = v.RequiredString(at+".type", m["type"], 32)
	switch {
	case jsonreq.Absent(m["value"]):
		v.Bad(at+".value", "is required")
	case f.Type == annotate.TypeTable:
		v.Decode(at+".value", m["value"], &f.Rows, "an array of rows, each an array of strings")
	default:
		v.Decode(at+".value", m["value"], &f.Value, "a string")
	}
	if o := v.Object(at+".options", m["options"], optionFields); o != nil {
		decodeOptions(v, at+".options", o, &f.Options)
	}
	return f
}

// idString reads a field id: a string, or a number as written (ids are
// decimal numbers in Word, and JavaScript clients may send them as such).
func idString(v *jsonreq.Validator, at string, raw json.RawMessage) string {
	if jsonreq.Absent(raw) {
		return ""
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil && !strings.HasPrefix(strings.TrimSpace(string(raw)), `"`) {
		return n.String()
	}
	return v.OptionalString(at, raw, 1000)
}

func decodeOptions(v *jsonreq.Validator, at string, o map[string]json.RawMessage, opt *annotate.Options) {
	if raw := o["keepTextNodeStyles"]; !jsonreq.Absent(raw) {
		v.Decode(at+".keepTextNodeStyles", raw, &opt.KeepTextNodeStyles, "a boolean")
	}
	if raw := o["copyRowStyle"]; !jsonreq.Absent(raw) {
		v.Decode(at+".copyRowStyle", raw, &opt.CopyRowStyle, "a boolean")
	}
	if d := v.Object(at+".dimensions", o["dimensions"], dimensionFields); d != nil {
		opt.Width = pixels(v, at+".dimensions.width", d["width"])
		opt.Height = pixels(v, at+".dimensions.height", d["height"])
	}
	if a := v.Object(at+".arcElement", o["arcElement"], []string{"color"}); a != nil {
		opt.ArcColor = v.OptionalString(at+".arcElement.color", a["color"], 16)
	}
	opt.TopLabel = label(v, at+".topLabel", o["topLabel"])
	opt.BottomLabel = label(v, at+".bottomLabel", o["bottomLabel"])
}

func label(v *jsonreq.Validator, at string, raw json.RawMessage) annotate.Label {
	var l annotate.Label
	if m := v.Object(at, raw, labelFields); m != nil {
		l.Color = v.OptionalString(at+".color", m["color"], 16)
		l.Text = v.OptionalString(at+".text", m["text"], annotate.MaxLabel)
	}
	return l
}

// pixels reads a dimension: a number, or a string holding one ("180").
func pixels(v *jsonreq.Validator, at string, raw json.RawMessage) float64 {
	if jsonreq.Absent(raw) {
		return 0
	}
	var n float64
	if json.Unmarshal(raw, &n) != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			v.Bad(at, "must be a number of pixels")
			return 0
		}
		var err error
		if n, err = strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "px"), 64); err != nil {
			v.Bad(at, "must be a number of pixels")
			return 0
		}
	}
	if n <= 0 || n > annotate.MaxDimension {
		v.Bad(at, fmt.Sprintf("must be a number of pixels from 1 to %d", annotate.MaxDimension))
		return 0
	}
	return n
}
