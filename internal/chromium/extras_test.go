package chromium

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// threePages is a page that prints on three sheets, titled Doctitle.
var threePages = html(`<!DOCTYPE html><html><head><title>Doctitle</title></head><body>` +
	`<p style="break-after: page">First</p><p style="break-after: page">Second</p><p>Third</p></body></html>`)

// A header and a footer are on every page, with the page's number, the
// count of pages and the title filled in; an image in a header draws from
// a data: URL and never from the network; one side alone leaves the
// other empty (not Chromium's own, which shows the page's address).
func TestHeaderFooter(t *testing.T) {
	p := sharedPool(t)
	var hits atomic.Int32
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer remote.Close()
	logo := base64.StdEncoding.EncodeToString(pngOf(t, 40, 20))
	header := `<html><head><style>div { font-size: 10px; margin-left: 1cm }</style></head><body><div>Head <span class="pageNumber"></span>` +
		` of <span class="totalPages"></span> <span class="title"></span><img src="data:image/png;base64,` + logo + `">` +
		`<img src="` + remote.URL + `/remote.png"></div></body></html>`
	footer := `<div style="font-size: 10px; margin-left: 1cm">Foot</div>`
	r, err := p.Convert(context.Background(), threePages, engine.JobOptions{Page: engine.PageExtras{HeaderHTML: header, FooterHTML: footer}})
	if err != nil {
		t.Fatal(err)
	}
	pages := pdfWords(t, r.Output)
	if len(pages) != 3 {
		t.Fatalf("%d pages, want 3", len(pages))
	}
	for i, words := range pages {
		got := text(words)
		if want := fmt.Sprintf("Head %d of 3 Doctitle", i+1); !strings.Contains(got, want) || !strings.Contains(got, "Foot") {
			t.Errorf("page %d reads %q, want %q and Foot", i+1, got, want)
		}
	}
	if sizes := pdfImageSizes(t, r.Output); strings.Count(strings.Join(sizes, " "), "40x20") != 3 {
		t.Errorf("the header's data: image is drawn %d times (%v), want once a page", len(sizes), sizes)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the header's remote image was asked of the network %d times", n)
	}
	r, err = p.Convert(context.Background(), threePages, engine.JobOptions{Page: engine.PageExtras{HeaderHTML: header}})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(pdfWords(t, r.Output)[0]); strings.Contains(got, site) || strings.Contains(got, "1/3") {
		t.Errorf("with a header alone, the footer shows Chromium's own: %q", got)
	}
}

// text is the words of a page, space-separated.
func text(words []word) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = w.Text
	}
	return strings.Join(s, " ")
}

// singlePage prints the whole page on one sheet, its last line included.
func TestSinglePage(t *testing.T) {
	p := sharedPool(t)
	long := html(`<!DOCTYPE html><html><body><p>Opening</p>` + strings.Repeat("<p>filler</p>", 120) + `<p>Closing</p></body></html>`)
	r, err := p.Convert(context.Background(), long, engine.JobOptions{Paper: "Letter"})
	if err != nil {
		t.Fatal(err)
	}
	if n := pdfPages(t, r.Output); n < 3 {
		t.Fatalf("the page prints on %d sheets without singlePage; the test needs several", n)
	}
	for _, o := range []engine.JobOptions{{Paper: "Letter", Page: engine.PageExtras{SinglePage: true}},
		{Paper: "A4", Landscape: true, Scale: 0.5, Page: engine.PageExtras{SinglePage: true}}} {
		r, err := p.Convert(context.Background(), long, o)
		if err != nil {
			t.Fatal(err)
		}
		if n := pdfPages(t, r.Output); n != 1 {
			t.Errorf("%+v: %d pages, want 1", o, n)
		}
		pages := pdfWords(t, r.Output)
		find(t, pages, "Opening")
		find(t, pages, "Closing")
	}
	tall := html(`<div style="height: 30000px">Tall</div>`)
	if _, err := p.Convert(context.Background(), tall, engine.JobOptions{Page: engine.PageExtras{SinglePage: true}}); !errors.Is(err, ErrTooTall) || !is4xx(err) {
		t.Errorf("a page 30000 pixels tall on one sheet: %v, want ErrTooTall", err)
	}
}

