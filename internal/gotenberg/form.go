package gotenberg

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
)

// spec is what a route reads of its form.
type spec struct {
	// served are the text fields the route honours.
	served []string
	// unsupported are fields of Gotenberg's reference that quire cannot
	// honour, with Gotenberg's default value: one sent with another
	// value is refused (400 naming it), never silently ignored. "" has
	// no default: any value other than empty is refused.
	unsupported map[string]string
	// why tells what quire does instead, or why not, by field.
	why map[string]string
	// embeds: the route takes the files to embed under "embeds".
	embeds bool
	// invoice: the route takes a Factur-X invoice under "facturxXml".
	invoice bool
}

// form is a route's form, its files in alphanumeric order of their names
// (as Gotenberg takes them: "2.pdf" before "10.pdf").
type form struct {
	files   []httpapi.Upload
	embeds  []httpapi.Upload // the files to embed, in their order
	invoice []httpapi.Upload // the Factur-X invoice (facturxXml)
	values
}

// limits bound what a route reads of its form: the files, uploaded,
// unpacked from archives or downloaded, and the bytes unpacked from its
// archives.
type limits struct {
	files int
	bytes int64
}

// readForm reads and checks the form of r against s: every text field
// known to the route, and, among those quire cannot honour, only their
// defaults. Its files are those uploaded, unpacked from archives and
// downloaded from downloadFrom.
func (a *API) readForm(r *http.Request, s spec, lim limits) (*form, error) {
	f, err := httpapi.ReadForm(r, lim.files)
	if err != nil {
		return nil, err
	}
	var bad []quire.Detail
	for _, field := range slices.Sorted(maps.Keys(f.Values)) {
		if field != "downloadFrom" {
			bad = append(bad, s.check(field, f.Values[field][0])...)
		}
	}
	out, refused, unpacked := &form{values: values{m: f.Values}}, map[string]string{}, lim.bytes
	for i, field := range f.Fields {
		switch {
		case field == "embeds" && s.embeds:
			out.embeds = append(out.embeds, f.Files[i])
			continue
		case field == "embeds":
			refused[field] = "is not supported by quire on this route: embed files with /forms/pdfengines/embed"
		case field == "facturxXml" && s.invoice:
			out.invoice = append(out.invoice, f.Files[i])
			continue
		case field == "archives":
			files, err := unpack(r.Context(), f.Files[i], max(lim.files-len(out.files), 0), &unpacked, lim)
			if err != nil {
				return nil, err
			}
			out.files = append(out.files, files...)
			continue
		}
		out.files = append(out.files, f.Files[i])
	}
	if out.has("downloadFrom") && len(bad) == 0 {
		files, err := a.downloads(r.Context(), out.str("downloadFrom"), max(lim.files-len(out.files), 0))
		if err != nil {
			return nil, err
		}
		out.files = append(out.files, files...)
	}
	if len(out.files) > lim.files {
		refused["archives"] = fmt.Sprintf("at most %d files per request, uploaded and unpacked together", lim.files)
	}
	for _, field := range slices.Sorted(maps.Keys(refused)) {
		bad = append(bad, quire.Detail{Field: field, Issue: refused[field]})
	}
	if len(bad) > 0 {
		return nil, quire.Invalid("The form is not valid.", bad...)
	}
	slices.SortStableFunc(out.files, func(a, b httpapi.Upload) int { return natural(a.Name, b.Name) })
	return out, nil
}

// take removes from f's files the one the field names, and returns it
// (an image to stamp, a file to attach: not one of the PDFs to process);
// hint, if any, tells what the field is for when it names no file.
func (f *form) take(field, hint string) (httpapi.Upload, error) {
	if !f.has(field) {
		return httpapi.Upload{}, missing(field, "is required: the name of a file uploaded under files")
	}
	file, ok := f.takeFile(f.str(field))
	if !ok {
		return httpapi.Upload{}, missing(field, fmt.Sprintf("names no file uploaded ('%s')%s", f.str(field), hint))
	}
	return file, nil
}

