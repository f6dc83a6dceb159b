package gotenberg

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/pdftools"
)

// Gotenberg's bookmarks: 8.x reads them at /forms/pdfengines/bookmarks/read
// and writes them at /forms/pdfengines/bookmarks/write, items of {"title",
// "page", "children"}; 9.x reads them at /forms/pdf/bookmarks and writes
// them at /forms/pdf/set-bookmarks (and as the stage set-bookmarks), items
// of {"title", "pageNumber", "children"}. quire's PDF tools read and
// write the outline (pdftools.OpBookmarks, OpSetBookmarks).

// pageKey is the name of a bookmark's page in each version's JSON.
const (
	pageKey8 = "page"
	pageKey9 = "pageNumber"
)

// bookmarkOf8 is a bookmark as 8.x answers it: children always listed.
func bookmarkOf8(bm pdftools.Bookmark) map[string]any {
	children := []map[string]any{}
	for _, c := range bm.Children {
		children = append(children, bookmarkOf8(c))
	}
	return map[string]any{"title": bm.Title, pageKey8: bm.Page, "children": children}
}

// bookmarkOf9 is a bookmark as 9.x answers it: children when there are.
func bookmarkOf9(bm pdftools.Bookmark) map[string]any {
	out := map[string]any{"title": bm.Title, pageKey9: bm.Page}
	if len(bm.Children) > 0 {
		children := make([]map[string]any, len(bm.Children))
		for i, c := range bm.Children {
			children[i] = bookmarkOf9(c)
		}
		out["children"] = children
	}
	return out
}

// bookmarksAs reads the answer of the bookmarks operation, each item
// shaped by shape.
func bookmarksAs(shape func(pdftools.Bookmark) map[string]any) func(pdftools.Result) (any, int, error) {
	return func(res pdftools.Result) (any, int, error) {
		var bms []pdftools.Bookmark
		if err := json.Unmarshal(res.Data, &bms); err != nil {
			return nil, 0, err
		}
		out := make([]map[string]any, len(bms))
		for i, bm := range bms {
			out[i] = shape(bm)
		}
		return out, res.Pages, nil
	}
}

// setBookmarks9 maps 9.x's set-bookmarks: bookmarks, a JSON list of
// {"title", "pageNumber", "children"}, replaces each PDF's outline.
func setBookmarks9(v *values, req *pdftools.Request) {
	var raw []json.RawMessage
	if err := decodeStrict(v.str("bookmarks"), &raw); err != nil || len(raw) == 0 {
		v.bad = append(v.bad, quire.Detail{Field: "bookmarks",
			Issue: `is required: a JSON list of bookmarks, such as [{"title":"Summary","pageNumber":1,"children":[]}]`})
		return
	}
	req.Bookmarks = parseBookmarks(v, raw, pageKey9)
}

// parseBookmarks reads the items of raw, their page named pageKey; what
// is wrong is added to v's errors, naming bookmarks and the item.
func parseBookmarks(v *values, raw []json.RawMessage, pageKey string) []pdftools.Bookmark {
	bms, issue := bookmarkItems(raw, pageKey, "bookmarks", 1)
	if issue != "" {
		v.bad = append(v.bad, quire.Detail{Field: "bookmarks", Issue: "is invalid: " + issue})
	}
	return bms
}

// bookmarkItems reads raw (items at path, at depth), or says what is
// wrong with them. Deeper than pdftools takes, it reads no further.
func bookmarkItems(raw []json.RawMessage, pageKey, path string, depth int) ([]pdftools.Bookmark, string) {
	if depth > pdftools.MaxBookmarkDepth {
		return nil, fmt.Sprintf("%s is nested deeper than %d levels", path, pdftools.MaxBookmarkDepth)
	}
	bms := make([]pdftools.Bookmark, len(raw))
	for i, r := range raw {
		at := fmt.Sprintf("%s[%d]", path, i)
		var item map[string]json.RawMessage
		if err := decodeStrict(string(r), &item); err != nil {
			return nil, at + ` must be an object: {"title", "` + pageKey + `", "children"}`
		}
		for _, k := range slices.Sorted(maps.Keys(item)) {
			var err error
			switch k {
			case "title":
				err = json.Unmarshal(item[k], &bms[i].Title)
			case pageKey:
				err = json.Unmarshal(item[k], &bms[i].Page)
			case "children":
				var kids []json.RawMessage
				if err = json.Unmarshal(item[k], &kids); err == nil {
					var issue string
					if bms[i].Children, issue = bookmarkItems(kids, pageKey, at+".children", depth+1); issue != "" {
						return nil, issue
					}
				}
			default:
				return nil, fmt.Sprintf("%s.%s is not supported by quire: a bookmark has a title, a %s and children", at, k, pageKey)
			}
			if err != nil {
				return nil, fmt.Sprintf("%s.%s is of the wrong type", at, k)
			}
		}
		if _, ok := item[pageKey]; !ok {
			return nil, fmt.Sprintf("%s.%s is required", at, pageKey)
		}
	}
	return bms, ""
}

