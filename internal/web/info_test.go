package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
)

func get(t *testing.T, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(body)
}

// exampleExpandsTheKey runs the example command in a shell, with curl a
// function that prints its arguments: the shell puts the caller's
// $QUIRE_API_KEY in the Authorization header.
func exampleExpandsTheKey(t *testing.T, example string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `curl() { printf '%s\n' "$@"; }; `+example)
	cmd.Env = append(os.Environ(), "QUIRE_API_KEY=qk_test_123")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "\nAuthorization: Bearer qk_test_123\n") {
		t.Errorf("the example does not send the caller's key (%v):\n%s\nit printed:\n%s", err, example, out)
	}
}

// TestInfo checks GET / against the fields the hosted API's document
// requires, in JSON and in plain text.
func TestInfo(t *testing.T) {
	s := server(t, apitest.Config{})
	res, body := get(t, s.URL+"/", nil)
	var info map[string]any
	if err := json.Unmarshal([]byte(body), &info); err != nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET /: %v %q %s", err, res.Header.Get("Content-Type"), body)
	}
	for _, f := range []string{"name", "version", "message", "endpoints", "authentication", "example", "links"} {
		if info[f] == nil || info[f] == "" {
			t.Errorf("GET / lacks %s: %s", f, body)
		}
	}
	if !strings.Contains(body, "Bearer <API key>") {
		t.Errorf("authentication is escaped: %s", body)
	}
	exampleExpandsTheKey(t, info["example"].(string))
	endpoints, _ := info["endpoints"].(map[string]any)
	links, _ := info["links"].(map[string]any)
	for _, f := range []string{"convert", "health", "docs"} {
		if v, _ := endpoints[f].(string); !strings.HasPrefix(v, s.URL+"/") {
			t.Errorf("endpoints.%s = %v", f, endpoints[f])
		}
	}
	for _, f := range []string{"documentation", "github", "support"} {
		if v, _ := links[f].(string); !strings.HasPrefix(v, "http") {
			t.Errorf("links.%s = %v", f, links[f])
		}
	}
	for _, h := range []map[string]string{{"User-Agent": "curl/8.5.0"}, {"User-Agent": "Wget/1.21"}, {"Accept": "text/plain, application/json;q=0.5"}} {
		res, body := get(t, s.URL+"/", h)
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || !strings.Contains(body, s.URL+"/v1/convert") || strings.HasPrefix(body, "{") {
			t.Errorf("%v: %q\n%s", h, res.Header.Get("Content-Type"), body)
		}
	}
	if res, _ := get(t, s.URL+"/", map[string]string{"Accept": "application/json, text/plain;q=0.9"}); !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Errorf("Accept preferring JSON: %q", res.Header.Get("Content-Type"))
	}
}

// TestPageHeaders: every page sends the security headers.
func TestPageHeaders(t *testing.T) {
	s := server(t, apitest.Config{})
	for _, path := range []string{"/docs", "/documentation", "/verify", "/admin", "/static/style.css", "/static/verify.js"} {
		res, _ := get(t, s.URL+path, nil)
		csp := res.Header.Get("Content-Security-Policy")
		if res.StatusCode != 200 || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			strings.Contains(csp, "script-src 'self' 'unsafe") || res.Header.Get("X-Frame-Options") != "DENY" ||
			res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") == "" {
			t.Errorf("%s: %d %v", path, res.StatusCode, res.Header)
		}
		if path != "/docs" && path != "/documentation" && strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s allows inline code: %s", path, csp)
		}
	}
}

// unlabelled counts the form controls a screen reader could not name.
const unlabelled = `Array.from(document.querySelectorAll('input:not([type=hidden]), select, button')).
	filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.textContent.trim()).length`

// TestPhone renders the pages at a phone's width: nothing wider than the
// screen but the tables and the chart, which scroll in their own boxes;
// every control has a name.
func TestPhone(t *testing.T) {
	s := server(t, apitest.Config{})
	b := newBrowser(t, s.URL)
	b.do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, path := range []string{"/verify", "/admin"} {
		b.do(chromedp.Navigate(s.URL + path))
		if w := eval[int](b, "document.documentElement.scrollWidth"); w > 390 {
			t.Errorf("%s is %dpx wide on a 390px screen", path, w)
		}
		if n := eval[int](b, unlabelled); n != 0 {
			t.Errorf("%s has %d controls without a label", path, n)
		}
		b.screenshot("phone" + strings.ReplaceAll(path, "/", "-"))
	}
	b.login(s.URL, apitest.AdminToken)
	b.waitFor("the dashboard", `!!document.querySelector('#licenses')`)
	if w := eval[int](b, "document.documentElement.scrollWidth"); w > 390 {
		t.Errorf("the dashboard is %dpx wide on a 390px screen", w)
	}
	if n := eval[int](b, unlabelled); n != 0 {
		t.Errorf("the dashboard has %d controls without a label", n)
	}
	b.screenshot("phone-dashboard")
}

// TestStatic: files are served compressed, revalidated by ETag, and only
// the embedded ones.
func TestStatic(t *testing.T) {
	s := server(t, apitest.Config{})
	tr := &http.Transport{DisableCompression: true}
	req, _ := http.NewRequest("GET", s.URL+"/static/vendor/scalar/standalone.js", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	etag := res.Header.Get("ETag")
	if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" || etag == "" || n > 2<<20 ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("standalone.js: %d, %d bytes, %v", res.StatusCode, n, res.Header)
	}
	req.Header.Set("If-None-Match", etag)
	if res, err = tr.RoundTrip(req); err != nil || res.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %v %v", res.StatusCode, err)
	}
	for _, path := range []string{"/static/", "/static/vendor/", "/static/../web.go", "/static/nope.css"} {
		if res, _ := get(t, s.URL+path, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", path, res.StatusCode)
		}
	}
}

// TestKeyboard: the verification form is reached with Tab alone, after
// the skip link and the navigation.
func TestKeyboard(t *testing.T) {
	s := server(t, apitest.Config{})
	b := newBrowser(t, s.URL)
	b.do(chromedp.Navigate(s.URL + "/verify"))
	var order []string
	for range 8 {
		b.do(chromedp.KeyEvent(kb.Tab))
		order = append(order, eval[string](b, `(e => e.id || e.getAttribute('href') || e.tagName)(document.activeElement)`))
	}
	got := strings.Join(order, " ")
	if !strings.HasPrefix(got, "#main ") || !strings.Contains(got, "/admin file BUTTON") {
		t.Errorf("Tab order: %s", got)
	}
}
