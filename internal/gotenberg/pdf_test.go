package gotenberg_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestGotenbergPDF runs the PDF routes that need no conversion engine on
// a server of their own.
func TestGotenbergPDF(t *testing.T) {
	e := start(t, apitest.Config{})
	t.Run("bookmarksWrittenAndReadInEachVersionsShape", func(t *testing.T) { bookmarksWrittenAndReadInEachVersionsShape(t, e) })
	t.Run("bookmarksRefusedByField", func(t *testing.T) { bookmarksRefusedByField(t, e) })
}

// readJSON posts files to a read route and decodes its JSON answer.
func (e *env) readJSON(t *testing.T, path string, files ...part) map[string]any {
	t.Helper()
	a := e.post(t, path, e.bearer(), files...)
	var got map[string]any
	if a.status != http.StatusOK || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") || json.Unmarshal(a.body, &got) != nil {
		t.Fatalf("%s: %d %s %.300q, want JSON", path, a.status, a.header.Get("Content-Type"), a.body)
	}
	return got
}

// decoded is the JSON s decoded, to compare answers with.
func decoded(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func bookmarksWrittenAndReadInEachVersionsShape(t *testing.T, e *env) {
	doc := pdftest.Generated(3, false, 0)
	set9 := `[{"title":"Summary","pageNumber":1,"children":[{"title":"Figures","pageNumber":2}]},{"title":"Appendix","pageNumber":3}]`
	out := e.post(t, "/forms/pdf/set-bookmarks", e.bearer(), file("report.pdf", doc), field("bookmarks", set9)).pdf(t)
	if got := e.readJSON(t, "/forms/pdf/bookmarks", file("report.pdf", out)); !reflect.DeepEqual(got["report.pdf"], decoded(t, set9)) {
		t.Errorf("9.x bookmarks: %v, want %s", got, set9)
	}
	want8 := `[{"title":"Summary","page":1,"children":[{"title":"Figures","page":2,"children":[]}]},{"title":"Appendix","page":3,"children":[]}]`
	if got := e.readJSON(t, "/forms/pdfengines/bookmarks/read", file("report.pdf", out), file("plain.pdf", doc)); !reflect.DeepEqual(got["report.pdf"], decoded(t, want8)) ||
		!reflect.DeepEqual(got["plain.pdf"], []any{}) {
		t.Errorf("8.x bookmarks: %v, want report.pdf: %s, plain.pdf: []", got, want8)
	}
	// 8.x: one list for every file, or lists by file name (a file not
	// named is answered as it is).
	byName := `{"a.pdf":[{"title":"Two","page":2,"children":[]}]}`
	parts := e.post(t, "/forms/pdfengines/bookmarks/write", e.bearer(), file("a.pdf", doc), file("b.pdf", doc), field("bookmarks", byName)).unzip(t)
	got := e.readJSON(t, "/forms/pdfengines/bookmarks/read", file("a.pdf", parts["a.pdf"]), file("b.pdf", parts["b.pdf"]))
	if !reflect.DeepEqual(got["a.pdf"], decoded(t, byName).(map[string]any)["a.pdf"]) || !reflect.DeepEqual(got["b.pdf"], []any{}) {
		t.Errorf("8.x write by name: %v, want a.pdf's bookmark, none on b.pdf", got)
	}
	one := e.post(t, "/forms/pdfengines/bookmarks/write", e.bearer(), file("a.pdf", out), field("bookmarks", `[{"title":"Only","page":3}]`)).pdf(t)
	if got := e.readJSON(t, "/forms/pdf/bookmarks", file("a.pdf", one)); !reflect.DeepEqual(got["a.pdf"], decoded(t, `[{"title":"Only","pageNumber":3}]`)) {
		t.Errorf("8.x write of a list: %v, want the list only (replacing the former)", got)
	}
	// 9.x's stage set-bookmarks, after a merge.
	piped := e.post(t, "/forms/pdf/pipe", e.bearer(), file("a.pdf", doc), file("b.pdf", pdftest.OnePage("b")),
		field("stages", `[{"op":"merge"},{"op":"set-bookmarks","bookmarks":[{"title":"B","pageNumber":4}]}]`)).pdf(t)
	if got := e.readJSON(t, "/forms/pdf/bookmarks", file("m.pdf", piped)); !reflect.DeepEqual(got["m.pdf"], decoded(t, `[{"title":"B","pageNumber":4}]`)) {
		t.Errorf("stage set-bookmarks: %v, want B on page 4", got)
	}
}

func bookmarksRefusedByField(t *testing.T, e *env) {
	doc := file("report.pdf", pdftest.Generated(3, false, 0))
	for path, cases := range map[string]map[string]string{
		"/forms/pdf/set-bookmarks": {
			``:                                 "form field 'bookmarks' is required",
			`{`:                                "form field 'bookmarks' is required: a JSON list",
			`[]`:                               "form field 'bookmarks' is required",
			`[{"pageNumber":1}]`:               "form field 'bookmarks' is invalid: bookmarks[0].title is required",
			`[{"title":"a"}]`:                  "bookmarks[0].pageNumber is required",
			`[{"title":"a","page":1}]`:         "bookmarks[0].page is not supported by quire",
			`[{"title":"a","pageNumber":"1"}]`: "bookmarks[0].pageNumber is of the wrong type",
			`[{"title":"a","pageNumber":9}]`:   `form field 'bookmarks' is invalid: a bookmark opens page 9, past the last page of "report.pdf" (3)`,
			`[{"title":"a","pageNumber":1,"children":[{"title":"","pageNumber":1}]}]`: "bookmarks[0].children[0].title is required",
			`[{"title":"a","pageNumber":1,"color":"red"}]`:                            "bookmarks[0].color is not supported by quire",
		},
		"/forms/pdfengines/bookmarks/write": {
			`{"other.pdf":[{"title":"a","page":1}]}`: "it names 'other.pdf', which is not a file uploaded",
			`[{"title":"a","pageNumber":1}]`:         "bookmarks[0].pageNumber is not supported by quire",
			`"a"`:                                    "form field 'bookmarks' is required",
		},
	} {
		for value, want := range cases {
			form := []part{doc}
			if value != "" {
				form = append(form, field("bookmarks", value))
			}
			if msg := e.post(t, path, e.bearer(), form...).plainError(t, 400, want); !strings.HasPrefix(msg, "Invalid form data: form field 'bookmarks' ") {
				t.Errorf("%s bookmarks=%s: %q, want Gotenberg's message naming the field", path, value, msg)
			}
		}
	}
	long := `[{"title":"` + strings.Repeat("a", 501) + `","pageNumber":1}]`
	e.post(t, "/forms/pdf/set-bookmarks", e.bearer(), doc, field("bookmarks", long)).plainError(t, 400, "bookmarks[0].title is longer than 500 bytes")
}
