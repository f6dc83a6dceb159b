package chromium

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// TestSharedTabIsolation: two jobs with scripts off print one after the
// other in the browser's shared tab, and nothing of the first reaches
// the second: the second's style sheet and image of the same names, which
// it does not have, stay missing, and the first's text is not in its PDF.
// The second's script does not run either.
func TestSharedTabIsolation(t *testing.T) {
	p := newPool(t, 1, nil)
	first := html(`<link rel="stylesheet" href="style.css"><p class="mark">Jobone</p><img src="pic.png">`)
	first.Assets = []Asset{{Name: "style.css", Data: []byte(`.mark::after { content: " Fromjobone" }`)}, {Name: "pic.png", Data: pngOf(t, 53, 31)}}
	r, err := p.Convert(context.Background(), first, engine.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	find(t, pdfWords(t, r.Output), "Fromjobone")
	if got := pdfImageSizes(t, r.Output); !slices.Contains(got, "53x31") {
		t.Fatalf("the first job's PDF lacks its image: %v", got)
	}
	tb := sharedTab(p)
	r, err = p.Convert(context.Background(), html(`<link rel="stylesheet" href="style.css"><p class="mark">Jobtwo</p><img src="pic.png">`+
		`<script>document.body.append("Scriptran")</script>`), engine.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sharedTab(p) != tb || tb == nil {
		t.Fatal("the second job did not print in the first's tab")
	}
	pages := pdfWords(t, r.Output)
	find(t, pages, "Jobtwo")
	if text := fmt.Sprint(pages); strings.Contains(text, "Jobone") || strings.Contains(text, "Fromjobone") {
		t.Errorf("the first job's page or style sheet reached the second's PDF: %s", text)
	}
	if strings.Contains(fmt.Sprint(pages), "Scriptran") {
		t.Error("the second page's script ran: the shared tab's scripts must stay off")
	}
	if got := pdfImageSizes(t, r.Output); slices.Contains(got, "53x31") { // a missing image's icon may be there
		t.Errorf("the second job's PDF has the first's image: %v", got)
	}
}

// TestSharedTabPerTenant: a job with scripts on, or of another tenant,
// does not print in the shared tab, which only one tenant's jobs with
// scripts off share.
func TestSharedTabPerTenant(t *testing.T) {
	p := newPool(t, 1, nil)
	alice, bob := quire.WithTenant(context.Background(), "alice"), quire.WithTenant(context.Background(), "bob")
	convertIn := func(ctx context.Context, o engine.JobOptions) *tab {
		t.Helper()
		if _, err := p.Convert(ctx, html("<p>x</p>"), o); err != nil {
			t.Fatal(err)
		}
		return sharedTab(p)
	}
	a := convertIn(alice, engine.JobOptions{})
	if convertIn(alice, engine.JobOptions{JavaScript: true}) != a || convertIn(alice, engine.JobOptions{}) != a {
		t.Fatal("alice's jobs did not keep her shared tab")
	}
	if b := convertIn(bob, engine.JobOptions{}); b == a || b.tenant != "bob" {
		t.Errorf("bob's job printed in alice's tab")
	}
}

// sharedTab is the shared tab of p's one browser, read after a job
// (which set it before answering).
func sharedTab(p *Pool) *tab {
	for _, b := range p.sup.Workers() {
		return b.(*browserProc).shared
	}
	return nil
}

// TestFileServerOwnOrigin: a job's file server answers only its own
// origin: not another job's, the site itself, another port or scheme.
func TestFileServerOwnOrigin(t *testing.T) {
	origin := newOrigin()
	s := newFileServer(origin, Page{Doc: []byte("<p>x</p>"), Assets: []Asset{{Name: "style.css", Data: []byte("p {}")}}})
	host := strings.TrimPrefix(origin, "http://")
	for url, want := range map[string]bool{
		origin + "/":                                         true,
		origin + "/style.css":                                true,
		origin + "/sub/../style.css":                         true,
		origin + "/other.css":                                false,
		newOrigin() + "/style.css":                           false,
		"http://" + site + "/style.css":                      false,
		"http://x." + host + "/style.css":                    false,
		"http://" + host + ":8080/style.css":                 false,
		"https://" + host + "/style.css":                     false,
		"http://user@" + host + "/style.css":                 false,
		"http://" + strings.Replace(host, ".", "-", 1) + "/": false,
	} {
		if _, ok := s.lookup(&network.Request{Method: "GET", URL: url}); ok != want {
			t.Errorf("%s: answered %v, want %v", url, ok, want)
		}
	}
	if _, ok := s.lookup(&network.Request{Method: "POST", URL: origin + "/"}); ok {
		t.Error("a POST was answered")
	}
}

// TestClientLeavesSharedTab: a client that leaves while its page prints
// in the shared tab (or before, or after: the moment varies) is told its
// conversion was abandoned, or gets its PDF if the print ended first, and
// leaves a pool that prints the next page.
func TestClientLeavesSharedTab(t *testing.T) {
	p := newPool(t, 1, nil)
	stillServes(t, p)
	long := html(strings.Repeat("<p>A page of a hundred and fifty pages.</p>", 5000))
	// The moments the client leaves are the behaviour under test: before
	// the call (-1), then while the job waits, loads or prints.
	for _, after := range []time.Duration{-1, 0, 20 * time.Millisecond, 80 * time.Millisecond, 300 * time.Millisecond} {
		ctx, cancel := context.WithCancel(context.Background())
		if after < 0 {
			cancel()
		} else {
			time.AfterFunc(after, cancel)
		}
		r, err := p.Convert(ctx, long, engine.JobOptions{})
		switch {
		case err == nil && (after < 0 || !bytes.HasPrefix(r.Output, []byte("%PDF-"))):
			t.Errorf("client left after %v: no error, %d bytes, want the conversion abandoned", after, len(r.Output))
		case err != nil && !errors.Is(err, context.Canceled):
			t.Errorf("client left after %v: %v, want the conversion abandoned (context.Canceled)", after, err)
		}
		cancel()
		stillServes(t, p)
	}
}
