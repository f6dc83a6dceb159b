package chromium

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/engine"
)

// exceptions collects the exceptions that a page's scripts throw and do
// not catch (Runtime.exceptionThrown), until settle.
type exceptions struct {
	marker string        // thrown by settle, last
	done   chan struct{} // closed once the marker came
	list   []string      // written until done
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
			x.list = append(x.list, fmt.Sprintf("%s (%d:%d): %s", d.Text, d.LineNumber+1, d.ColumnNumber+1, text))
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

// check fails the job when its loaded page failed one of p's checks:
// res are the page's requests, thrown its exceptions (nil when not
// watched, or settled).
func check(p engine.PageExtras, res []resource, thrown *exceptions) error {
	if thrown != nil && len(thrown.list) > 0 {
		return &engine.PageFailure{Field: "failOnConsoleExceptions", Issue: "the page's scripts threw exceptions: " + summary(thrown.list)}
	}
	var failed, listed []string
	for _, r := range res {
		switch {
		case r.status == 0:
			failed = append(failed, fmt.Sprintf("%s (%s)", r.name, r.kind))
		case engine.StatusListed(p.FailOnResourceStatus, r.status) && !ignored(p.IgnoreResourceDomains, r.host):
			listed = append(listed, fmt.Sprintf("%s - %d: %s", r.name, r.status, http.StatusText(r.status)))
		}
	}
	switch {
	case p.FailOnResourceLoading && len(failed) > 0:
		return &engine.PageFailure{Field: "failOnResourceLoadingFailed",
			Issue: "resources of the page were not loaded (quire loads the uploaded files only): " + summary(failed)}
	case len(listed) > 0:
		return &engine.PageFailure{Field: "failOnResourceHttpStatusCodes", Issue: "resources of the page were answered a status listed: " + summary(listed)}
	}
	return nil
}

// maxListed is the most items of a failure's message.
const maxListed = 10

// summary lists items, the first maxListed of them.
func summary(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:maxListed], "; "), len(items)-maxListed)
}

// ignored reports whether host is one of domains, or under one.
func ignored(domains []string, host string) bool {
	host = strings.ToLower(host)
	return slices.ContainsFunc(domains, func(d string) bool {
		d = strings.ToLower(strings.TrimPrefix(d, "."))
		return host == d || strings.HasSuffix(host, "."+d)
	})
}
