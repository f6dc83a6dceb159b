package chromium

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
)

// TestHostilePages: pages that reach for the network or the disk, or
// that never end, come out as a PDF without outside content or as a 4xx
// error within the job's limit, and the pool serves on. A loopback HTTP
// server stands for the outside: it must receive no request at all. The
// table runs on confined browsers (no network in their namespace) and on
// unconfined ones, where the request interception alone must hold.
func TestHostilePages(t *testing.T) {
	var hits atomic.Int64
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Logf("the outside was reached: %s %s", r.Method, r.URL)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>Leakedcontent</p>")
	}))
	defer outside.Close()
	u := outside.URL
	pages := []struct {
		name, doc string
		js        bool
	}{
		{"css url", `<style>body { background: url(` + u + `/bg.png) } p::before { content: url(` + u + `/before.png) }</style><p>x</p>`, false},
		{"css import", `<style>@import url("` + u + `/import.css");</style><p>x</p>`, false},
		{"stylesheet link", `<link rel="stylesheet" href="` + u + `/link.css"><p>x</p>`, false},
		{"img", `<img src="` + u + `/img.png"><img srcset="` + u + `/set.png 2x">`, false},
		{"iframe", `<iframe src="` + u + `/frame.html"></iframe>`, false},
		{"object and embed", `<object data="` + u + `/obj.html"></object><embed src="` + u + `/embed.html">`, false},
		{"font", `<style>@font-face { font-family: F; src: url(` + u + `/f.woff2) } p { font-family: F }</style><p>x</p>`, false},
		{"meta refresh", `<meta http-equiv="refresh" content="0; url=` + u + `/refresh.html"><p>x</p>`, false},
		{"base href", `<base href="` + u + `/"><img src="relative.png">`, false},
		{"fetch", `<script>fetch("` + u + `/fetch").then(r => r.text()).then(t => document.body.append(t))</script>`, true},
		{"xhr", `<script>var x = new XMLHttpRequest(); x.open("GET", "` + u + `/xhr", false); try { x.send(); document.body.append(x.responseText) } catch (e) {}</script>`, true},
		{"websocket", `<script>new WebSocket("` + strings.Replace(u, "http", "ws", 1) + `/ws")</script><p>x</p>`, true},
		{"worker", `<script>new Worker(URL.createObjectURL(new Blob(["fetch('` + u + `/worker')"])))</script><p>x</p>`, true},
		{"navigation", `<script>location.href = "` + u + `/nav.html"</script><p>x</p>`, true},
		{"beacon", `<script>navigator.sendBeacon("` + u + `/beacon", "x")</script><p>x</p>`, true},
		{"file img", `<img src="file:///etc/passwd"><img src="file:///etc/hostname">`, false},
		{"file iframe", `<iframe src="file:///etc/passwd"></iframe><iframe src="file:///"></iframe>`, false},
		{"file stylesheet", `<link rel="stylesheet" href="file:///etc/passwd"><p>x</p>`, false},
		{"file fetch", `<script>fetch("file:///etc/passwd").then(r => r.text()).then(t => document.body.append(t))</script>`, true},
		{"deep nesting", strings.Repeat("<div>", 200000) + "Deep" + strings.Repeat("</div>", 200000), false},
	}
	for _, confined := range []bool{true, false} {
		t.Run(fmt.Sprintf("confined=%v", confined), func(t *testing.T) {
			timeout := 60 * time.Second // the machine of the tests is shared and loaded
			p := newPool(t, 1, func(o *Options) { o.JobTimeout, o.hostNamespaces = timeout, !confined })
			for _, c := range pages {
				t0 := time.Now()
				r, err := p.Convert(context.Background(), html(c.doc), engine.JobOptions{JavaScript: c.js, PrintBackground: true})
				took := time.Since(t0)
				t.Logf("%s: %v after %v", c.name, err, took.Round(time.Millisecond))
				switch {
				case err != nil && !is4xx(err):
					t.Errorf("%s: %v, want a PDF or a 4xx error", c.name, err)
				case took > 2*timeout:
					t.Errorf("%s: took %v, past its limit of %v", c.name, took, timeout)
				case err == nil:
					text := fmt.Sprint(pdfWords(t, r.Output))
					if strings.Contains(text, "Leakedcontent") || strings.Contains(text, "root:") {
						t.Errorf("%s: outside content in the PDF: %s", c.name, text)
					}
				}
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the outside server received %d requests", n)
			}
			stillServes(t, p)
		})
	}
}

