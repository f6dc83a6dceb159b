package pdftools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/quire-dev/quire"
)

// Bookmark is an item of a document's outline: its title, the page it
// opens (1-based) and the items under it.
type Bookmark struct {
	Title    string     `json:"title"`
	Page     int        `json:"page"`
	Children []Bookmark `json:"children,omitempty"`
}

// Bounds of the bookmarks set-bookmarks writes.
const (
	MaxBookmarks     = 1000 // items in all, at every level
	MaxBookmarkDepth = 16   // levels, the top one included
	MaxBookmarkTitle = 500  // bytes of UTF-8
)

// validateBookmarks checks the outline of set-bookmarks, naming the first
// bad item by its path ("bookmarks[0].children[1].title").
func (r *Request) validateBookmarks(bad func(string, string, ...any)) {
	if len(r.Bookmarks) == 0 {
		bad("bookmarks", "is required: a list of 1 to %d bookmarks, each with a title and a page", MaxBookmarks)
		return
	}
	n := 0
	if issue := checkBookmarks(r.Bookmarks, "bookmarks", 1, &n); issue != "" {
		bad("bookmarks", "is invalid: %s", issue)
	}
}

// checkBookmarks is what is wrong with bms at depth (counting the items
// in n), or "".
func checkBookmarks(bms []Bookmark, path string, depth int, n *int) string {
	if depth > MaxBookmarkDepth {
		return fmt.Sprintf("%s is nested deeper than %d levels", path, MaxBookmarkDepth)
	}
	for i, bm := range bms {
		at := fmt.Sprintf("%s[%d]", path, i)
		if *n++; *n > MaxBookmarks {
			return fmt.Sprintf("at most %d bookmarks in all", MaxBookmarks)
		}
		switch {
		case strings.TrimSpace(bm.Title) == "":
			return at + ".title is required"
		case len(bm.Title) > MaxBookmarkTitle:
			return fmt.Sprintf("%s.title is longer than %d bytes", at, MaxBookmarkTitle)
		case !utf8.ValidString(bm.Title) || strings.ContainsFunc(bm.Title, unicode.IsControl):
			return at + ".title must be UTF-8 text without control characters"
		case bm.Page < 1:
			return at + ".page must be 1 or more"
		}
		if issue := checkBookmarks(bm.Children, at+".children", depth+1, n); issue != "" {
			return issue
		}
	}
	return ""
}

// lastPage is the highest page of bms, at any level.
func lastPage(bms []Bookmark) int {
	last := 0
	for _, bm := range bms {
		last = max(last, bm.Page, lastPage(bm.Children))
	}
	return last
}

// bookmarks answers the outline of the PDF as JSON.
func (s *Service) bookmarks(ctx context.Context, in *input, req Request) (Result, error) {
	a, err := s.inWorker(ctx, task{Kind: taskBookmarks, Inputs: [][]byte{in.doc.Bytes()}, Req: req}, []string{in.name})
	if err != nil {
		return Result{}, err
	}
	return Result{Data: a.Data, ContentType: TypeJSON, Documents: 1, Pages: in.pages}, nil
}

// setBookmarks replaces the outline of the PDF by the request's.
func (s *Service) setBookmarks(ctx context.Context, in *input, req Request) (Result, error) {
	if last := lastPage(req.Bookmarks); last > in.pages {
		return Result{}, quire.Invalid("The PDF set-bookmarks request is not valid.", quire.Detail{Field: "bookmarks",
			Issue: fmt.Sprintf("is invalid: a bookmark opens page %d, past the last page of %q (%d)", last, baseName(in.name), in.pages)})
	}
	return s.rewrite(ctx, taskSetBookmarks, in, req)
}

// readBookmarks reads the outline with pdfcpu, in the worker: items
// without a title, or that open no page of the document (a link to
// another file, a script), are left out with the items under them.
func (t task) readBookmarks() ([]byte, error) {
	pc, err := api.ReadAndValidate(bytes.NewReader(t.Inputs[0]), config())
	if err != nil {
		return nil, err
	}
	bms, err := pdfcpu.Bookmarks(pc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(fromPdfcpu(bms))
}

func fromPdfcpu(bms []pdfcpu.Bookmark) []Bookmark {
	out := make([]Bookmark, len(bms))
	for i, bm := range bms {
		out[i] = Bookmark{Title: bm.Title, Page: bm.PageFrom, Children: fromPdfcpu(bm.Kids)}
	}
	return out
}

// writeBookmarks replaces the outline, in the worker. pdfcpu's own
// (AddBookmarks) is not used: it refuses an item whose page comes before
// the one of the item above it, and it names each destination after its
// title in the document's named destinations, so that two items of the
// same title open the same page. Here each item opens its page directly
// (/Dest [page /Fit]); the former outline, no longer reached from the
// catalog, is dropped.
func (t task) writeBookmarks() ([]byte, error) {
	pc, err := api.ReadAndValidate(bytes.NewReader(t.Inputs[0]), config())
	if err != nil {
		return nil, err
	}
	root, err := pc.Catalog()
	if err != nil {
		return nil, err
	}
	outlines := types.Dict{"Type": types.Name("Outlines")}
	ref, err := pc.IndRefForNewObject(outlines)
	if err != nil {
		return nil, err
	}
	first, last, count, err := outlineItems(pc, t.Req.Bookmarks, *ref)
	if err != nil {
		return nil, err
	}
	outlines["First"], outlines["Last"], outlines["Count"] = *first, *last, types.Integer(count)
	root["Outlines"] = *ref
	// The former outline is left behind: renumbered without it, the file
	// has no number below /Size that is not written (compact).
	if err := compact(pc); err != nil {
		return nil, err
	}
	return written(func(w *bytes.Buffer) error { return api.WriteContext(pc, w) })
}

// outlineItems adds the items of bms under parent, each open, and
// returns the first and the last, and how many items they show.
func outlineItems(pc *model.Context, bms []Bookmark, parent types.IndirectRef) (first, last *types.IndirectRef, count int, err error) {
	var prev types.Dict
	for _, bm := range bms {
		_, page, _, err := pc.PageDict(bm.Page, false)
		if err != nil {
			return nil, nil, 0, err
		}
		title, err := types.EscapedUTF16String(bm.Title)
		if err != nil {
			return nil, nil, 0, err
		}
		d := types.Dict{"Title": types.StringLiteral(*title), "Parent": parent, "Dest": types.Array{*page, types.Name("Fit")}}
		ref, err := pc.IndRefForNewObject(d)
		if err != nil {
			return nil, nil, 0, err
		}
		if first == nil {
			first = ref
		} else {
			prev["Next"], d["Prev"] = *ref, *last
		}
		count++
		if len(bm.Children) > 0 {
			kFirst, kLast, kCount, err := outlineItems(pc, bm.Children, *ref)
			if err != nil {
				return nil, nil, 0, err
			}
			d["First"], d["Last"], d["Count"] = *kFirst, *kLast, types.Integer(kCount)
			count += kCount
		}
		prev, last = d, ref
	}
	return first, last, count, nil
}