// A page laid out for the dark colour scheme prints what its CSS keeps
// for it, and the tab's next page is laid out for its own scheme again.
func TestMediaFeatures(t *testing.T) {
	p := sharedPool(t)
	doc := html(`<!DOCTYPE html><html><head><style>
@media (prefers-color-scheme: dark) { .light { display: none } }
@media not (prefers-color-scheme: dark) { .dark { display: none } }
</style></head><body><p class="dark">Darkscheme</p><p class="light">Lightscheme</p></body></html>`)
	dark := []engine.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}
	for _, c := range []struct {
		features  []engine.MediaFeature
		want, not string
	}{{dark, "Darkscheme", "Lightscheme"}, {nil, "Lightscheme", "Darkscheme"}} {
		r, err := p.Convert(context.Background(), doc, engine.JobOptions{Page: engine.PageExtras{MediaFeatures: c.features}})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(pdfWords(t, r.Output)[0]); !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("features %v: %q, want %s only", c.features, got, c.want)
		}
	}
	_, err := p.Convert(context.Background(), doc, engine.JobOptions{Page: engine.PageExtras{MediaFeatures: []engine.MediaFeature{{Name: "width", Value: "1"}}}})
	if !isValidation(err) {
		t.Errorf("an unknown media feature: %v, want a validation error", err)
	}
}

// The waits hold the print until the page's scripts have drawn what it
// waits for, within the scripts' time limit; a selector the page cannot
// read fails at once, and a wait that never ends fails with the limit.
func TestWaits(t *testing.T) {
	p := newPool(t, 1, func(o *Options) {
		o.JobTimeout = 10 * time.Minute // never reached: the scripts' limit answers
		o.Page = PageLimits{ScriptTimeout: 3 * time.Second}
	})
	late := html(`<!DOCTYPE html><html><body><p>Early</p><script>
onload = () => setTimeout(() => {
	document.body.insertAdjacentHTML("beforeend", '<p id="late">Latecomer</p>');
	window.ready = true;
}, 50);
</script></body></html>`)
	for _, w := range []engine.PageExtras{{WaitForSelector: "#late"}, {WaitForExpression: "window.ready === true"},
		{WaitDelay: 500 * time.Millisecond}, {WaitDelay: time.Millisecond, WaitForSelector: "p#late", WaitForExpression: "window.ready"}} {
		r, err := p.Convert(context.Background(), late, engine.JobOptions{JavaScript: true, Page: w})
		if err != nil {
			t.Fatalf("%+v: %v", w, err)
		}
		find(t, pdfWords(t, r.Output), "Latecomer")
	}
	for _, c := range []struct {
		wait engine.PageExtras
		want string
	}{
		{engine.PageExtras{WaitForSelector: "##"}, "waitForSelector cannot be read"},
		{engine.PageExtras{WaitForExpression: "window.ready = = 1"}, "waitForExpression cannot be read"},
		{engine.PageExtras{WaitForExpression: "window.never === true"}, ErrWaitTimeout.Error()},
		{engine.PageExtras{WaitDelay: time.Hour}, ErrWaitTimeout.Error()},
	} {
		_, err := p.Convert(context.Background(), late, engine.JobOptions{JavaScript: true, Page: c.wait})
		if err == nil || !strings.Contains(err.Error(), c.want) || !is4xx(err) {
			t.Errorf("%+v: %v, want a 4xx saying %q", c.wait, err, c.want)
		}
	}
	if _, err := p.Convert(context.Background(), late, engine.JobOptions{Page: engine.PageExtras{WaitForSelector: "#late"}}); !isValidation(err) {
		t.Errorf("a wait with scripts off: %v, want a validation error", err)
	}
	stillServes(t, p)
}

// The user agent is what the page's scripts read.
func TestUserAgent(t *testing.T) {
	p := sharedPool(t)
	doc := html(`<p id="ua"></p><script>document.getElementById("ua").textContent = navigator.userAgent</script>`)
	r, err := p.Convert(context.Background(), doc, engine.JobOptions{JavaScript: true, Page: engine.PageExtras{UserAgent: "QuireTestAgent/1.0"}})
	if err != nil {
		t.Fatal(err)
	}
	find(t, pdfWords(t, r.Output), "QuireTestAgent/1.0")
}

// A screenshot at a device scale factor of 2 has twice the viewport's
// pixels on each side; one of more pixels than the largest image at
// scale 1 is refused.
func TestDeviceScaleFactor(t *testing.T) {
	p := sharedPool(t)
	r, err := p.Convert(context.Background(), html(`<p>Scaled</p>`), engine.JobOptions{Shot: engine.Shot{Format: "png", Width: 300, Height: 200, Clip: true, DeviceScaleFactor: 2}})
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := image.Decode(bytes.NewReader(r.Output))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 600 || b.Dy() != 400 {
		t.Errorf("an image of %v, want 600x400", b)
	}
	huge := engine.Shot{Format: "png", Width: 4096, Height: 4096, Clip: true, DeviceScaleFactor: 4}
	if _, err := p.Convert(context.Background(), html(`<p>Scaled</p>`), engine.JobOptions{Shot: huge}); !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "at most 67108864") {
		t.Errorf("an image of 16384x16384 pixels: %v, want ErrUnprocessable naming the bound", err)
	}
}
