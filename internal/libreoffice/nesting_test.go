package libreoffice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/safeinput"
)

// indentedList is Markdown of a list nested depth levels by indentation.
func indentedList(depth int) string {
	var b strings.Builder
	for i := range depth {
		fmt.Fprintf(&b, "%s- level %d\n", strings.Repeat("  ", i), i)
	}
	return b.String()
}

// nestingCases are documents around the limit of 200: deep ones (the
// issue's, and the ways around a naive count) and real-looking ones.
var nestingCases = []struct {
	name, from, in string
	deep           bool
}{
	{"100,000 nested quotes (100 KB)", engine.FromMarkdown, strings.Repeat(">", 100_000) + " quoted\n", true},
	{"50,000 nested list levels", engine.FromMarkdown, strings.Repeat("- ", 50_000) + "item\n", true},
	{"ordered lists 300 deep", engine.FromMarkdown, strings.Repeat("1) ", 300) + "item\n", true},
	{"a list nested 300 deep by indentation", engine.FromMarkdown, indentedList(300), true},
	{"quotes and lists 201 deep", engine.FromMarkdown, strings.Repeat("> - ", 100) + ">\n", true},
	{"links 50,000 deep", engine.FromMarkdown, strings.Repeat("[a](", 50_000), true},
	{"brackets 201 deep over lines", engine.FromMarkdown, strings.Repeat("[a\n", 201), true},
	{"quotes 200 deep", engine.FromMarkdown, strings.Repeat("> ", 200) + "quoted\n", false},
	{"a README", engine.FromMarkdown, "# Title\n\n> a quote\n> > nested\n\n- a\n  - b\n    1. c\n\n* * *\n\n```\n        code\n```\n", false},
	{"1000 smileys :-( in paragraphs", engine.FromMarkdown, strings.Repeat("sad :-( \\[ but\n\n", 1000), false},
	{"200,000 nested elements", engine.FromHTML, strings.Repeat("<div>", 200_000) + "deep", true},
	{"200,000 self-closed divs, which HTML nests", engine.FromHTML, strings.Repeat("<div/>", 200_000), true},
	{"201 nested spans closed", engine.FromHTML, strings.Repeat("<span>", 201) + "x" + strings.Repeat("</span>", 201), true},
	{"200 nested spans", engine.FromHTML, "<!DOCTYPE html><html><body>" + strings.Repeat("<span>", 200) + "x" + strings.Repeat("</span>", 200) + "</body></html>", false},
	{"200,000 paragraphs left open", engine.FromHTML, strings.Repeat("<p>para", 200_000), false},
	{"200,000 elements side by side", engine.FromHTML, strings.Repeat("<div><b>x</b><br></div>", 200_000), false},
	{"SVG of 1000 self-closed shapes", engine.FromHTML, "<svg>" + strings.Repeat("<rect/>", 1000) + "</svg>", false},
	{"stray end tags", engine.FromHTML, strings.Repeat("</div>", 1000) + strings.Repeat("<div>", 150) + strings.Repeat("</section>", 1000), false},
}

func TestCheckNesting(t *testing.T) {
	for _, c := range nestingCases {
		err := safeinput.CheckNesting([]byte(c.in), c.from, safeinput.DefaultMaxNesting)
		switch {
		case c.deep && (!errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "QUIRE_CONVERT_MAX_NESTING")):
			t.Errorf("%s: %v, want ErrUnprocessable naming the limit", c.name, err)
		case !c.deep && err != nil:
			t.Errorf("%s: %v, want nil", c.name, err)
		}
		if err := safeinput.CheckNesting([]byte(c.in), c.from, -1); err != nil {
			t.Errorf("%s without a limit: %v", c.name, err)
		}
	}
	if err := safeinput.CheckNesting([]byte(strings.Repeat("<div>", 1000)), engine.FromDOCX, 10); err != nil {
		t.Errorf("a format that is not measured: %v", err)
	}
}

// TestDeepNestingIsRefusedBeforeTheEngine: the deep documents end in 422
// naming the limit, before a worker sees them (the script engine converts
// anything: the counters tell), and the others reach it.
func TestDeepNestingIsRefusedBeforeTheEngine(t *testing.T) {
	p := testPool(t, "script", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	reached := uint64(0)
	for _, c := range nestingCases {
		_, err := p.Convert(context.Background(), []byte(c.in), c.from)
		switch {
		case c.deep && (apiCode(err) != quire.CodeUnprocessable || !strings.Contains(err.Error(), "QUIRE_CONVERT_MAX_NESTING")):
			t.Errorf("%s: %v, want 422 naming the limit", c.name, err)
		case !c.deep && err != nil:
			t.Errorf("%s: %v, want it converted", c.name, err)
		case !c.deep:
			reached++
		}
	}
	if c := p.Counters(); c.Converted+c.Failed != reached {
		t.Errorf("counters %+v: want exactly the %d documents within the limit to reach the worker", c, reached)
	}
}

// TestNestingAtTheLimitConverts: LibreOffice converts Markdown and HTML
// nested as deep as the limit allows, well within a job's time, so the
// limit refuses nothing the engine would have served. (The large flat
// cases are no test of nesting: 200,000 paragraphs exceed a job's time
// in LibreOffice whatever their depth.)
func TestNestingAtTheLimitConverts(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	atTheLimit := []string{"quotes 200 deep", "a README", "200 nested spans", "stray end tags"}
	for _, c := range nestingCases {
		if !slices.Contains(atTheLimit, c.name) {
			continue
		}
		r, err := p.ConvertTimed(context.Background(), []byte(c.in), c.from)
		if err != nil || !bytes.HasPrefix(r.Output, []byte("%PDF-")) {
			t.Errorf("%s: %v, want a PDF", c.name, err)
			continue
		}
		t.Logf("%s: %v in LibreOffice", c.name, r.Engine.Round(time.Millisecond))
	}
}
