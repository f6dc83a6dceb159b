package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/quire-dev/quire"
)

// PageExtras are options of a Chromium page that Gotenberg's routes take
// and quire's /v1/convert does not: a header and footer, the page on one
// sheet, CSS media features, a user agent and waits. Their details name
// Gotenberg's fields. The zero value asks for none.
type PageExtras struct {
	// HeaderHTML and FooterHTML are Chromium's header and footer
	// templates (Gotenberg's header.html and footer.html), drawn in the
	// top and bottom margins of every page: HTML whose elements of class
	// pageNumber, totalPages, title, date and url show those values.
	// Chromium loads nothing for them (images as data: URLs only). At
	// most MaxTemplateBytes each; "" for none.
	HeaderHTML, FooterHTML string
	// SinglePage prints the whole page on one sheet as tall as its
	// content (at most MaxSinglePageInches).
	SinglePage bool
	// MediaFeatures are the CSS media features the page is laid out for,
	// such as prefers-color-scheme: dark.
	MediaFeatures []MediaFeature
	// UserAgent is what the page's scripts read as navigator.userAgent;
	// "" for the browser's own.
	UserAgent string
	// The waits, once the page has loaded and before it is printed: a
	// delay, until an element matching WaitForSelector is visible, until
	// WaitForExpression is true. They need the page's scripts
	// (JobOptions.JavaScript), and end within the scripts' time limit.
	WaitDelay         time.Duration
	WaitForSelector   string
	WaitForExpression string
	// WaitNetworkIdle and WaitNetworkAlmostIdle wait, with the load,
	// until the page's requests have stopped (none for 500 ms, Chromium's
	// networkIdle) or nearly (at most two for 500 ms, networkAlmostIdle):
	// those its scripts make once it is loaded. Waits, as the others.
	WaitNetworkIdle       bool
	WaitNetworkAlmostIdle bool
	// The checks of the loaded page, once its waits are over: the job
	// fails with a *PageFailure naming the field when its scripts threw
	// an exception they did not catch (FailOnExceptions), when a
	// resource it asked for was not loaded (FailOnResourceLoading), or
	// when one was answered a status of FailOnResourceStatus (an x99
	// entry stands for x00 to x99) from a host other than
	// IgnoreResourceDomains and their subdomains.
	FailOnExceptions      bool
	FailOnResourceLoading bool
	FailOnResourceStatus  []int
	IgnoreResourceDomains []string
	// NoTags and NoOutline leave out of the PDF what Chromium's PDFs
	// otherwise hold: the tags (the structure tree readers of the blind
	// follow) and the outline of the page's headings (its bookmarks).
	NoTags, NoOutline bool
}

// PageFailure is a page that failed one of the checks its job asked for
// (PageExtras' FailOn fields): Gotenberg's 409. It matches
// ErrUnprocessable.
type PageFailure struct {
	Field string // Gotenberg's field of the check
	Issue string // what the page did
}

func (e *PageFailure) Error() string {
	return fmt.Sprintf("%v: %s (%s)", ErrUnprocessable, e.Issue, e.Field)
}

func (e *PageFailure) Unwrap() error { return ErrUnprocessable }

// StatusListed reports whether status is among codes, in which an x99
// entry stands for every status from x00 to x99 (Gotenberg's lists).
func StatusListed(codes []int, status int) bool {
	return slices.ContainsFunc(codes, func(c int) bool { return c == status || c%100 == 99 && status/100 == c/100 })
}

// MediaFeature is a CSS media feature and its value.
type MediaFeature struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MediaFeatureNames are the media features a page may be laid out for:
// the user's preferences Chromium emulates.
var MediaFeatureNames = []string{"color-gamut", "forced-colors", "prefers-color-scheme", "prefers-contrast",
	"prefers-reduced-data", "prefers-reduced-motion", "prefers-reduced-transparency"}

// Bounds of PageExtras.
const (
	MaxTemplateBytes    = 256 << 10 // a header or footer, data: images included
	MaxScriptTextBytes  = 4096      // a selector, an expression, a user agent
	MaxSinglePageInches = 200       // a PDF page's largest side (14,400 units)
)

// Waits reports whether p asks the page to wait for anything.
func (p PageExtras) Waits() bool {
	return p.WaitDelay != 0 || p.WaitForSelector != "" || p.WaitForExpression != "" || p.WaitNetworkIdle || p.WaitNetworkAlmostIdle
}

