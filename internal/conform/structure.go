package conform

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/quire-dev/quire/internal/pdf"
)

// element is a structure element met in document order, with what the
// repairs need to know of it.
type element struct {
	ref    pdf.Ref // zero for an element written inline, which is left as it is
	dict   pdf.Dict
	typ    string   // its standard type, through the role map
	page   pdf.Ref  // the page its content is on, inherited from its ancestors
	parent *element // nil under the root
	kids   pdf.Object
	root   pdf.Object // the structure tree root, for its role map
}

// maxElements bounds the structure elements read: an engine's tree is
// as large as the document, a hostile one is not the input here.
const maxElements = 1 << 20

// structure returns the structure elements of d in document order, nil
// for an untagged document.
func structure(ctx context.Context, d *pdf.Document, cat pdf.Dict) ([]*element, error) {
	root, err := d.Dict(cat["StructTreeRoot"])
	if err != nil {
		return nil, nil
	}
	roles, _ := d.Dict(root["RoleMap"])
	var out []*element
	seen := map[int]bool{}
	var walk func(k pdf.Object, parent *element, page pdf.Ref, depth int) error
	walk = func(k pdf.Object, parent *element, page pdf.Ref, depth int) error {
		if depth > 100 || len(out) > maxElements {
			return fmt.Errorf("conform: the structure tree is too deep or too large")
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ref, isRef := k.(pdf.Ref)
		if isRef {
			if seen[ref.Num] {
				return nil
			}
			seen[ref.Num] = true
		}
		o, err := d.Resolve(k)
		if err != nil {
			return nil // a dangling reference: nothing to repair there
		}
		switch v := o.(type) {
		case pdf.Array:
			for _, c := range v {
				if err := walk(c, parent, page, depth+1); err != nil {
					return err
				}
			}
		case pdf.Dict:
			if _, isElem := v["S"].(pdf.Name); !isElem {
				return nil // a marked-content or object reference
			}
			if pg, ok := v["Pg"].(pdf.Ref); ok {
				page = pg
			}
			e := &element{dict: v, typ: standardType(roles, v["S"]), page: page, parent: parent, kids: v["K"], root: cat["StructTreeRoot"]}
			if isRef {
				e.ref = ref
			}
			out = append(out, e)
			return walk(v["K"], e, page, depth+1)
		}
		return nil
	}
	return out, walk(root["K"], nil, pdf.Ref{}, 0)
}

// standardType follows the role map from s to a standard structure type.
func standardType(roles pdf.Dict, s pdf.Object) string {
	n, _ := s.(pdf.Name)
	for range 8 {
		next, ok := roles[n].(pdf.Name)
		if !ok || next == n {
			break
		}
		n = next
	}
	return string(n)
}

// headingLevel returns n for Hn (1 to 6), 0 for any other type.
func headingLevel(typ string) int {
	if len(typ) == 2 && typ[0] == 'H' && typ[1] >= '1' && typ[1] <= '6' {
		return int(typ[1] - '0')
	}
	return 0
}

// repairStructure makes d's structure tree meet PDF/UA-1: headings in
// order (7.4.2: the first is H1, none skips a level; a heading that does
// is raised to the level after the one before it), and every figure
// with alternative text (7.3), or else an artifact when decorative says
// the caller takes the images without it for decoration.
func repairStructure(ctx context.Context, d *pdf.Document, cat pdf.Dict, decorative bool) error {
	elems, err := structure(ctx, d, cat)
	if err != nil {
		return err
	}
	prev := 0
	var bare []*element
	for _, e := range elems {
		if lvl := headingLevel(e.typ); lvl != 0 {
			if lvl > prev+1 && e.ref != (pdf.Ref{}) {
				lvl = prev + 1
				fixed := e.dict.Clone()
				fixed["S"] = pdf.Name("H" + strconv.Itoa(lvl))
				d.Replace(e.ref, fixed)
			}
			prev = lvl
		}
		if e.typ == "Figure" && !hasText(d, e.dict["Alt"]) && !hasText(d, e.dict["ActualText"]) {
			bare = append(bare, e)
		}
	}
	if len(bare) > 0 && !decorative {
		return fmt.Errorf("%w: %s", ErrMissingAlt, describe(d, bare))
	}
	if len(bare) > 0 {
		if err := makeArtifacts(ctx, d, bare); err != nil {
			return err
		}
	}
	for _, e := range elems {
		if e.typ == "LI" && e.ref != (pdf.Ref{}) {
			wrapListBody(d, e)
		}
	}
	return nil
}

// wrapListBody moves the elements of a list item that are neither its
// label nor its body into a body of their own (PDF/UA-1 7.2: an LI holds
// Lbl and LBody only); Chromium puts an item's link right in the LI.
func wrapListBody(d *pdf.Document, li *element) {
	item, err := d.Dict(li.ref) // fresh: an earlier repair may have changed it
	if err != nil {
		return
	}
	kids, err := d.Array(item["K"])
	if err != nil {
		return
	}
	roles := pdf.Dict{}
	if root, err := d.Dict(li.root); err == nil {
		roles, _ = d.Dict(root["RoleMap"])
	}
	var keep, move pdf.Array
	for _, k := range kids {
		ref, isRef := k.(pdf.Ref)
		kid, err := d.Dict(k)
		if !isRef || err != nil {
			keep = append(keep, k)
			continue
		}
		if _, isElem := kid["S"].(pdf.Name); !isElem {
			keep = append(keep, k)
			continue
		}
		switch standardType(roles, kid["S"]) {
		case "Lbl", "LBody":
			keep = append(keep, k)
		default:
			move = append(move, ref)
		}
	}
	if len(move) == 0 {
		return
	}
	lbody := pdf.Dict{"Type": pdf.Name("StructElem"), "S": pdf.Name("LBody"), "P": li.ref, "K": move}
	if pg, ok := item["Pg"].(pdf.Ref); ok {
		lbody["Pg"] = pg
	}
	body := d.Add(lbody)
	for _, m := range move {
		kid, _ := d.Dict(m) // read above
		kid = kid.Clone()
		kid["P"] = body
		d.Replace(m.(pdf.Ref), kid)
	}
	item = item.Clone()
	item["K"] = append(keep, body)
	d.Replace(li.ref, item)
}

func hasText(d *pdf.Document, o pdf.Object) bool { return textOf(d, o) != "" }

// describe names the figures by page and order on the page ("page 2,
// image 1").
func describe(d *pdf.Document, figs []*element) string {
	pageNo := map[int]int{}
	if pages, err := d.Pages(); err == nil {
		for i, p := range pages {
			pageNo[p.Ref.Num] = i + 1
		}
	}
	count := map[int]int{}
	names := make([]string, 0, len(figs))
	for _, f := range figs {
		n := pageNo[f.page.Num]
		count[n]++
		if n == 0 {
			names = append(names, fmt.Sprintf("image %d (page unknown)", count[n]))
			continue
		}
		names = append(names, fmt.Sprintf("page %d, image %d", n, count[n]))
	}
	const most = 20
	if len(names) > most {
		names = append(names[:most], fmt.Sprintf("and %d more", len(names)-most))
	}
	return strings.Join(names, "; ")
}

// makeArtifacts marks the content of figs as artifacts: their marked
// content becomes /Artifact in the pages' content streams, and the
// figures leave the structure tree.
func makeArtifacts(ctx context.Context, d *pdf.Document, figs []*element) error {
	mcids := map[int]map[int]bool{} // page object number: MCIDs to unmark
	for _, f := range figs {
		collectMCIDs(d, f.kids, f.page, mcids, 0)
	}
	pages, err := d.PagesContext(ctx)
	if err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	for _, p := range pages {
		if ids := mcids[p.Ref.Num]; len(ids) > 0 {
			if err := unmark(d, p, ids); err != nil {
				return err
			}
		}
	}
	for _, f := range figs {
		detach(d, f)
	}
	return nil
}

// collectMCIDs adds the marked-content identifiers under k, by page.
func collectMCIDs(d *pdf.Document, k pdf.Object, page pdf.Ref, out map[int]map[int]bool, depth int) {
	if depth > 100 {
		return
	}
	add := func(pg pdf.Ref, id int) {
		if out[pg.Num] == nil {
			out[pg.Num] = map[int]bool{}
		}
		out[pg.Num][id] = true
	}
	o, err := d.Resolve(k)
	if err != nil {
		return
	}
	switch v := o.(type) {
	case pdf.Int:
		add(page, int(v))
	case pdf.Array:
		for _, c := range v {
			collectMCIDs(d, c, page, out, depth+1)
		}
	case pdf.Dict:
		if pg, ok := v["Pg"].(pdf.Ref); ok {
			page = pg
		}
		if id, ok := v["MCID"].(pdf.Int); ok {
			add(page, int(id))
		} else if _, isElem := v["S"].(pdf.Name); isElem {
			collectMCIDs(d, v["K"], page, out, depth+1)
		}
	}
}

// markedContent matches the start of a marked-content sequence that has
// an MCID in an inline property list.
var markedContent = regexp.MustCompile(`/[^\s/<>\[\]()]+\s*<<[^<>]*?/MCID\s+(\d+)[^<>]*>>\s*BDC`)

// unmark rewrites the content streams of page p, turning the marked
// content with the identifiers ids into artifacts.
func unmark(d *pdf.Document, p pdf.PageObject, ids map[int]bool) error {
	contents := p.Dict["Contents"]
	refs := []pdf.Object{contents}
	if arr, err := d.Array(contents); err == nil {
		refs = arr
	}
	for _, r := range refs {
		ref, ok := r.(pdf.Ref)
		if !ok {
			continue
		}
		o, err := d.Resolve(ref)
		st, isStream := o.(*pdf.Stream)
		if err != nil || !isStream {
			continue
		}
		data, err := d.Decode(st)
		if err != nil {
			return fmt.Errorf("conform: page content: %w", err)
		}
		changed := false
		data = markedContent.ReplaceAllFunc(data, func(m []byte) []byte {
			id, _ := strconv.Atoi(string(markedContent.FindSubmatch(m)[1])) // digits only
			if !ids[id] {
				return m
			}
			changed = true
			return []byte("/Artifact BMC")
		})
		if changed {
			dict := st.Dict.Clone()
			delete(dict, "DecodeParms")
			dict["Filter"] = pdf.Name("FlateDecode")
			d.Replace(ref, &pdf.Stream{Dict: dict, Data: pdf.Deflate(data)})
		}
	}
	return nil
}

// detach removes f from its parent's kids.
func detach(d *pdf.Document, f *element) {
	if f.parent == nil || f.parent.ref == (pdf.Ref{}) || f.ref == (pdf.Ref{}) {
		return
	}
	parent := f.parent.dict.Clone()
	switch k := parent["K"].(type) {
	case pdf.Ref:
		if k == f.ref {
			delete(parent, "K")
		}
	case pdf.Array:
		kept := pdf.Array{}
		for _, c := range k {
			if c != pdf.Object(f.ref) {
				kept = append(kept, c)
			}
		}
		parent["K"] = kept
	}
	f.parent.dict = parent
	d.Replace(f.parent.ref, parent)
}