// bookmarks8 reads 8.x's bookmarks field: one list for every file, or
// an object of lists by file name (a file it does not name is answered
// as it is). names are the files uploaded.
func bookmarks8(v *values, names []string) (all []pdftools.Bookmark, byName map[string][]pdftools.Bookmark) {
	field := v.str("bookmarks")
	var list []json.RawMessage
	var lists map[string][]json.RawMessage
	switch {
	case strings.HasPrefix(field, "[") && decodeStrict(field, &list) == nil && len(list) > 0:
		return parseBookmarks(v, list, pageKey8), nil
	case strings.HasPrefix(field, "{") && decodeStrict(field, &lists) == nil:
		byName = map[string][]pdftools.Bookmark{}
		for _, name := range slices.Sorted(maps.Keys(lists)) {
			if !slices.Contains(names, name) {
				v.bad = append(v.bad, quire.Detail{Field: "bookmarks", Issue: fmt.Sprintf("is invalid: it names '%s', which is not a file uploaded", name)})
				continue
			}
			byName[name] = parseBookmarks(v, lists[name], pageKey8)
		}
		return nil, byName
	}
	v.bad = append(v.bad, quire.Detail{Field: "bookmarks",
		Issue: `is required: a JSON list of bookmarks, such as [{"title":"Chapter 1","page":1,"children":[]}], or an object of such lists by file name`})
	return nil, nil
}

// mergeOutlineFields are the fields of 8.x's merge that set the merged
// PDF's bookmarks.
var mergeOutlineFields = []string{"bookmarks", "autoIndexBookmarks"}

// mergeOutline is the outline a merge's form asks for the merged PDF:
// bookmarks as a list, as it is; as lists by file name, each list's pages
// moved by the pages of the files before its own; autoIndexBookmarks, the
// files' own bookmarks moved so. nil when the form asks for none, or the
// route is not merge.
func (a *API) mergeOutline(ctx context.Context, op string, f *form) ([]pdftools.Bookmark, error) {
	auto := f.bool("autoIndexBookmarks")
	if op != pdftools.OpMerge || (!f.has("bookmarks") && !auto) {
		return nil, f.err()
	}
	names := make([]string, len(f.files))
	for i, file := range f.files {
		names[i] = file.Name
	}
	var all []pdftools.Bookmark
	var byName map[string][]pdftools.Bookmark
	if f.has("bookmarks") {
		all, byName = bookmarks8(&f.values, names)
	}
	if auto && f.has("bookmarks") {
		f.bad = append(f.bad, quire.Detail{Field: "autoIndexBookmarks", Issue: "is not supported by quire with 'bookmarks': give one or the other"})
	}
	if err := f.err(); err != nil || all != nil {
		return all, err
	}
	var outline []pdftools.Bookmark
	offset := 0
	for _, file := range f.files {
		res, err := a.d.PDFTools.Do(ctx, pdftools.Request{Op: pdftools.OpBookmarks, Files: []pdftools.File{{Name: file.Name, Data: file.Data}}})
		if err != nil {
			return nil, err
		}
		own, set := byName[file.Name]
		if auto {
			if err := json.Unmarshal(res.Data, &own); err != nil {
				return nil, err
			}
			set = true
		}
		if set {
			outline = append(outline, shifted(own, offset)...)
		}
		offset += res.Pages
	}
	return outline, nil
}

// shifted is bms with their pages moved by offset.
func shifted(bms []pdftools.Bookmark, offset int) []pdftools.Bookmark {
	out := make([]pdftools.Bookmark, len(bms))
	for i, bm := range bms {
		out[i] = pdftools.Bookmark{Title: bm.Title, Page: bm.Page + offset, Children: shifted(bm.Children, offset)}
	}
	return out
}

// writeBookmarks8 is 8.x's /forms/pdfengines/bookmarks/write.
func (a *API) writeBookmarks8(w http.ResponseWriter, r *http.Request) {
	f, err := a.readForm(r, spec{served: []string{"bookmarks"}, unsupported: pdfDefaults, why: pdfWhy}, a.pdfLimits())
	if err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	names := make([]string, len(f.files))
	for i, file := range f.files {
		names[i] = file.Name
	}
	all, byName := bookmarks8(&f.values, names)
	if len(f.files) == 0 {
		f.bad = append(f.bad, quire.Detail{Field: "files", Issue: "is required: the PDFs"})
	}
	if err := f.err(); err != nil {
		httpapi.Fail(w, r, err)
		return
	}
	var outs [][]byte
	documents, pages := 0, 0
	for _, file := range f.files {
		bms, set := byName[file.Name]
		if all != nil {
			bms, set = all, true
		}
		if !set || len(bms) == 0 {
			outs = append(outs, file.Data) // not named, or named with no bookmarks: as it is
			continue
		}
		_, out, d, p, err := a.apply(r.Context(), pdftools.Request{Op: pdftools.OpSetBookmarks, Bookmarks: bms}, []httpapi.Upload{file}, nil)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		outs, documents, pages = append(outs, out[0]), documents+d, pages+p
	}
	count(r.Context(), documents, 0, int64(pages))
	if err := send(w, r, names, outs, "pdf", "application/pdf"); err != nil {
		httpapi.Fail(w, r, err)
	}
}
