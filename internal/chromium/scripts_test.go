package chromium

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// TestPagesBounded: a page's dialogs are dismissed, its navigation away
// ends its job with a 422 of its own (not the job's timeout, set far
// beyond the script budget), a script that runs without end after the
// load is stopped for the print, and a print past the page cap is
// refused (TestEndlessScript: a script that never lets the page load).
func TestPagesBounded(t *testing.T) {
	p := newPool(t, 1, func(o *Options) {
		o.JobTimeout = 10 * time.Minute // never reached: the page's own limits answer
		o.Page = PageLimits{ScriptTimeout: 5 * time.Second, MaxPages: 5}
	})
	js := engine.JobOptions{JavaScript: true}

	r, err := p.Convert(context.Background(), html(`<script>alert(1); confirm("sure?"); prompt("name?"); onbeforeunload = () => "stay"</script><p>Dismissed</p>`), js)
	if err != nil {
		t.Fatalf("a page with dialogs: %v", err)
	}
	if words := fmt.Sprint(pdfWords(t, r.Output)); !strings.Contains(words, "Dismissed") {
		t.Errorf("a page with dialogs printed %s", words)
	}

	for _, c := range []struct {
		name, doc string
		opts      engine.JobOptions
		want      error
	}{
		{"blocked navigation", `<script>location.href = "http://10.1.2.3/away.html"</script><p>x</p>`, js, ErrNavigatedAway},
		{"navigation within the origin", `<script>location.href = "/other.html"</script><p>x</p>`, js, ErrNavigatedAway},
		{"endless script after the load", `<p>x</p><script>onload = () => setTimeout(() => { while (true) {} }, 0)</script>`, js, nil},
		{"past the page cap", strings.Repeat(`<p style="break-after: page">page</p>`, 500), engine.JobOptions{}, ErrTooManyPages},
		{"ranges past the page cap", strings.Repeat(`<p style="break-after: page">page</p>`, 20), engine.JobOptions{PageRanges: "7-9"}, ErrTooManyPages},
		{"within the page cap", strings.Repeat(`<p style="break-after: page">page</p>`, 5), engine.JobOptions{}, nil},
		{"ranges within the page cap", strings.Repeat(`<p style="break-after: page">page</p>`, 20), engine.JobOptions{PageRanges: "2-4,9"}, nil},
	} {
		_, err := p.Convert(context.Background(), html(c.doc), c.opts)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		case c.want != nil && !is4xx(err):
			t.Errorf("%s: %v is not a 4xx", c.name, err)
		}
	}
}