// details name what is wrong with p, among o's other options.
func (p PageExtras) details(o JobOptions) []quire.Detail {
	var d []quire.Detail
	bad := func(field, issue string, a ...any) {
		d = append(d, quire.Detail{Field: field, Issue: fmt.Sprintf(issue, a...)})
	}
	for _, t := range [...]struct{ field, tpl string }{{"header.html", p.HeaderHTML}, {"footer.html", p.FooterHTML}} {
		field, tpl := t.field, t.tpl
		if len(tpl) > MaxTemplateBytes {
			bad(field, "is %d bytes, more than %d", len(tpl), MaxTemplateBytes)
		}
		if tpl != "" && o.Shot.Format != "" {
			bad(field, "applies to a PDF, not to an image")
		}
	}
	if p.SinglePage && o.Shot.Format != "" {
		bad("singlePage", "applies to a PDF, not to an image")
	}
	if p.NoTags && o.PDFUA {
		bad("generateTaggedPdf", "must be true with pdfua: a PDF/UA document is tagged")
	}
	if p.SinglePage && o.PageRanges != "" {
		bad("singlePage", "prints the page on one sheet: it takes no page ranges")
	}
	d = append(d, p.waitDetails(o.JavaScript)...)
	if issue := textIssue(p.UserAgent); issue != "" {
		bad("userAgent", "%s", issue)
	}
	d = append(d, mediaFeatureDetails(p.MediaFeatures)...)
	for _, c := range p.FailOnResourceStatus {
		if c < 100 || c > 599 {
			bad("failOnResourceHttpStatusCodes", "lists %d, which is not an HTTP status", c)
		}
	}
	for _, domain := range p.IgnoreResourceDomains {
		if issue := textIssue(domain); issue != "" || domain == "" {
			bad("ignoreResourceHttpStatusDomains", "must list domain names such as example.com")
		}
	}
	return d
}

// waitDetails name what is wrong with p's waits, for a page whose
// scripts run when scripts.
func (p PageExtras) waitDetails(scripts bool) []quire.Detail {
	var d []quire.Detail
	bad := func(field, issue string) { d = append(d, quire.Detail{Field: field, Issue: issue}) }
	if p.WaitDelay < 0 {
		bad("waitDelay", "must not be negative")
	}
	for _, w := range [...]struct{ field, text string }{{"waitForSelector", p.WaitForSelector}, {"waitForExpression", p.WaitForExpression}} {
		if issue := textIssue(w.text); issue != "" {
			bad(w.field, issue)
		}
	}
	if p.Waits() && !scripts {
		for _, w := range []struct {
			set  bool
			name string
		}{{p.WaitDelay != 0, "waitDelay"}, {p.WaitForSelector != "", "waitForSelector"}, {p.WaitForExpression != "", "waitForExpression"}} {
			if w.set {
				bad(w.name, "needs the page's scripts on (javascript)")
			}
		}
	}
	return d
}

// textIssue is what is wrong with a line of text the page is given (a
// selector, an expression, a user agent), or "".
func textIssue(s string) string {
	switch {
	case len(s) > MaxScriptTextBytes:
		return fmt.Sprintf("must be at most %d bytes", MaxScriptTextBytes)
	case strings.ContainsFunc(s, func(r rune) bool { return r != '\t' && unicode.IsControl(r) }):
		return "must be one line of text, without control characters"
	}
	return ""
}

// mediaFeatureDetails name what is wrong with a list of media features.
func mediaFeatureDetails(fs []MediaFeature) []quire.Detail {
	bad := func(issue string, a ...any) []quire.Detail {
		return []quire.Detail{{Field: "emulatedMediaFeatures", Issue: fmt.Sprintf(issue, a...)}}
	}
	if len(fs) > len(MediaFeatureNames) {
		return bad("lists %d features, more than the %d there are", len(fs), len(MediaFeatureNames))
	}
	for _, f := range fs {
		if !slices.Contains(MediaFeatureNames, f.Name) {
			return bad("names '%s', which is not one of %s", f.Name, strings.Join(MediaFeatureNames, ", "))
		}
		if f.Value == "" || len(f.Value) > 64 || strings.ContainsFunc(f.Value, unicode.IsControl) {
			return bad("gives '%s' no value, or one that is not a short word such as dark", f.Name)
		}
	}
	return nil
}
