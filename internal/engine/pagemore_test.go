package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
)

// Gotenberg's page options are validated with the others, each bad one
// named by Gotenberg's field: the waits need the page's scripts.
func TestPageExtrasValidate(t *testing.T) {
	pdf, shot := JobOptions{}, JobOptions{Shot: Shot{Format: "png", Width: 800, Height: 600}}
	with := func(o JobOptions, p PageExtras, js bool) JobOptions { o.Page, o.JavaScript = p, js; return o }
	dark := []MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}
	for _, c := range []struct {
		o    JobOptions
		want []string
	}{
		{with(pdf, PageExtras{HeaderHTML: "<p>h</p>", FooterHTML: "<p>f</p>", SinglePage: true, MediaFeatures: dark, UserAgent: "UA/1"}, false), nil},
		{with(shot, PageExtras{WaitDelay: time.Second, WaitForSelector: "#a", WaitForExpression: "window.ok"}, true), nil},
		{with(pdf, PageExtras{WaitDelay: time.Second, WaitForSelector: "#a", WaitForExpression: "x"}, false),
			[]string{"waitDelay", "waitForSelector", "waitForExpression"}},
		{with(pdf, PageExtras{WaitDelay: -time.Second}, true), []string{"waitDelay"}},
		{with(shot, PageExtras{HeaderHTML: "h", SinglePage: true}, false), []string{"header.html", "singlePage"}},
		{with(pdf, PageExtras{FooterHTML: strings.Repeat("x", MaxTemplateBytes+1)}, false), []string{"footer.html"}},
		{with(JobOptions{PageRanges: "1"}, PageExtras{SinglePage: true}, false), []string{"singlePage"}},
		{with(pdf, PageExtras{UserAgent: "a\r\nX-Evil: 1"}, false), []string{"userAgent"}},
		{with(pdf, PageExtras{WaitForExpression: strings.Repeat("1", MaxScriptTextBytes+1)}, true), []string{"waitForExpression"}},
		{with(pdf, PageExtras{MediaFeatures: []MediaFeature{{Name: "width", Value: "1"}}}, false), []string{"emulatedMediaFeatures"}},
		{with(pdf, PageExtras{MediaFeatures: []MediaFeature{{Name: "prefers-color-scheme"}}}, false), []string{"emulatedMediaFeatures"}},
		{JobOptions{Shot: Shot{Format: "png", Width: 800, Height: 600, DeviceScaleFactor: 5}}, []string{"deviceScaleFactor"}},
		{with(shot, PageExtras{FailOnExceptions: true, FailOnResourceLoading: true, FailOnResourceStatus: []int{404, 599},
			IgnoreResourceDomains: []string{"example.com"}}, true), nil},
		{with(pdf, PageExtras{FailOnResourceStatus: []int{42}, IgnoreResourceDomains: []string{""}}, false),
			[]string{"failOnResourceHttpStatusCodes", "ignoreResourceHttpStatusDomains"}},
	} {
		err := c.o.Validate(FromHTML, ToPDF)
		if fields := detailFields(err); !slices.Equal(fields, c.want) || (err == nil) != (c.want == nil) {
			t.Errorf("%+v: %v, want the fields %v", c.o.Page, err, c.want)
		}
	}
}

// An x99 entry of a list of statuses stands for its hundred.
func TestStatusListed(t *testing.T) {
	for _, c := range []struct {
		codes  []int
		status int
		want   bool
	}{
		{[]int{404}, 404, true}, {[]int{404}, 403, false}, {[]int{499}, 400, true}, {[]int{499}, 451, true},
		{[]int{499}, 500, false}, {[]int{299}, 200, true}, {[]int{499, 599}, 200, false}, {nil, 200, false},
	} {
		if got := StatusListed(c.codes, c.status); got != c.want {
			t.Errorf("StatusListed(%v, %d) = %v", c.codes, c.status, got)
		}
	}
}

// A page's failed check is a 422 whose detail names the check's field.
func TestPageFailureAPIError(t *testing.T) {
	err := ToAPIError(fmt.Errorf("printing: %w", &PageFailure{Field: "failOnConsoleExceptions", Issue: "it threw"}), 0)
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodeUnprocessable || len(qe.Details) != 1 || qe.Details[0].Field != "failOnConsoleExceptions" ||
		!strings.Contains(qe.Message, "it threw") {
		t.Errorf("%#v, want UNPROCESSABLE_DOCUMENT naming failOnConsoleExceptions", err)
	}
}
