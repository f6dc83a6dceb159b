package pdfsign

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/quire-dev/quire/internal/pdf"
)

// The classes of a change made after a signature, from the least to the
// most consequential (Modifications.Level is the highest found).
const (
	ClassNone        = "none"        // no change
	ClassLTV         = "ltv"         // validation data (DSS, VRI) and document time-stamps
	ClassForm        = "form"        // a form field filled in, the form's defaults, document metadata
	ClassAnnotations = "annotations" // an annotation added, changed or removed
	ClassSignature   = "signature"   // another signature, or an empty signature field
	ClassOther       = "other"       // anything else: pages, page content and resources, fields added, ...
)

var classRank = map[string]int{ClassNone: 0, ClassLTV: 1, ClassForm: 2, ClassAnnotations: 3, ClassSignature: 4, ClassOther: 5}

// higher returns the higher of two classes.
func higher(a, b string) string {
	if classRank[b] > classRank[a] {
		return b
	}
	return a
}

// Change is one object changed after a signature.
type Change struct {
	Object    int    `json:"object"` // the object's number; 0 for bytes outside any object
	Page      int    `json:"page"`   // 1-based page it is on; 0 when on none
	Class     string `json:"class"`
	What      string `json:"what"`      // in words
	Permitted bool   `json:"permitted"` // allowed after this signature (see Modifications)
}

// Modifications are the changes made in the revisions after a signature.
type Modifications struct {
	Level     string   `json:"level"`     // the highest class of change, "none" when there is none
	Permitted bool     `json:"permitted"` // every change is allowed after this signature
	Changes   []Change `json:"changes"`
}

// change is a Change with what judging it needs.
type change struct {
	Change
	pageRef   int     // the page's object number, to find it in the signed revision
	field     int     // the form field filled or signed, for locks and signed values
	fieldName string  // its full name
	drawn     bool    // an annotation drawn on the page (added, changed or removed) at rect
	rect      pdf.Box // where, in default user space
	annot     int     // the annotation's object, which the signed revision may draw already
}

// comparison finds the changes between two readable revisions.
type comparison struct {
	a, b   *pdf.Document
	ra, rb *roles
	nums   map[int]bool // objects changed or added
}

// diffRevisions classifies every object that revision b (newer) changes
// or adds to revision a. Objects rewritten the same are no change.
func diffRevisions(a, b *pdf.Document, ra, rb *roles) []change {
	c := &comparison{a: a, b: b, ra: ra, rb: rb, nums: map[int]bool{}}
	for _, n := range b.ChangedSince(a) {
		c.nums[n] = true
	}
	for _, n := range b.AddedSince(a) {
		c.nums[n] = true
	}
	var out []change
	if ra.catalog != rb.catalog {
		out = append(out, other(rb.catalog, 0, "the document catalog was replaced by another object"))
	}
	if ra.info != rb.info {
		out = append(out, change{Change: Change{Object: rb.info, Class: ClassForm, What: "document information replaced"}})
	}
	nums := make([]int, 0, len(c.nums))
	for n := range c.nums {
		nums = append(nums, n)
	}
	sort.Ints(nums)
	for _, n := range nums {
		old, nw := objectOrNil(a, n), objectOrNil(b, n)
		if old != nil && nw != nil && reflect.DeepEqual(old, nw) {
			continue
		}
		out = append(out, c.classify(n, old, nw)...)
	}
	return out
}

// objectOrNil loads object num, nil when it is free, missing or broken.
func objectOrNil(d *pdf.Document, num int) pdf.Object {
	o, err := d.Object(num)
	if err != nil {
		return nil
	}
	if _, null := o.(pdf.Null); null {
		return nil
	}
	return o
}

func other(num, page int, what string) change {
	return change{Change: Change{Object: num, Page: page, Class: ClassOther, What: what}}
}

func dictOf(o pdf.Object) pdf.Dict {
	switch v := o.(type) {
	case pdf.Dict:
		return v
	case *pdf.Stream:
		return v.Dict
	}
	return nil
}

