package pdftools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf"
)

// The fields of a PDF's interactive form (AcroForm): form lists them and
// set-form fills them, as Gotenberg 9's /forms/pdf/form and set-form do,
// by quire's model. Both read the field tree from the catalog's
// /AcroForm /Fields, with the attributes a field inherits from its
// ancestors (FT, Ff, V, Opt, MaxLen, DA); XFA forms are not read.

// FormField is a terminal field of the form, as form answers it (a JSON
// array of them, in the order of the field tree).
type FormField struct {
	// Name is the fully qualified name: its ancestors' partial names
	// and its own, joined by dots ("address.city"), which set-form takes.
	Name string `json:"name"`
	Type string `json:"type"` // FieldTypes
	// Value is the field's value: a string (a checkbox's or radio's
	// state, "Off" when none is on), or for a list that selects several
	// an array of strings.
	Value any `json:"value"`
	// Pages are the 1-based pages its widgets are on, in order.
	Pages []int `json:"pages"`
	// States are a checkbox's or radio button's on-states, besides Off.
	States []string `json:"states,omitempty"`
	// Options are a choice field's values (the export value of an option
	// that has a display text too).
	Options     []string `json:"options,omitempty"`
	ReadOnly    bool     `json:"readOnly,omitempty"`
	Required    bool     `json:"required,omitempty"`
	MultiSelect bool     `json:"multiSelect,omitempty"`
	Editable    bool     `json:"editable,omitempty"` // a combo box that takes text of the user's own
	MaxLength   int      `json:"maxLength,omitempty"`
}

// FieldTypes are the types a FormField has.
var FieldTypes = []string{"text", "checkbox", "radio", "button", "combo", "list", "signature"}

// Field flags (ISO 32000-1, 12.7.3.1, 12.7.4.2 to 12.7.4.4).
const (
	ffReadOnly    = 1 << 0
	ffRequired    = 1 << 1
	ffRadio       = 1 << 15
	ffPushbutton  = 1 << 16
	ffCombo       = 1 << 17
	ffEdit        = 1 << 18
	ffMultiSelect = 1 << 21
)

// Bounds of set-form's fields.
const (
	maxFormFields = 1000        // fields one request fills
	maxFieldValue = maxProperty // bytes of a name or a value
)

func (r *Request) validateSetForm(bad func(string, string, ...any)) {
	if len(r.Fields) == 0 {
		bad("fields", "is required: the values keyed by the fields' fully qualified names (the form operation lists them)")
	}
	if len(r.Fields) > maxFormFields {
		bad("fields", "at most %d fields", maxFormFields)
		return
	}
	for _, name := range slices.Sorted(maps.Keys(r.Fields)) {
		values := r.Fields[name]
		switch {
		case name == "" || len(name) > maxFieldValue || !utf8.ValidString(name):
			bad("fields", "%q is not a field name: names are UTF-8 text of 1 to %d bytes", name, maxFieldValue)
		case len(values) == 0:
			bad("fields", "%q has no value: give a string, or an array of strings for a list that selects several", name)
		case slices.ContainsFunc(values, func(v string) bool { return len(v) > maxFieldValue || !utf8.ValidString(v) }):
			bad("fields", "%q: a value is UTF-8 text of at most %d bytes", name, maxFieldValue)
		}
	}
}

// field is a terminal field of the form as read: its object, its
// inherited attributes resolved, and its widgets.
type field struct {
	name    string
	ref     pdf.Ref // zero when the field is a direct object, which set-form cannot change
	dict    pdf.Dict
	ft      pdf.Name
	flags   int
	value   pdf.Object
	opt     pdf.Array
	maxLen  int
	da      string // the default appearance: "/Helv 12 Tf 0 g"
	widgets []pdf.Ref
}

// inherited are the attributes a field takes from its ancestors.
type inherited struct {
	ft     pdf.Name
	flags  int
	value  pdf.Object
	opt    pdf.Object
	maxLen pdf.Object
	da     pdf.Object
}

