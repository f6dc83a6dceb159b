package pdftools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestBookmarksWrittenReadBack: set-bookmarks replaces the outline (pages
// in any order, titles repeated, non-ASCII, nested); bookmarks reads the
// same tree back, qpdf finds the file sound and reads the same outline.
func TestBookmarksWrittenReadBack(t *testing.T) {
	t.Parallel()
	doc := pdftest.Generated(3, false, 0)
	if got := readOutline(t, doc); len(got) != 0 {
		t.Errorf("bookmarks of a PDF without an outline: %+v, want none", got)
	}
	first := []Bookmark{{Title: "Old", Page: 1}}
	want := []Bookmark{
		{Title: "Appendix", Page: 3},
		{Title: "Résumé — 概要", Page: 1, Children: []Bookmark{{Title: "Summary", Page: 2}, {Title: "Summary", Page: 1}}},
		{Title: "Summary", Page: 2},
	}
	once := do(t, Request{Op: OpSetBookmarks, Files: one("a.pdf", doc), Bookmarks: first}).Data
	out := do(t, Request{Op: OpSetBookmarks, Files: one("a.pdf", once), Bookmarks: want}).Data
	qpdfClean(t, out)
	if got := readOutline(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("bookmarks read back: %+v, want %+v", got, want)
	}
	if n := pages(t, out); n != 3 {
		t.Errorf("%d pages, want 3", n)
	}
	var q struct {
		Outlines []struct {
			Title string `json:"title"`
			Page  int    `json:"destpageposfrom1"`
			Kids  []struct {
				Title string `json:"title"`
				Page  int    `json:"destpageposfrom1"`
			} `json:"kids"`
		} `json:"outlines"`
	}
	if err := json.Unmarshal([]byte(tool(t, out, "qpdf", "--json", "--json-key=outlines")), &q); err != nil {
		t.Fatal(err)
	}
	if len(q.Outlines) != 3 || q.Outlines[1].Title != want[1].Title || q.Outlines[0].Page != 3 || len(q.Outlines[1].Kids) != 2 || q.Outlines[1].Kids[1].Page != 1 {
		t.Errorf("qpdf reads the outline as %+v, want %+v", q.Outlines, want)
	}
}

func readOutline(t *testing.T, doc []byte) []Bookmark {
	t.Helper()
	res := do(t, Request{Op: OpBookmarks, Files: one("a.pdf", doc)})
	var bms []Bookmark
	if err := json.Unmarshal(res.Data, &bms); err != nil || res.ContentType != TypeJSON {
		t.Fatalf("bookmarks: %v, %s %q", err, res.ContentType, res.Data)
	}
	return bms
}

// TestBookmarksBounds: an outline out of bounds is a 400 naming
// bookmarks and the item.
func TestBookmarksBounds(t *testing.T) {
	t.Parallel()
	doc := pdftest.Generated(2, false, 0)
	deep := []Bookmark{{Title: "x", Page: 1}}
	for range MaxBookmarkDepth {
		deep = []Bookmark{{Title: "x", Page: 1, Children: deep}}
	}
	many := make([]Bookmark, MaxBookmarks+1)
	for i := range many {
		many[i] = Bookmark{Title: "x", Page: 1}
	}
	for _, c := range []struct {
		bms  []Bookmark
		want string
	}{
		{nil, "is required"},
		{[]Bookmark{{Title: " ", Page: 1}}, "bookmarks[0].title is required"},
		{[]Bookmark{{Title: "a", Page: 1, Children: []Bookmark{{Title: "b", Page: 0}}}}, "bookmarks[0].children[0].page must be 1 or more"},
		{[]Bookmark{{Title: strings.Repeat("a", MaxBookmarkTitle+1), Page: 1}}, "longer than 500 bytes"},
		{[]Bookmark{{Title: "a\x00", Page: 1}}, "control characters"},
		{deep, "deeper than 16 levels"},
		{many, "at most 1000 bookmarks"},
		{[]Bookmark{{Title: "a", Page: 1}, {Title: "b", Page: 3}}, `page 3, past the last page of "a.pdf" (2)`},
	} {
		c2, err := code(t, Request{Op: OpSetBookmarks, Files: one("a.pdf", doc), Bookmarks: c.bms})
		qe, _ := asClientError(err)
		if c2 != quire.CodeValidation || len(qe.Details) != 1 || qe.Details[0].Field != "bookmarks" || !strings.Contains(qe.Details[0].Issue, c.want) {
			t.Errorf("%.60v: %s %v, want a validation error on bookmarks: %s", c.bms, c2, err, c.want)
		}
	}
}