// classify names the change of object num from old to nw (either nil when
// the object is new or freed) by the role the object has.
func (c *comparison) classify(num int, old, nw pdf.Object) []change {
	ra, rb := c.ra, c.rb
	switch {
	case num == rb.catalog || num == ra.catalog:
		return c.catalog(num, dictOf(old), dictOf(nw))
	case rb.pageOf[num] > 0 && old == nil:
		return []change{other(num, rb.pageOf[num], "page added")}
	case rb.pageOf[num] > 0:
		return c.page(num, dictOf(old), dictOf(nw))
	case ra.pageOf[num] > 0:
		return []change{other(num, ra.pageOf[num], "page removed")}
	case rb.treeNode[num] || ra.treeNode[num]:
		return []change{other(num, 0, "page tree changed")}
	case rb.content[num] > 0:
		return []change{other(num, rb.content[num], "content or resources of the page changed")}
	case rb.annots[num] > 0:
		arrA, _ := c.a.Array(old)
		arrB, _ := c.b.Array(nw)
		return c.annotsDiff(num, rb.annots[num], arrA, arrB)
	case rb.sigValue[num] > 0 || ra.sigValue[num] > 0:
		return []change{c.signatureValue(num, old, nw)}
	}
	if _, ok := rb.field[num]; ok {
		return c.field(num, dictOf(old), dictOf(nw))
	}
	if _, ok := ra.field[num]; ok && nw == nil {
		return []change{other(num, 0, "form field removed")}
	}
	if role, ok := rb.annot[num]; ok {
		return []change{c.annotation(num, role, dictOf(old), dictOf(nw))}
	}
	switch {
	case rb.drawing[num] > 0:
		return []change{c.drawing(num, rb.drawing[num])}
	case rb.dss[num]:
		return []change{{Change: Change{Object: num, Class: ClassLTV, What: "validation data (DSS)"}}}
	case rb.metadata[num] || num == rb.info || num == ra.info:
		return []change{{Change: Change{Object: num, Class: ClassForm, What: "document metadata"}}}
	case rb.form[num]:
		if cls, what := c.formDiff(dictOf(old), dictOf(nw), old, nw); cls != ClassNone {
			return []change{{Change: Change{Object: num, Class: cls, What: what}}}
		}
		return nil
	case old != nil && rb.reachable()[num]:
		return []change{other(num, 0, "an object the document uses changed")}
	}
	return nil // new or changed, and nothing shows it
}

// catalog compares the catalog entry by entry.
func (c *comparison) catalog(num int, old, nw pdf.Dict) []change {
	cls, keys := ClassNone, []string{}
	for _, k := range changedKeys(old, nw) {
		var kc string
		switch k {
		case "DSS", "Extensions", "Version":
			kc = ClassLTV
		case "Metadata":
			kc = ClassForm
		case "AcroForm":
			fo, _ := c.a.Dict(old["AcroForm"])
			fn, _ := c.b.Dict(nw["AcroForm"])
			kc, _ = c.formDiff(fo, fn, old["AcroForm"], nw["AcroForm"])
		default:
			kc = ClassOther
		}
		if kc != ClassNone {
			cls = higher(cls, kc)
			keys = append(keys, "/"+string(k))
		}
	}
	if cls == ClassNone {
		return nil
	}
	return []change{{Change: Change{Object: num, Class: cls, What: "document catalog: " + strings.Join(keys, ", ")}}}
}

