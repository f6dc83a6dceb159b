package chromium

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
)

// failure is the check err failed, or "".
func failure(t *testing.T, err error) (field, issue string) {
	t.Helper()
	var pf *engine.PageFailure
	switch {
	case err == nil:
		return "", ""
	case !errors.As(err, &pf) || !errors.Is(err, engine.ErrUnprocessable):
		t.Fatalf("%v, want a PageFailure", err)
	}
	return pf.Field, pf.Issue
}

// failOnConsoleExceptions fails a page whose scripts threw an exception
// they did not catch before it was printed, one thrown late by a timer
// included; a page that threw nothing, or whose scripts are off, prints.
func TestFailOnExceptions(t *testing.T) {
	p := sharedPool(t)
	check := engine.PageExtras{FailOnExceptions: true}
	late := engine.PageExtras{FailOnExceptions: true, WaitForExpression: "window.ready === true"}
	for _, c := range []struct {
		doc     string
		scripts bool
		page    engine.PageExtras
		want    string // in the issue; "": prints
	}{
		{`<p>Hello</p><script>throw new Error("Boom")</script>`, true, check, `Uncaught (1:27): Error: Boom`},
		{`<p>Hello</p><script>setTimeout(() => { window.ready = true; throw new Error("Late") }, 50)</script>`, true, late, "Error: Late"},
		{`<p>Hello</p><script>try { throw new Error("Caught") } catch (e) {}</script>`, true, check, ""},
		{`<p>Hello</p><script>throw new Error("Boom")</script>`, true, engine.PageExtras{}, ""},
		{`<p>Hello</p><script>throw new Error("Boom")</script>`, false, check, ""},
	} {
		_, err := p.Convert(context.Background(), html(c.doc), engine.JobOptions{JavaScript: c.scripts, Page: c.page})
		field, issue := failure(t, err)
		if c.want == "" && field != "" || c.want != "" && (field != "failOnConsoleExceptions" || !strings.Contains(issue, c.want)) {
			t.Errorf("%s (scripts %v, %+v): %s %q, want %q", c.doc, c.scripts, c.page, field, issue, c.want)
		}
	}
}

// failOnResourceLoadingFailed fails a page that asked for a file not
// uploaded, or for anything of the network (which quire never loads);
// failOnResourceHttpStatusCodes fails a page whose files were answered
// a status listed (an uploaded file is answered 200), unless from a
// domain ignored.
func TestFailOnResources(t *testing.T) {
	p := sharedPool(t)
	withPic := func(doc string) Page {
		pg := html(doc)
		pg.Assets = []Asset{{Name: "pic.png", Data: pngOf(t, 10, 10)}}
		return pg
	}
	loading := engine.PageExtras{FailOnResourceLoading: true}
	for _, c := range []struct {
		page        Page
		extras      engine.PageExtras
		field, want string // "": prints
	}{
		{withPic(`<img src="pic.png">`), loading, "", ""},
		{withPic(`<img src="pic.png"><img src="missing.png">`), loading, "failOnResourceLoadingFailed", "/missing.png (Image)"},
		{withPic(`<link rel="stylesheet" href="http://127.0.0.1:9/remote.css">`), loading, "failOnResourceLoadingFailed", "http://127.0.0.1:9/remote.css (Stylesheet)"},
		{withPic(`<img src="missing.png">`), engine.PageExtras{}, "", ""},
		{withPic(`<img src="pic.png">`), engine.PageExtras{FailOnResourceStatus: []int{299}}, "failOnResourceHttpStatusCodes", "/pic.png - 200: OK"},
		{withPic(`<img src="pic.png">`), engine.PageExtras{FailOnResourceStatus: []int{200}}, "failOnResourceHttpStatusCodes", "/pic.png - 200: OK"},
		{withPic(`<img src="pic.png"><img src="missing.png">`), engine.PageExtras{FailOnResourceStatus: []int{499, 599}}, "", ""},
		{withPic(`<img src="pic.png">`), engine.PageExtras{FailOnResourceStatus: []int{299}, IgnoreResourceDomains: []string{site}}, "", ""},
	} {
		_, err := p.Convert(context.Background(), c.page, engine.JobOptions{Page: c.extras})
		field, issue := failure(t, err)
		if field != c.field || !strings.Contains(issue, c.want) {
			t.Errorf("%s %+v: %s %q, want %s %q", c.page.Doc, c.extras, field, issue, c.field, c.want)
		}
	}
}

// The network waits hold the print until the requests that the page's
// scripts make once it is loaded are over.
func TestNetworkWaits(t *testing.T) {
	p := sharedPool(t)
	doc := html(`<p>Start</p><script>onload = () => fetch("a.txt").then(r => r.text()).then(a => fetch(a)).then(r => r.text()).then(b => document.body.append(b))</script>`)
	doc.Assets = []Asset{{Name: "a.txt", Data: []byte("b.txt")}, {Name: "b.txt", Data: []byte("Fetchedlate")}}
	for _, page := range []engine.PageExtras{{WaitNetworkIdle: true}, {WaitNetworkIdle: true, WaitNetworkAlmostIdle: true}} {
		r, err := p.Convert(context.Background(), doc, engine.JobOptions{JavaScript: true, Page: page})
		if err != nil {
			t.Fatal(err)
		}
		find(t, pdfWords(t, r.Output), "Fetchedlate")
	}
}
