package gotenberg_test

import (
	"bytes"
	"fmt"
	"image"
	_ "image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// The page fields of the Chromium routes, through the routes: header and
// footer on every page, singlePage, media features, the waits (which
// turn the page's scripts on; the network's too) and their bounds, the user agent, and a
// screenshot's device scale factor.
func chromiumPageFields(t *testing.T, e *env) {
	const html = "/forms/chromium/convert/html"
	three := file("index.html", []byte(`<html><head><title>Doctitle</title></head><body><p style="break-after: page">First</p>`+
		`<p style="break-after: page">Second</p><p>Third</p></body></html>`))
	header := file("header.html", []byte(`<html><body><div style="font-size: 10px; margin-left: 1cm">Head <span class="pageNumber"></span>/<span class="totalPages"></span> <span class="title"></span></div></body></html>`))
	footer := file("footer.html", []byte(`<div style="font-size: 10px; margin-left: 1cm">Foot</div>`))
	pages := strings.Split(strings.TrimRight(text(t, e.post(t, html, e.bearer(), three, header, footer).pdf(t)), "\f"), "\f")
	if len(pages) != 3 {
		t.Fatalf("%d pages, want 3", len(pages))
	}
	for i, p := range pages {
		if want := fmt.Sprintf("Head %d/3 Doctitle", i+1); !strings.Contains(p, want) || !strings.Contains(p, "Foot") {
			t.Errorf("page %d reads %q, want %q and Foot", i+1, p, want)
		}
	}
	e.post(t, html, e.bearer(), three, file("header.html", bytes.Repeat([]byte("x"), 300<<10))).
		plainError(t, 400, "form field 'header.html' is 307200 bytes, more than 262144")

	long := file("index.html", []byte(`<html><body><p>Opening</p>`+strings.Repeat("<p>filler</p>", 120)+`<p>Closing</p></body></html>`))
	one := e.post(t, html, e.bearer(), long, field("singlePage", "true")).pdf(t)
	if n, got := info(t, one, "Pages"), text(t, one); n != "1" || !strings.Contains(got, "Opening") || !strings.Contains(got, "Closing") {
		t.Errorf("singlePage: %s pages reading %q, want 1 with the first and last lines", n, got)
	}

	schemes := file("index.html", []byte(`<html><head><style>@media (prefers-color-scheme: dark) { .light { display: none } }
@media not (prefers-color-scheme: dark) { .dark { display: none } }</style></head><body><p class="dark">Darkscheme</p><p class="light">Lightscheme</p></body></html>`))
	got := text(t, e.post(t, html, e.bearer(), schemes, field("emulatedMediaFeatures", `[{"name":"prefers-color-scheme","value":"dark"}]`)).pdf(t))
	if !strings.Contains(got, "Darkscheme") || strings.Contains(got, "Lightscheme") {
		t.Errorf("prefers-color-scheme dark: %q", got)
	}

	late := file("index.html", []byte(`<html><body><p>Early</p><p id="ua"></p><script>
document.getElementById("ua").textContent = navigator.userAgent;
onload = () => setTimeout(() => { document.body.insertAdjacentHTML("beforeend", '<p id="late">Latecomer</p>'); window.ready = true; }, 50);
</script></body></html>`))
	for _, wait := range []part{field("waitForSelector", "#late"), field("waitForExpression", "window.ready === true")} {
		got := text(t, e.post(t, html, e.bearer(), late, wait, field("userAgent", "QuireAgent/2")).pdf(t))
		if !strings.Contains(got, "Latecomer") || !strings.Contains(got, "QuireAgent/2") {
			t.Errorf("%s=%s: %q, want what the scripts drew, and the user agent", wait.field, wait.value, got)
		}
	}

	// skipNetworkIdleEvent=false waits for the requests the scripts make
	// once the page is loaded; without a wait, the scripts do not run.
	fetches := file("index.html", []byte(`<html><body><p>Start</p><script>onload = () => fetch("a.txt").then(r => r.text())`+
		`.then(a => fetch(a)).then(r => r.text()).then(b => document.body.append(b))</script></body></html>`))
	fetched := []part{fetches, file("a.txt", []byte("b.txt")), file("b.txt", []byte("Fetchedlate"))}
	if got := text(t, e.post(t, html, e.bearer(), append(fetched, field("skipNetworkIdleEvent", "false"))...).pdf(t)); !strings.Contains(got, "Fetchedlate") {
		t.Errorf("skipNetworkIdleEvent=false: %q, want what the scripts fetched", got)
	}
	if got := text(t, e.post(t, html, e.bearer(), append(fetched, field("skipNetworkIdleEvent", "true"))...).pdf(t)); strings.Contains(got, "Fetchedlate") {
		t.Errorf("skipNetworkIdleEvent=true, no wait: %q, want the page without its scripts", got)
	}

	for _, c := range []struct {
		parts []part
		want  string
	}{
		{[]part{field("waitDelay", "1h")}, "form field 'waitDelay' must be shorter than the time limit of the page's scripts, 10s"},
		{[]part{field("waitDelay", "soon")}, "form field 'waitDelay' is invalid (got 'soon', want a duration"},
		{[]part{field("waitForSelector", "##")}, "waitForSelector cannot be read by the page"},
		{[]part{field("emulatedMediaFeatures", "dark")}, "form field 'emulatedMediaFeatures' is invalid"},
		{[]part{field("emulatedMediaFeatures", `[{"name":"prefers-color-scheme","value":"dark","media":"print"}]`)}, "form field 'emulatedMediaFeatures' is invalid"},
		{[]part{field("emulatedMediaFeatures", `[{"name":"width","value":"1"}]`)}, "form field 'emulatedMediaFeatures' names 'width'"},
		{[]part{field("failOnHttpStatusCodes", "[299]")}, "form field 'failOnHttpStatusCodes' is not supported by quire with 299"},
		{[]part{field("failOnHttpStatusCodes", "[]")}, "form field 'failOnHttpStatusCodes' is not supported by quire empty"},
		{[]part{field("singlePage", "true"), field("nativePageRanges", "1")}, "form field 'singlePage' prints the page on one sheet"},
		{[]part{field("userAgent", "a\nb")}, "form field 'userAgent' must be one line"},
	} {
		e.post(t, html, e.bearer(), append([]part{late}, c.parts...)...).plainError(t, 400, c.want)
	}

	a := e.post(t, "/forms/chromium/screenshot/html", e.bearer(), file("index.html", []byte(page)), field("width", "300"), field("height", "200"),
		field("clip", "true"), field("deviceScaleFactor", "2"))
	if img, _, err := image.Decode(bytes.NewReader(a.body)); err != nil || img.Bounds() != image.Rect(0, 0, 600, 400) {
		t.Errorf("deviceScaleFactor 2: %d %v, want a 600x400 image", a.status, err)
	}
	e.post(t, "/forms/chromium/screenshot/html", e.bearer(), file("index.html", []byte(page)), field("deviceScaleFactor", "9")).
		plainError(t, 400, "form field 'deviceScaleFactor' must be from 0.25 to 4")
}

// The url route's download carries extraHttpHeaders (those scoped to
// another address left out), userAgent, and the cookies of the page's
// own host only; it takes header.html.
func chromiumURLDownloadFields(t *testing.T, e *env) {
	var mu sync.Mutex
	var seen http.Header
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Clone()
		mu.Unlock()
		w.Write([]byte(`<html><body><p>Fetched page</p></body></html>`))
	}))
	defer site.Close()
	const url = "/forms/chromium/convert/url"
	got := text(t, e.post(t, url, e.bearer(), field("url", site.URL),
		field("extraHttpHeaders", `{"X-Trace":"t1","X-Scoped":"s;scope=^https://elsewhere\\.example/"}`),
		field("cookies", `[{"name":"sid","value":"abc","domain":"127.0.0.1"},{"name":"other","value":"x","domain":"example.com"}]`),
		field("userAgent", "QuireAgent/3"),
		file("header.html", []byte(`<div style="font-size: 10px; margin-left: 1cm">Fetchedhead</div>`))).pdf(t))
	if !strings.Contains(got, "Fetched page") || !strings.Contains(got, "Fetchedhead") {
		t.Errorf("text %q, want the page and its header", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen.Get("X-Trace") != "t1" || seen.Get("X-Scoped") != "" || seen.Get("Cookie") != "sid=abc" || seen.Get("User-Agent") != "QuireAgent/3" {
		t.Errorf("the download's headers: %v, want X-Trace, the cookie of its host, the user agent, and not X-Scoped", seen)
	}
	e.post(t, url, e.bearer(), field("url", site.URL), field("extraHttpHeaders", `{"Host":"evil.example"}`)).
		plainError(t, 400, "form field 'extraHttpHeaders' holds 'Host', which quire's fetcher sets itself")
	e.post(t, url, e.bearer(), field("url", site.URL), field("cookies", `{"sid":"abc"}`)).
		plainError(t, 400, "form field 'cookies' is invalid")
	e.post(t, url, e.bearer(), field("url", site.URL), field("cookies", `[{"name":"sid","value":"abc","domain":"127.0.0.1","expires":1}]`)).
		plainError(t, 400, "form field 'cookies' is invalid")
	e.post(t, url, e.bearer(), field("url", site.URL), field("cookies", `[{"name":"sid","value":"a;b","domain":"127.0.0.1"}]`)).
		plainError(t, 400, "form field 'cookies' entry 1")
}

// The checks of the loaded page answer Gotenberg's 409 when they fail,
// and let the page print otherwise: failOnConsoleExceptions (its scripts
// run when it waits, as Gotenberg's do), failOnResourceLoadingFailed (a
// file not uploaded; the url route's page loads nothing of the network),
// failOnResourceHttpStatusCodes (an uploaded file is answered 200)
// unless from a domain of ignoreResourceHttpStatusDomains; on the
// screenshot routes too.
func chromiumPageChecks(t *testing.T, e *env) {
	const html = "/forms/chromium/convert/html"
	throws := file("index.html", []byte(`<html><body><p>Thrower</p><script>window.ready = true; throw new Error("Boom")</script></body></html>`))
	calm := file("index.html", []byte(`<html><body><p>Calm</p><script>window.ready = true</script></body></html>`))
	wait := field("waitForExpression", "window.ready === true")
	failOnExceptions := field("failOnConsoleExceptions", "true")
	e.post(t, html, e.bearer(), throws, wait, failOnExceptions).plainError(t, 409, "the page's scripts threw exceptions: Uncaught (1:")
	e.post(t, "/forms/chromium/screenshot/html", e.bearer(), throws, wait, failOnExceptions).plainError(t, 409, "Error: Boom")
	for _, ok := range [][]part{{calm, wait, failOnExceptions}, {throws, wait}, {throws, failOnExceptions}} { // the last: scripts off
		e.post(t, html, e.bearer(), ok...).pdf(t)
	}

	pic := file("pic.png", pngOf(t))
	missing := file("index.html", []byte(`<html><body><p>Pictures</p><img src="pic.png"><img src="missing.png"></body></html>`))
	complete := file("index.html", []byte(`<html><body><p>Pictures</p><img src="pic.png"></body></html>`))
	failOnLoading := field("failOnResourceLoadingFailed", "true")
	e.post(t, html, e.bearer(), missing, pic, failOnLoading).plainError(t, 409, "/missing.png (Image)")
	e.post(t, html, e.bearer(), complete, pic, failOnLoading).pdf(t)
	e.post(t, html, e.bearer(), missing, pic).pdf(t)

	e.post(t, html, e.bearer(), complete, pic, field("failOnResourceHttpStatusCodes", "[299]")).plainError(t, 409, "/pic.png - 200: OK")
	e.post(t, html, e.bearer(), missing, pic, field("failOnResourceHttpStatusCodes", "[499,599]")).pdf(t)
	e.post(t, html, e.bearer(), complete, pic, field("failOnResourceHttpStatusCodes", "[299]"), field("ignoreResourceHttpStatusDomains", `["quire.invalid"]`)).pdf(t)
	e.post(t, html, e.bearer(), complete, pic, field("failOnResourceHttpStatusCodes", "[404]"), field("ignoreResourceHttpStatusDomains", "example.com")).pdf(t)
	e.post(t, html, e.bearer(), complete, field("failOnResourceHttpStatusCodes", "[42]")).
		plainError(t, 400, "form field 'failOnResourceHttpStatusCodes' lists 42, which is not an HTTP status")
	e.post(t, html, e.bearer(), complete, field("failOnResourceHttpStatusCodes", "404")).
		plainError(t, 400, "form field 'failOnResourceHttpStatusCodes' is invalid")

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`<html><body><p>Fetched page</p><img src="/logo.png"></body></html>`))
	}))
	defer site.Close()
	e.post(t, "/forms/chromium/convert/url", e.bearer(), field("url", site.URL), failOnLoading).plainError(t, 409, "/logo.png (Image)")
	e.post(t, "/forms/chromium/convert/url", e.bearer(), field("url", site.URL)).pdf(t)
}
