package web_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browser is a headless Chromium driving one quire server. It records
// what must not happen on any page: console errors, uncaught exceptions,
// Content-Security-Policy violations and requests to any other origin.
type browser struct {
	t      *testing.T
	ctx    context.Context
	origin string // the server's scheme://host:port

	mu       sync.Mutex
	allowed  []string // problems expected on a page
	problems []string
	requests []string // URLs the pages requested
}

// reportViolations runs before any script of each page: the browser
// reports CSP violations to it as DOM events.
const reportViolations = `document.addEventListener('securitypolicyviolation', function (e) {
	console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' at ' + e.sourceFile + ':' + e.lineNumber);
});`

func newBrowser(t *testing.T, serverURL string) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: apt-get install chromium (scripts/setup --test installs it)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	u, _ := url.Parse(serverURL)
	b := &browser{t: t, ctx: ctx, origin: u.Scheme + "://" + u.Host}
	err = chromedp.Listen(ctx, b.observe)
	if err == nil {
		_, err = chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
	}
	if err == nil {
		_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	}
	if err == nil {
		_, err = chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: reportViolations})
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(b.check)
	return b
}

func (b *browser) observe(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			b.problems = append(b.problems, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		if d.Exception != nil {
			b.problems = append(b.problems, "exception: "+d.Text+" "+d.Exception.Description)
		} else {
			b.problems = append(b.problems, "exception: "+d.Text)
		}
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError || strings.Contains(ev.Entry.Text, "Content Security Policy") {
			b.problems = append(b.problems, "log "+string(ev.Entry.Source)+": "+ev.Entry.Text+" "+ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		b.requests = append(b.requests, ev.Request.URL)
		if u, err := url.Parse(ev.Request.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") &&
			u.Scheme+"://"+u.Host != b.origin {
			b.problems = append(b.problems, "request to another origin: "+ev.Request.URL)
		}
	}
}

// allow accepts problems that contain text.
func (b *browser) allow(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowed = append(b.allowed, text)
}

// check fails the test for every problem the pages had.
func (b *browser) check() {
	b.mu.Lock()
	defer b.mu.Unlock()
next:
	for _, p := range b.problems {
		for _, a := range b.allowed {
			if strings.Contains(p, a) {
				continue next
			}
		}
		b.t.Error(p)
	}
	b.problems = nil
}

// requested reports whether the pages requested the URL with path.
func (b *browser) requested(path string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.requests {
		if u, err := url.Parse(r); err == nil && u.Path == path {
			return true
		}
	}
	return false
}

// do runs steps in the page, failing the test on an error.
func (b *browser) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		b.t.Fatal(err)
	}
}

// text is the visible text of the first element matching sel.
func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// eval runs JavaScript in the page, awaiting a promise, and returns its value.
func eval[T any](b *browser, js string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("%s: %v", js, err)
	}
	return v
}

func (b *browser) count(sel string) int {
	b.t.Helper()
	return eval[int](b, "document.querySelectorAll("+js(sel)+").length")
}

var (
	shotsOnce sync.Once
	shotsDir  string
)

// screenshot writes the page (the first screen of a very long one) as name.png for a reviewer: into
// $QUIRE_SCREENSHOTS, or a temporary folder named in the test log.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	shotsOnce.Do(func() {
		shotsDir = os.Getenv("QUIRE_SCREENSHOTS")
		if shotsDir == "" {
			shotsDir, _ = os.MkdirTemp("", "quire-screenshots-")
		}
		os.MkdirAll(shotsDir, 0o755)
	})
	shot := chromedp.FullScreenshot(100)
	if eval[int](b, "document.documentElement.scrollHeight") > 4000 { // the reference: its first screen is enough
		shot = chromedp.CaptureScreenshot()
	}
	png, err := chromedp.Run(b.ctx, shot)
	if err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(shotsDir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// waitFor polls cond (JavaScript returning a boolean) until it holds.
func (b *browser) waitFor(what, cond string) {
	b.t.Helper()
	deadline, tick := time.Now().Add(browserWait), time.Tick(100*time.Millisecond)
	for ; ; <-tick {
		// Errors are retried: the page may be between two documents.
		if ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](cond)); err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waited %v for %s", browserWait, what)
		}
	}
}

// browserWait bounds a wait for a page's condition. /docs renders its
// operations, each with its editors, as the page scrolls: that once took
// more than 30 s while the rest of the test suite loaded both cores.
const browserWait = 2 * time.Minute

func js(s string) string { return fmt.Sprintf("%q", s) }
