package conform

import (
	"context"
	"fmt"

	"github.com/quire-dev/quire/internal/pdf"
)

// describeAnnotations gives every annotation that has no Contents a
// description (PDF/UA-1 7.18.1): a link says where it leads (7.18.5).
// Widgets are described by their fields, and popups by their parents.
func describeAnnotations(ctx context.Context, d *pdf.Document, cat pdf.Dict) error {
	pages, err := d.PagesContext(ctx)
	if err != nil {
		return fmt.Errorf("conform: %w", err)
	}
	links := newLinkTagger(d, cat)
	for _, p := range pages {
		annots, err := d.Array(p.Dict["Annots"])
		if err != nil {
			continue
		}
		for _, a := range annots {
			ref, ok := a.(pdf.Ref)
			if !ok {
				continue
			}
			annot, err := d.Dict(ref)
			if err != nil {
				continue
			}
			sub, _ := annot["Subtype"].(pdf.Name)
			untagged := sub == "Link" && annot["StructParent"] == nil && links != nil
			described := hasText(d, annot["Contents"]) || sub == "Widget" || sub == "Popup"
			if described && !untagged {
				continue
			}
			fixed := annot.Clone()
			if !described {
				fixed["Contents"] = pdf.TextString(annotationText(d, sub, annot))
			}
			if untagged {
				fixed["StructParent"] = links.tag(ref, p.Ref)
			}
			d.Replace(ref, fixed)
		}
	}
	links.save()
	return nil
}

// linkTagger puts the links that are outside the structure tree (those
// of headers and footers, which LibreOffice leaves out) in it, each in a
// Link element of its own (PDF/UA-1 7.18.5), under the document's first
// element.
type linkTagger struct {
	d          *pdf.Document
	rootRef    pdf.Ref
	root       pdf.Dict
	parentRef  pdf.Ref // the element the links go under
	parent     pdf.Dict
	parentTree pdf.Dict
	treeRef    pdf.Ref // zero when the parent tree is written inline in the root
	next       int     // the next key of the parent tree
	nums       pdf.Array
}

// newLinkTagger returns nil for an untagged document, and for a tree
// whose shape it does not know how to extend.
func newLinkTagger(d *pdf.Document, cat pdf.Dict) *linkTagger {
	rootRef, ok := cat["StructTreeRoot"].(pdf.Ref)
	if !ok {
		return nil
	}
	root, err := d.Dict(rootRef)
	if err != nil {
		return nil
	}
	l := &linkTagger{d: d, rootRef: rootRef, root: root.Clone()}
	kids, err := d.Array(root["K"])
	if err != nil {
		return nil
	}
	if r, ok := root["K"].(pdf.Ref); ok {
		if _, isArr := mustResolve(d, r).(pdf.Array); !isArr {
			kids = pdf.Array{r}
		}
	}
	if len(kids) == 0 {
		return nil
	}
	if l.parentRef, ok = kids[0].(pdf.Ref); !ok {
		return nil
	}
	if l.parent, err = d.Dict(l.parentRef); err != nil {
		return nil
	}
	l.parent = l.parent.Clone()
	l.treeRef, _ = root["ParentTree"].(pdf.Ref)
	if l.parentTree, err = d.Dict(root["ParentTree"]); err != nil {
		return nil
	}
	l.parentTree = l.parentTree.Clone()
	next, hasNext := root["ParentTreeNextKey"].(pdf.Int)
	if !hasNext {
		next = pdf.Int(maxKey(d, l.parentTree, 0) + 1)
	}
	l.next = int(next)
	return l
}

func mustResolve(d *pdf.Document, o pdf.Object) pdf.Object {
	v, err := d.Resolve(o)
	if err != nil {
		return nil
	}
	return v
}

// maxKey returns the largest key of a number tree.
func maxKey(d *pdf.Document, node pdf.Dict, depth int) int {
	best := -1
	if nums, err := d.Array(node["Nums"]); err == nil {
		for i := 0; i < len(nums); i += 2 {
			if k, ok := nums[i].(pdf.Int); ok && int(k) > best {
				best = int(k)
			}
		}
	}
	if depth > 20 {
		return best
	}
	if kids, err := d.Array(node["Kids"]); err == nil {
		for _, k := range kids {
			if kid, err := d.Dict(k); err == nil {
				best = max(best, maxKey(d, kid, depth+1))
			}
		}
	}
	return best
}

// tag adds a Link element for the annotation annot on page, and returns
// the annotation's key in the parent tree.
func (l *linkTagger) tag(annot, page pdf.Ref) pdf.Int {
	elem := l.d.Add(pdf.Dict{"Type": pdf.Name("StructElem"), "S": pdf.Name("Link"), "P": l.parentRef, "Pg": page,
		"K": pdf.Dict{"Type": pdf.Name("OBJR"), "Obj": annot, "Pg": page}})
	kids, err := l.d.Array(l.parent["K"])
	if err != nil || l.parent["K"] == nil {
		kids = nil
	}
	if _, single := l.parent["K"].(pdf.Int); single {
		kids = pdf.Array{l.parent["K"]}
	}
	if r, ok := l.parent["K"].(pdf.Ref); ok {
		if _, isArr := mustResolve(l.d, r).(pdf.Array); !isArr {
			kids = pdf.Array{r}
		}
	}
	l.parent["K"] = append(append(pdf.Array{}, kids...), elem)
	key := pdf.Int(l.next)
	l.next++
	l.nums = append(l.nums, key, elem)
	return key
}

// save writes the changed root, parent element and parent tree.
func (l *linkTagger) save() {
	if l == nil || len(l.nums) == 0 {
		return
	}
	if _, flat := l.parentTree["Nums"]; flat {
		nums, _ := l.d.Array(l.parentTree["Nums"])
		l.parentTree["Nums"] = append(append(pdf.Array{}, nums...), l.nums...)
	} else {
		kids, _ := l.d.Array(l.parentTree["Kids"])
		leaf := l.d.Add(pdf.Dict{"Nums": l.nums, "Limits": pdf.Array{l.nums[0], l.nums[len(l.nums)-2]}})
		l.parentTree["Kids"] = append(append(pdf.Array{}, kids...), leaf)
	}
	if l.treeRef != (pdf.Ref{}) {
		l.d.Replace(l.treeRef, l.parentTree)
	} else {
		l.root["ParentTree"] = l.parentTree
	}
	l.root["ParentTreeNextKey"] = pdf.Int(l.next)
	l.d.Replace(l.rootRef, l.root)
	l.d.Replace(l.parentRef, l.parent)
}

// annotationText describes an annotation of type sub.
func annotationText(d *pdf.Document, sub pdf.Name, annot pdf.Dict) string {
	if sub != "Link" {
		return string(sub) + " annotation"
	}
	action, err := d.Dict(annot["A"])
	if err == nil {
		if uri, err := d.Resolve(action["URI"]); err == nil {
			if s, ok := uri.(pdf.String); ok && len(s) > 0 {
				return "Link to " + string(s)
			}
		}
	}
	return "Link to another place in this document"
}