// formFields walks the form's field tree within the document's limits:
// no deeper than MaxNesting, no more fields than MaxObjects, each object
// once.
func formFields(ctx context.Context, d *pdf.Document, form pdf.Dict) ([]field, error) {
	roots, err := d.Array(form["Fields"])
	if err != nil {
		return nil, nil // a form without fields
	}
	w := formWalk{d: d, ctx: ctx, seen: map[int]bool{}}
	for _, r := range roots {
		if err := w.walk(r, "", inherited{da: form["DA"]}, 0); err != nil {
			return nil, err
		}
	}
	return w.out, nil
}

type formWalk struct {
	d    *pdf.Document
	ctx  context.Context
	seen map[int]bool
	n    int
	out  []field
}

func (w *formWalk) walk(o pdf.Object, parent string, inh inherited, depth int) error {
	self, _ := o.(pdf.Ref)
	if self.Num != 0 {
		if w.seen[self.Num] {
			return nil
		}
		w.seen[self.Num] = true
	}
	w.n++
	if depth > w.d.Limits().MaxNesting || w.n > w.d.Limits().MaxObjects {
		return fmt.Errorf("%w: form field tree too deep or too large", pdf.ErrUnreadable)
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	f, err := w.d.Dict(o)
	if err != nil {
		return nil // not a field: left out
	}
	name := parent
	if t := decodedText(w.d, f["T"]); t != "" {
		name = joinName(parent, t)
	}
	inh = inherit(w.d, inh, f)
	// A kid with a name is a field; one without, a widget of this one
	// (some writers leave out a widget's /Subtype).
	kids, _ := w.d.Array(f["Kids"])
	var widgets []pdf.Ref
	var fieldKids pdf.Array
	for _, k := range kids {
		kd, err := w.d.Dict(k)
		if err != nil {
			continue
		}
		if _, named := kd["T"]; named {
			fieldKids = append(fieldKids, k)
		} else if r, ok := k.(pdf.Ref); ok {
			widgets = append(widgets, r)
		}
	}
	for _, k := range fieldKids {
		if err := w.walk(k, name, inh, depth+1); err != nil {
			return err
		}
	}
	if len(fieldKids) > 0 || inh.ft == "" {
		return nil // a node of the tree, or no field at all
	}
	if (isWidget(f) || f["Rect"] != nil) && self.Num != 0 { // a field and its widget in one
		widgets = append([]pdf.Ref{self}, widgets...)
	}
	opt, _ := w.d.Array(inh.opt)
	maxLen, _ := w.d.Resolve(inh.maxLen)
	w.out = append(w.out, field{name: name, ref: self, dict: f, ft: inh.ft, flags: inh.flags,
		value: inh.value, opt: opt, maxLen: pdf.IntOr(maxLen, 0), da: decodedText(w.d, inh.da), widgets: widgets})
	return nil
}

// inherit is what a field has of its own, else of its ancestors.
func inherit(d *pdf.Document, inh inherited, f pdf.Dict) inherited {
	if ft, ok := f["FT"].(pdf.Name); ok {
		inh.ft = ft
	}
	if ff, err := d.Resolve(f["Ff"]); err == nil {
		if v, ok := ff.(pdf.Int); ok {
			inh.flags = int(v)
		}
	}
	for k, dst := range map[pdf.Name]*pdf.Object{"V": &inh.value, "Opt": &inh.opt, "MaxLen": &inh.maxLen, "DA": &inh.da} {
		if v, ok := f[k]; ok {
			*dst = v
		}
	}
	return inh
}

func joinName(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// kind is the field's FieldTypes entry, "" for a type the standard lacks.
func (f field) kind() string {
	switch f.ft {
	case "Tx":
		return "text"
	case "Sig":
		return "signature"
	case "Btn":
		switch {
		case f.flags&ffPushbutton != 0:
			return "button"
		case f.flags&ffRadio != 0:
			return "radio"
		}
		return "checkbox"
	case "Ch":
		if f.flags&ffCombo != 0 {
			return "combo"
		}
		return "list"
	}
	return ""
}

// states are the on-states of the field's widgets (their normal
// appearances' names besides Off), each once, in order.
func (f field) states(d *pdf.Document) []string {
	var out []string
	for _, w := range f.widgets {
		wd, err := d.Dict(w)
		if err != nil {
			continue
		}
		ap, _ := d.Dict(wd["AP"])
		n, _ := d.Dict(ap["N"])
		for _, k := range slices.Sorted(maps.Keys(n)) {
			if k != "Off" && !slices.Contains(out, string(k)) {
				out = append(out, string(k))
			}
		}
	}
	return out
}

// options are a choice field's values: each option's export value.
func (f field) options(d *pdf.Document) []string { return f.optionTexts(d, 0) }

// optionTexts are the options' export values (0) or display texts (1),
// an option of one text being both.
func (f field) optionTexts(d *pdf.Document, i int) []string {
	out := make([]string, 0, len(f.opt))
	for _, o := range f.opt {
		o, _ = d.Resolve(o)
		if pair, ok := o.(pdf.Array); ok && len(pair) == 2 {
			o = pair[i]
		}
		out = append(out, decodedText(d, o))
	}
	return out
}

// valueOf is the field's value as form answers it.
func (f field) valueOf(d *pdf.Document) any {
	v, _ := d.Resolve(f.value)
	switch v := v.(type) {
	case pdf.Name:
		return string(v)
	case pdf.Array:
		out := make([]string, 0, len(v))
		for _, e := range v {
			out = append(out, decodedText(d, e))
		}
		if f.kind() == "list" && f.flags&ffMultiSelect != 0 {
			return out
		}
		if len(out) > 0 {
			return out[0]
		}
		return ""
	}
	if k := f.kind(); (k == "checkbox" || k == "radio") && f.value == nil {
		return "Off"
	}
	return decodedText(d, v)
}

// form answers the form's fields as JSON.
func (s *Service) form(ctx context.Context, in *input) (Result, error) {
	fields, err := s.fieldsOf(ctx, in)
	if err != nil {
		return Result{}, err
	}
	onPage, err := widgetPages(ctx, in.doc)
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	out := make([]FormField, 0, len(fields))
	for _, f := range fields {
		ff := FormField{Name: f.name, Type: f.kind(), Value: f.valueOf(in.doc), Pages: []int{},
			ReadOnly: f.flags&ffReadOnly != 0, Required: f.flags&ffRequired != 0}
		if ff.Type == "" {
			continue // a type the standard lacks
		}
		for _, w := range f.widgets {
			if p := onPage[w.Num]; p > 0 && !slices.Contains(ff.Pages, p) {
				ff.Pages = append(ff.Pages, p)
			}
		}
		sort.Ints(ff.Pages)
		switch ff.Type {
		case "checkbox", "radio":
			ff.States = f.states(in.doc)
		case "combo", "list":
			ff.Options = f.options(in.doc)
			ff.MultiSelect = ff.Type == "list" && f.flags&ffMultiSelect != 0
			ff.Editable = ff.Type == "combo" && f.flags&ffEdit != 0
		case "text":
			ff.MaxLength = f.maxLen
		}
		out = append(out, ff)
	}
	b, err := json.Marshal(out)
	return Result{Data: b, ContentType: TypeJSON, Documents: 1, Pages: in.pages}, err
}

// fieldsOf reads the terminal fields of the input's form.
func (s *Service) fieldsOf(ctx context.Context, in *input) ([]field, error) {
	_, cat, err := in.doc.Catalog()
	if err != nil {
		return nil, s.documentError(File{Name: in.name}, err)
	}
	form, err := in.doc.Dict(cat["AcroForm"])
	if err != nil {
		return nil, nil // no form
	}
	fields, err := formFields(ctx, in.doc, form)
	if err != nil {
		return nil, s.documentError(File{Name: in.name}, err)
	}
	return fields, nil
}

// widgetPages maps the object number of each annotation of a page's
// /Annots to its 1-based page.
func widgetPages(ctx context.Context, d *pdf.Document) (map[int]int, error) {
	pages, err := d.PagesContext(ctx)
	if err != nil {
		return nil, err
	}
	out := map[int]int{}
	for i, p := range pages {
		annots, _ := d.Array(p.Dict["Annots"])
		for _, a := range annots {
			if r, ok := a.(pdf.Ref); ok && out[r.Num] == 0 {
				out[r.Num] = i + 1
			}
		}
	}
	return out, nil
}

// setForm gives the fields of req.Fields their values: a field's /V and,
// for a checkbox or radio button, each widget's /AS (its state where it
// has it, else Off); a list's /I (the selected options' indexes); a
// text field's or combo box's widgets a new appearance (appear). The
// fields stay editable. It is written as an incremental update: a
// signed PDF's signatures stay valid (filling a form is a change a
// certification of level 2 or 3 allows).
func (s *Service) setForm(ctx context.Context, in *input, req Request) (Result, error) {
	catRef, cat, err := in.doc.Catalog()
	if err != nil {
		return Result{}, s.documentError(File{Name: in.name}, err)
	}
	fields, err := s.fieldsOf(ctx, in)
	if err != nil {
		return Result{}, err
	}
	fl := filling{s: s, d: in.doc, changed: map[pdf.Ref]pdf.Dict{}}
	var d []quire.Detail
	for _, name := range slices.Sorted(maps.Keys(req.Fields)) {
		if issue := fl.fill(fields, name, req.Fields[name]); issue != "" {
			d = append(d, quire.Detail{Field: "fields", Issue: issue})
		}
	}
	if len(d) > 0 {
		return Result{}, quire.Invalid("The PDF set-form request is not valid.", d...)
	}
	// In the objects' order, so that the new objects they hold (the
	// appearances) are numbered alike from one run to the next.
	for _, r := range slices.SortedFunc(maps.Keys(fl.changed), func(a, b pdf.Ref) int { return a.Num - b.Num }) {
		in.doc.Replace(r, fl.changed[r])
	}
	if fl.needAppearances {
		if err := needAppearances(in.doc, catRef, cat); err != nil {
			return Result{}, s.documentError(File{Name: in.name}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
		}
	}
	return s.saved(in)
}

// filling is the state of set-form: the objects changed so far, each a
// copy of the document's, and whether a widget was left for viewers to
// draw.
type filling struct {
	s               *Service
	d               *pdf.Document
	changed         map[pdf.Ref]pdf.Dict
	needAppearances bool
}

// fill sets the fields named name (one, unless the PDF repeats a
// name) to values, in changed, or says why it cannot.
func (fl *filling) fill(fields []field, name string, values []string) string {
	found := false
	for _, f := range fields {
		if f.name != name || f.kind() == "" {
			continue
		}
		found = true
		if issue := f.check(fl.d, values); issue != "" {
			return fmt.Sprintf("%q %s", name, issue)
		}
		if f.ref.Num == 0 || slices.ContainsFunc(f.widgets, func(w pdf.Ref) bool { return w.Num == 0 }) {
			return fmt.Sprintf("%q cannot be filled: its dictionary is not an object of its own", name)
		}
		fl.set(f, values)
	}
	if !found {
		return fmt.Sprintf("%q is not a field of the PDF (the form operation lists them)", name)
	}
	return ""
}

// check says what is wrong with values for f, or "".
func (f field) check(d *pdf.Document, values []string) string {
	kind := f.kind()
	multi := kind == "list" && f.flags&ffMultiSelect != 0
	if len(values) > 1 && !multi {
		return fmt.Sprintf("is a %s field: it takes one value, not %d", kind, len(values))
	}
	switch kind {
	case "button", "signature":
		return fmt.Sprintf("is a %s field: it takes no value", kind)
	case "text":
		if f.maxLen > 0 && utf8.RuneCountInString(values[0]) > f.maxLen {
			return fmt.Sprintf("takes at most %d characters", f.maxLen)
		}
	case "checkbox", "radio":
		states := f.states(d)
		if values[0] != "Off" && !slices.Contains(states, values[0]) {
			return fmt.Sprintf("has no state %q: its states are Off, %s", values[0], strings.Join(states, ", "))
		}
	case "combo", "list":
		if kind == "combo" && f.flags&ffEdit != 0 {
			return ""
		}
		options := f.options(d)
		for _, v := range values {
			if !slices.Contains(options, v) {
				return fmt.Sprintf("has no option %q: its options are %s", v, quoted(options))
			}
		}
	}
	return ""
}

// quoted lists values quoted, at most maxNamesListed of them.
func quoted(values []string) string {
	out := make([]string, 0, maxNamesListed)
	for _, v := range values[:min(len(values), maxNamesListed)] {
		out = append(out, fmt.Sprintf("%q", v))
	}
	if len(values) > maxNamesListed {
		out = append(out, fmt.Sprintf("and %d more", len(values)-maxNamesListed))
	}
	return strings.Join(out, ", ")
}

// set writes values into f's dictionary and its widgets'.
func (fl *filling) set(f field, values []string) {
	d, changed := fl.d, fl.changed
	dict := changedDict(d, f.ref, changed)
	switch f.kind() {
	case "checkbox", "radio":
		state := pdf.Name(values[0])
		dict["V"] = state
		for _, w := range f.widgets {
			wd := changedDict(d, w, changed)
			ap, _ := d.Dict(wd["AP"])
			n, _ := d.Dict(ap["N"])
			if _, ok := n[state]; ok {
				wd["AS"] = state
			} else {
				wd["AS"] = pdf.Name("Off")
			}
		}
	case "list":
		options := f.options(d)
		var chosen, indexes pdf.Array
		for i, o := range options {
			if slices.Contains(values, o) {
				chosen = append(chosen, pdf.TextString(o))
				indexes = append(indexes, pdf.Int(i))
			}
		}
		dict["V"] = chosen[0]
		if f.flags&ffMultiSelect != 0 {
			dict["V"] = chosen
		}
		dict["I"] = indexes
		fl.leaveToViewers(f)
	default:
		dict["V"] = pdf.TextString(values[0])
		delete(dict, "I") // a combo box's former selection
		shown := values[0]
		if i := slices.Index(f.options(d), shown); i >= 0 {
			shown = f.optionTexts(d, 1)[i]
		}
		if !fl.s.appear(d, f, f.da, shown, changed) {
			fl.leaveToViewers(f)
		}
	}
}

// leaveToViewers removes the appearances of f's widgets, which show its
// former value, and has the form ask viewers to draw them.
func (fl *filling) leaveToViewers(f field) {
	for _, w := range f.widgets {
		delete(changedDict(fl.d, w, fl.changed), "AP")
	}
	fl.needAppearances = true
}

// changedDict is r's dictionary as changed so far: a copy of it made on
// the first change.
func changedDict(d *pdf.Document, r pdf.Ref, changed map[pdf.Ref]pdf.Dict) pdf.Dict {
	if dict, ok := changed[r]; ok {
		return dict
	}
	dict, err := d.Dict(r)
	if err != nil {
		dict = pdf.Dict{}
	}
	dict = dict.Clone()
	changed[r] = dict
	return dict
}

// needAppearances sets the form's /NeedAppearances, where the form is.
func needAppearances(d *pdf.Document, catRef pdf.Ref, cat pdf.Dict) error {
	form, err := d.Dict(cat["AcroForm"])
	if err != nil {
		return errors.New("no /AcroForm")
	}
	form = form.Clone()
	form["NeedAppearances"] = pdf.Bool(true)
	if r, ok := cat["AcroForm"].(pdf.Ref); ok {
		d.Replace(r, form)
		return nil
	}
	cat = cat.Clone()
	cat["AcroForm"] = form
	d.Replace(catRef, cat)
	return nil
}