// takeFile removes from f's files the one of that name, and returns it.
func (f *form) takeFile(name string) (httpapi.Upload, bool) {
	i := slices.IndexFunc(f.files, func(u httpapi.Upload) bool { return u.Name == name })
	if i < 0 {
		return httpapi.Upload{}, false
	}
	taken := f.files[i]
	f.files = slices.Delete(f.files, i, i+1)
	return taken, true
}

// decodeStrict decodes the JSON text of a field into v: one value,
// nothing after it, and no key v has no field for (refused, never
// ignored).
func decodeStrict(text string, v any) error {
	d := json.NewDecoder(strings.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("more than one JSON value")
	}
	return nil
}

// check returns what is wrong with the field of that name and value.
func (s spec) check(field, value string) []quire.Detail {
	if slices.Contains(s.served, field) {
		return nil
	}
	def, known := s.unsupported[field]
	switch {
	case !known:
		return []quire.Detail{{Field: field, Issue: "is unknown to this route"}}
	case strings.TrimSpace(value) == "" || strings.EqualFold(strings.ReplaceAll(value, " ", ""), def):
		return nil // Gotenberg's default: what quire does
	}
	issue := "is not supported by quire"
	if why := s.why[field]; why != "" {
		issue += ": " + why
	}
	return []quire.Detail{{Field: field, Issue: fmt.Sprintf("%s (got '%s')", issue, value)}}
}

// natural orders names as Gotenberg does: runs of digits by their value.
func natural(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmpInt(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// values are a form's text fields, read with Gotenberg's syntax; what
// does not parse is collected, for one 400 naming every field.
type values struct {
	m   map[string][]string
	bad []quire.Detail
}

func (v *values) has(name string) bool {
	return len(v.m[name]) > 0 && strings.TrimSpace(v.m[name][0]) != ""
}

func (v *values) str(name string) string {
	if !v.has(name) {
		return ""
	}
	return strings.TrimSpace(v.m[name][0])
}

func (v *values) invalid(name, want string) {
	v.bad = append(v.bad, quire.Detail{Field: name, Issue: fmt.Sprintf("is invalid (got '%s', want %s)", v.str(name), want)})
}

// boolOr is the boolean field name, def when absent.
func (v *values) boolOr(name string, def bool) bool {
	if !v.has(name) {
		return def
	}
	b, err := strconv.ParseBool(v.str(name))
	if err != nil {
		v.invalid(name, "true or false")
	}
	return b
}

func (v *values) bool(name string) bool { return v.boolOr(name, false) }

func (v *values) int(name string) int {
	if !v.has(name) {
		return 0
	}
	n, err := strconv.Atoi(v.str(name))
	if err != nil {
		v.invalid(name, "an integer")
	}
	return n
}

func (v *values) float(name string) float64 {
	if !v.has(name) {
		return 0
	}
	f, err := strconv.ParseFloat(v.str(name), 64)
	if err != nil {
		v.invalid(name, "a number")
	}
	return f
}

// err is the 400 naming the fields that did not parse, or nil.
func (v *values) err() error {
	if len(v.bad) == 0 {
		return nil
	}
	return quire.Invalid("The form is not valid.", v.bad...)
}

// send answers the outputs (of extension ext) made from the uploads
// names: the one output, or a ZIP of them named after the uploads.
// Gotenberg-Output-Filename names the answer's file.
func send(w http.ResponseWriter, r *http.Request, names []string, outs [][]byte, ext, contentType string) error {
	body, name := outs[0], httpapi.FileBase(names[0])
	if len(outs) > 1 {
		z, err := httpapi.ZIP(names, ext, outs)
		if err != nil {
			return err
		}
		body, name, ext, contentType = z, httpapi.RequestID(r.Context()), "zip", "application/zip"
	}
	if o := r.Header.Get("Gotenberg-Output-Filename"); o != "" {
		name = httpapi.FileBase(o)
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name + "." + ext}))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
	return nil
}