// TestEndlessScript: a script that never ends, with javascript=true, is
// stopped at the script budget (422; a short one, set for the test),
// well before the job's time limit, and the pool serves on.
func TestEndlessScript(t *testing.T) {
	p := newPool(t, 1, func(o *Options) { o.JobTimeout, o.Page.ScriptTimeout = 10*time.Minute, 2*time.Second })
	_, err := p.Convert(context.Background(), html(`<p>x</p><script>for (;;) {}</script>`), engine.JobOptions{JavaScript: true})
	if !errors.Is(err, ErrScriptTimeout) || !is4xx(err) {
		t.Fatalf("got %v, want %v", err, ErrScriptTimeout)
	}
	if c := p.Status().Counters; c.Timeouts != 0 {
		t.Errorf("counters %+v: the job's timeout was reached", c)
	}
	stillServes(t, p)
}

// TestMemoryLimit: a page whose script takes memory without end is
// stopped at the browser's memory bound (422), and the pool serves on.
func TestMemoryLimit(t *testing.T) {
	p := newPool(t, 1, func(o *Options) { o.MaxWorkerMemory = 400 << 20 })
	_, err := p.Convert(context.Background(), html(`<script>const a = []; for (;;) a.push(new Float64Array(1 << 20).fill(1))</script>`), engine.JobOptions{JavaScript: true})
	if !errors.Is(err, engine.ErrMemoryLimit) {
		t.Fatalf("got %v, want %v", err, engine.ErrMemoryLimit)
	}
	if c := p.Status().Counters; c.OverMemory != 1 {
		t.Errorf("counters %+v, want one browser over memory", c)
	}
	stillServes(t, p)
}

// TestBrowserDiesWhileIdle: a browser killed between jobs is replaced,
// and the next job does not notice (it may reach the dead browser before
// the supervisor notices, and is then retried on a new one).
func TestBrowserDiesWhileIdle(t *testing.T) {
	p := newPool(t, 1, nil)
	for _, b := range p.sup.Workers() {
		b.Kill()
	}
	stillServes(t, p)
	if c := p.Status().Counters; c.Crashes != 1 || c.Failed != 0 {
		t.Errorf("counters %+v, want one crash and no failed job", c)
	}
}

// stillServes checks that p prints a plain page.
func stillServes(t *testing.T, p *Pool) {
	t.Helper()
	r, err := p.Convert(context.Background(), html("<p>Still serving</p>"), engine.JobOptions{})
	if err != nil {
		t.Fatalf("the pool does not serve anymore: %v", err)
	}
	find(t, pdfWords(t, r.Output), "serving")
}

// is4xx reports whether err answers with a 4xx status: a validation,
// format, size or unprocessable-document error.
func is4xx(err error) bool {
	var e *quire.Error
	if !errors.As(engine.ToAPIError(err, 0), &e) {
		return false
	}
	switch e.Code {
	case quire.CodeValidation, quire.CodeInvalidFormat, quire.CodePayloadTooLarge, quire.CodeUnprocessable:
		return true
	}
	return false
}

// TestLargeTableRefused: Markdown of a table of 50,000 columns, which
// goldmark would render for seconds in the server's own process, is
// refused (422) before goldmark and the browser see it, and the pool
// serves on.
func TestLargeTableRefused(t *testing.T) {
	p := newPool(t, 1, nil)
	md := "|" + strings.Repeat(" a |", 50_000) + "\n|" + strings.Repeat("---|", 50_000) + "\n|" + strings.Repeat(" b |", 50_000) + "\n"
	_, err := p.Convert(context.Background(), Page{Doc: []byte(md), From: engine.FromMarkdown}, engine.JobOptions{})
	if !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "QUIRE_CONVERT_MAX_TABLE_CELLS") {
		t.Fatalf("got %v, want %v naming the limit (the check's answer, before goldmark renders anything)", err, engine.ErrUnprocessable)
	}
	if c := p.Status().Counters; c.Converted+c.Failed != 0 {
		t.Errorf("counters %+v: the table reached the browser", c)
	}
	stillServes(t, p)
}