// changedKeys lists the keys whose values differ between two dictionaries.
func changedKeys(a, b pdf.Dict) []pdf.Name {
	var out []pdf.Name
	for k, v := range b {
		if !reflect.DeepEqual(a[k], v) {
			out = append(out, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// formDiff classifies a change of the form dictionary (or of its /Fields
// array, given as arrays): fields added are judged where the fields are
// (signature fields as signatures, others as fields added); fields taken
// out change the form; its default appearance and resources are form
// filling's; anything else is other.
func (c *comparison) formDiff(old, nw pdf.Dict, oldObj, newObj pdf.Object) (string, string) {
	var fieldsA, fieldsB pdf.Array
	if old == nil && nw == nil { // the /Fields array itself
		fieldsA, _ = c.a.Array(oldObj)
		fieldsB, _ = c.b.Array(newObj)
	} else {
		fieldsA, _ = c.a.Array(old["Fields"])
		fieldsB, _ = c.b.Array(nw["Fields"])
	}
	cls, what := ClassNone, ""
	for _, k := range changedKeys(old, nw) {
		switch k {
		case "Fields", "SigFlags":
		case "DA", "DR", "NeedAppearances":
			cls, what = higher(cls, ClassForm), "form defaults changed"
		default:
			return ClassOther, fmt.Sprintf("form dictionary /%s changed", k)
		}
	}
	added, removed := refDiff(fieldsA, fieldsB)
	if len(removed) > 0 {
		return ClassOther, "form field removed"
	}
	for _, r := range added {
		if c.nums[r] {
			continue // a new or changed field is judged as such
		}
		cls, what = higher(cls, ClassOther), "an existing object made a form field"
	}
	return cls, what
}

// refDiff returns the object numbers b refers to and a does not, and the
// reverse.
func refDiff(a, b pdf.Array) (added, removed []int) {
	in := func(arr pdf.Array) map[int]bool {
		m := map[int]bool{}
		for _, e := range arr {
			if r, ok := e.(pdf.Ref); ok {
				m[r.Num] = true
			}
		}
		return m
	}
	ma, mb := in(a), in(b)
	for n := range mb {
		if !ma[n] {
			added = append(added, n)
		}
	}
	for n := range ma {
		if !mb[n] {
			removed = append(removed, n)
		}
	}
	sort.Ints(added)
	sort.Ints(removed)
	return added, removed
}

// page compares a page's dictionary: only its annotations may change.
func (c *comparison) page(num int, old, nw pdf.Dict) []change {
	page := c.rb.pageOf[num]
	keys := changedKeys(old, nw)
	if len(keys) == 1 && keys[0] == "Annots" {
		arrA, _ := c.a.Array(old["Annots"])
		arrB, _ := c.b.Array(nw["Annots"])
		return c.annotsDiff(num, page, arrA, arrB)
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = "/" + string(k)
	}
	return []change{other(num, page, "page dictionary changed: "+strings.Join(names, ", "))}
}

// annotsDiff classifies the annotations a page gains and loses. Objects
// new or changed in this revision are judged as themselves; an existing,
// unchanged object put on the page is judged here.
func (c *comparison) annotsDiff(num, page int, a, b pdf.Array) []change {
	added, removed := refDiff(a, b)
	var out []change
	for _, n := range added {
		if c.nums[n] {
			continue
		}
		role, ok := c.rb.annot[n]
		if !ok {
			continue
		}
		out = append(out, c.annotation(n, role, nil, role.dict))
	}
	for _, n := range removed {
		role, ok := c.ra.annot[n]
		switch {
		case !ok:
		case role.field != 0:
			out = append(out, other(n, page, "a form field's widget removed from the page"))
		default:
			ch := change{Change: Change{Object: n, Page: page, Class: ClassAnnotations, What: "annotation removed"}}
			drawnAt(&ch, c.a, num, role.dict)
			ch.annot = n
			out = append(out, ch)
		}
	}
	return out
}

// drawnAt records where an annotation is drawn, when it is.
func drawnAt(ch *change, d *pdf.Document, pageRef int, dict pdf.Dict) {
	ch.pageRef = pageRef
	rect, ok := d.BoxOf(dict["Rect"])
	flags := pdf.IntOr(dict["F"], 0)
	sub := dict["Subtype"]
	if !ok || rect.Empty() || flags&(2|32) != 0 || sub == pdf.Name("Popup") || sub == pdf.Name("Link") {
		return
	}
	ch.drawn, ch.rect = true, rect
}

// pageRefOf is the object number of the page an annotation is on.
func pageRefOf(r *roles, page int) int {
	if page < 1 || page > len(r.pages) {
		return 0
	}
	return r.pages[page-1].Ref.Num
}

// annotation classifies an annotation added or changed: a widget as the
// field it belongs to, any other as an annotation.
func (c *comparison) annotation(num int, role annotRole, old, nw pdf.Dict) change {
	if role.field != 0 && role.field != num {
		f := c.rb.field[role.field]
		ch := change{Change: Change{Object: num, Page: role.page}, field: role.field, fieldName: f.name, annot: num}
		switch {
		case old == nil:
			ch.Class, ch.What = ClassOther, "a widget added to form field "+quoteName(f.name)
		case onlyKeys(changedKeys(old, nw), "AP", "AS", "MK"):
			ch.Class, ch.What = c.fieldClass(f), "appearance of form field "+quoteName(f.name)
		default:
			return other(num, role.page, "a widget of form field "+quoteName(f.name)+" changed")
		}
		drawnAt(&ch, c.b, pageRefOf(c.rb, role.page), nw)
		return ch
	}
	ch := change{Change: Change{Object: num, Page: role.page, Class: ClassAnnotations, What: "annotation changed"}, annot: num}
	if old == nil {
		ch.What = fmt.Sprintf("annotation added (/%v)", nw["Subtype"])
	}
	drawnAt(&ch, c.b, pageRefOf(c.rb, role.page), nw)
	return ch
}

// fieldClass is the class of filling or signing field f.
func (c *comparison) fieldClass(f fieldRole) string {
	if !f.signature {
		return ClassForm
	}
	if v, err := c.b.Dict(f.dict["V"]); err == nil && isDocTimestamp(v) {
		return ClassLTV
	}
	return ClassSignature
}

func isDocTimestamp(v pdf.Dict) bool {
	return v["Type"] == pdf.Name("DocTimeStamp") || v["SubFilter"] == pdf.Name("ETSI.RFC3161")
}

func onlyKeys(keys []pdf.Name, allowed ...pdf.Name) bool {
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return false
		}
	}
	return true
}

func quoteName(s string) string { return fmt.Sprintf("%q", s) }

// field classifies a form field added or changed. A signature field may be
// added and signed once; another field may be filled (its value and
// appearance), not added, moved or reshaped.
func (c *comparison) field(num int, old, nw pdf.Dict) []change {
	f := c.rb.field[num]
	role, isWidget := c.rb.annot[num]
	ch := change{Change: Change{Object: num, Page: role.page}, field: num, fieldName: f.name, annot: num}
	keys := changedKeys(old, nw)
	switch {
	case old == nil && f.signature:
		ch.Class, ch.What = c.fieldClass(f), "signature field added: "+quoteName(f.name)
		if ch.Class == ClassLTV {
			ch.What = "document time-stamp added"
		}
	case old == nil:
		ch.Class, ch.What = ClassOther, "form field added: "+quoteName(f.name)
	case f.signature && old["V"] != nil && slices.Contains(keys, "V"):
		return []change{other(num, role.page, "the signature of field "+quoteName(f.name)+" replaced")}
	case f.signature && onlyKeys(keys, "V", "AP", "AS", "MK"):
		ch.Class, ch.What = c.fieldClass(f), "signature field signed: "+quoteName(f.name)
	case !f.signature && onlyKeys(keys, "V", "AP", "AS", "MK", "DA"):
		ch.Class, ch.What = ClassForm, "form field filled in: "+quoteName(f.name)
	default:
		return []change{other(num, role.page, "form field "+quoteName(f.name)+" changed")}
	}
	if isWidget {
		drawnAt(&ch, c.b, pageRefOf(c.rb, role.page), nw)
	}
	return []change{ch}
}

// signatureValue classifies a signature dictionary added or changed: one
// that existed is what an earlier signature signed, and may not change.
func (c *comparison) signatureValue(num int, old, nw pdf.Object) change {
	if old != nil {
		return other(num, 0, "a signature dictionary changed after it was made")
	}
	if d := dictOf(nw); d != nil && isDocTimestamp(d) {
		return change{Change: Change{Object: num, Class: ClassLTV, What: "document time-stamp"}}
	}
	return change{Change: Change{Object: num, Class: ClassSignature, What: "signature"}}
}

// drawing classifies a change to what draws an annotation (its appearance
// streams and their resources) as a change of that annotation.
func (c *comparison) drawing(num, owner int) change {
	role := c.rb.annot[owner]
	ch := change{Change: Change{Object: num, Page: role.page, Class: ClassAnnotations, What: "appearance of an annotation"}, annot: owner}
	if role.field != 0 {
		f := c.rb.field[role.field]
		ch.Class, ch.What, ch.field, ch.fieldName = c.fieldClass(f), "appearance of field "+quoteName(f.name), role.field, f.name
	}
	drawnAt(&ch, c.b, pageRefOf(c.rb, role.page), role.dict)
	return ch
}
