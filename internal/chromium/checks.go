package chromium

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/engine"
)

// exceptions collects the exceptions that a page's scripts throw and do
// not catch (Runtime.exceptionThrown), until settle.
type exceptions struct {
	marker string        // thrown by settle, last
	done   chan struct{} // closed once the marker came
	list   tally         // written until done
}

// watchExceptions starts collecting t's exceptions; it subscribes before
// it returns, so that none is missed.
func watchExceptions(ctx context.Context, t *chromedp.Target) *exceptions {
	x := &exceptions{marker: "quire-settled-" + rand.Text(), done: make(chan struct{})}
	events := cdp.Events(ctx, t, cdpruntime.ExceptionThrown)
	go func() {
		for ev, err := range events {
			if err != nil || ev.ExceptionDetails == nil {
				return
			}
			d := ev.ExceptionDetails
			text, _, _ := strings.Cut(exceptionText(d), "\n") // the message, not its stack
			if strings.Contains(text, x.marker) {
				close(x.done)
				return
			}
			// line:column, from 1 (the protocol's are from 0)
			x.list.add(fmt.Sprintf("%s (%d:%d): %s", clip(d.Text), d.LineNumber+1, d.ColumnNumber+1, clip(text)))
		}
	}()
	return x
}

// settle waits until x holds every exception thrown so far: the events
// come in order but reach x's reader when they will, so the page throws
// a marker of x's own in a task after the others, and x waits for it.
// A page whose scripts never let the task run is stopped by ctx.
func (x *exceptions) settle(ctx context.Context, t *chromedp.Target) error {
	quoted, err := json.Marshal(x.marker)
	if err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, t, cdpruntime.Evaluate, cdpruntime.EvaluateParams{
		Expression: fmt.Sprintf("setTimeout(() => { throw new Error(%s) })", quoted)}); err != nil {
		return err
	}
	select {
	case <-x.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// note counts a request of the page (rawURL) against the job's checks:
// it was answered status, or failed (0).
func (s *fileServer) note(rawURL string, kind network.ResourceType, status int) {
	name := clip(strings.TrimPrefix(rawURL, s.origin)) // a path, for the job's own origin, which the page's author never sees
	host := ""
	if u, err := url.Parse(rawURL); err == nil {
		host = u.Hostname()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case status == 0 && s.checks.FailOnResourceLoading:
		s.failed.add(fmt.Sprintf("%s (%s)", name, kind))
	case status != 0 && engine.StatusListed(s.checks.FailOnResourceStatus, status) && !ignored(s.checks.IgnoreResourceDomains, host):
		s.listed.add(fmt.Sprintf("%s - %d: %s", name, status, http.StatusText(status)))
	}
}

// clip is s, at most maxItemBytes of it: an item of a failure's message
// (a URL, an exception's message).
func clip(s string) string {
	if len(s) <= maxItemBytes {
		return s
	}
	return strings.ToValidUTF8(s[:maxItemBytes], "") + "..."
}

const maxItemBytes = 200

// check fails the job when its loaded page failed one of its checks:
// thrown are its exceptions (nil when not watched), the others its
// requests so far.
func (s *fileServer) check(thrown *exceptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case thrown != nil && thrown.list.n > 0:
		return &engine.PageFailure{Field: "failOnConsoleExceptions", Issue: "the page's scripts threw exceptions: " + thrown.list.String()}
	case s.failed.n > 0:
		return &engine.PageFailure{Field: "failOnResourceLoadingFailed",
			Issue: "resources of the page were not loaded (quire loads the uploaded files only): " + s.failed.String()}
	case s.listed.n > 0:
		return &engine.PageFailure{Field: "failOnResourceHttpStatusCodes", Issue: "resources of the page were answered a status listed: " + s.listed.String()}
	}
	return nil
}

// tally counts items, and keeps the first maxListed for a message.
type tally struct {
	first []string
	n     int
}

// maxListed is the most items of a failure's message.
const maxListed = 10

func (t *tally) add(item string) {
	if t.n++; len(t.first) < maxListed {
		t.first = append(t.first, item)
	}
}

func (t *tally) String() string {
	if t.n <= len(t.first) {
		return strings.Join(t.first, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(t.first, "; "), t.n-len(t.first))
}

// ignored reports whether host is one of domains, or under one.
func ignored(domains []string, host string) bool {
	host = strings.ToLower(host)
	return slices.ContainsFunc(domains, func(d string) bool {
		d = strings.ToLower(strings.TrimPrefix(d, "."))
		return host == d || strings.HasSuffix(host, "."+d)
	})
}
