package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func server(t *testing.T, cfg apitest.Config) *apitest.Server {
	t.Helper()
	return apitest.Start(t, storetest.Open(t, storetest.URL(t, "sqlite")), cfg)
}

func TestDocs(t *testing.T) {
	s := server(t, apitest.Config{})
	res, err := http.Get(s.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct{ Summary string }
	}
	json.NewDecoder(res.Body).Decode(&doc)
	res.Body.Close()
	var summaries []string
	for _, ops := range doc.Paths {
		for _, op := range ops {
			summaries = append(summaries, op.Summary)
		}
	}
	if len(summaries) < 10 {
		t.Fatalf("openapi.json has %d operations", len(summaries))
	}

	for _, path := range []string{"/docs", "/documentation"} {
		b := newBrowser(t, s.URL)
		b.do(chromedp.Navigate(s.URL + path))
		first, _ := json.Marshal(summaries[0])
		b.waitFor("the reference", "document.body.innerText.includes("+string(first)+")")
		text := eval[string](b, "document.body.innerText")
		for _, sum := range summaries {
			if !strings.Contains(text, sum) {
				t.Errorf("%s does not show the operation %q", path, sum)
			}
		}
		if path == "/documentation" {
			break
		}
		b.screenshot("docs")
		// The console: open the first operation (GET /) and send it.
		b.do(chromedp.Click(chromedp.CSS(".show-api-client-button"), chromedp.NodeVisible),
			chromedp.Click(chromedp.CSS(`button[data-addressbar-action="send"]`), chromedp.NodeVisible))
		b.waitFor("the console's answer", `document.body.innerText.includes('Self-hosted document API')`)
		if !b.requested("/") {
			t.Error("the console sent no request to GET /")
		}
		b.screenshot("docs-console")

		// Every operation's console: the body editors add style sheets,
		// which must carry the page's nonce.
		b.waitFor("every operation's console button", "(window.scrollBy(0, 2000), document.querySelectorAll('.show-api-client-button').length >= "+strconv.Itoa(len(summaries))+")")
		for i := range len(summaries) {
			summary := eval[string](b, `(() => {
				const button = document.querySelectorAll('.show-api-client-button')[`+strconv.Itoa(i)+`];
				button.click();
				return button.closest('section').querySelector('.section-header-label').innerText;
			})()`)
			b.waitFor("the console of "+summary, `Array.from(document.querySelectorAll('.request-response-header'), h => h.innerText).some(t => t.includes(`+js(summary)+`))`)
		}
		if n := eval[int](b, "Array.from(document.querySelectorAll('style')).filter(s => !s.nonce).length"); n != 0 {
			t.Errorf("%d style elements without the nonce", n)
		}
	}
	res, err = http.Get(s.URL + "/docs")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe-eval") ||
		!regexp.MustCompile(`style-src 'self'; style-src-elem 'self' 'nonce-[\w-]{43}';`).MatchString(csp) ||
		res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(string(body), "/static/vendor/scalar/standalone.js") {
		t.Errorf("/docs: %v", res.Header)
	}
}
