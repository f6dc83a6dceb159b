package safeinput

import (
	"bytes"
	"fmt"

	"github.com/quire-dev/quire/internal/engine"
	"golang.org/x/net/html"
)

// Markdown and HTML nested deeper than TextLimits.MaxNesting are refused
// before any engine sees them: no real document nests block quotes,
// lists or elements hundreds deep, and such input costs an engine far
// more than its size. Markdown of 100,000 nested quotes (100 KB) keeps
// goldmark busy for minutes (its block parser is quadratic in the depth:
// 50 ms at 1000 quotes, 2.8 s at 20,000, 105 s at 100,000, measured), and
// LibreOffice then held a worker for the whole job timeout. Browsers stop
// nesting at 512 elements (Blink's parser, and x/net/html's, which
// refuses the document): what is deeper is broken or hostile.
//
// Both measures are made in one linear pass over the text and stop at
// the limit; neither parses the document.

// DefaultMaxNesting is TextLimits.MaxNesting's default.
const DefaultMaxNesting = 200

// CheckNesting returns nil when in, a document of format from, nests no
// deeper than limit (negative: no limit), and otherwise an error matching
// ErrUnprocessable. Only Markdown and HTML are measured; it serves every
// engine, and runs before the engine is chosen.
func CheckNesting(in []byte, from string, limit int) error {
	if limit < 0 {
		return nil
	}
	var deep bool
	var what string
	switch from {
	case engine.FromMarkdown:
		deep, what = markdownDeeperThan(in, limit), "block quotes, list items or brackets"
	case engine.FromHTML:
		deep, what = htmlDeeperThan(in, limit), "elements"
	default:
		return nil
	}
	if deep {
		return fmt.Errorf("%w: its %s are nested more than %d deep (QUIRE_CONVERT_MAX_NESTING)", engine.ErrUnprocessable, what, limit)
	}
	return nil
}

// markdownDeeperThan reports whether a line of the Markdown src opens
// more than limit containers (markdownDepth), or a paragraph more than
// limit brackets and parentheses: goldmark's inline parser is quadratic
// in them too ("[a](" 50,000 times, 200 KB, took 36 s).
func markdownDeeperThan(src []byte, limit int) bool {
	brackets := 0 // open in the current paragraph
	for line := range bytes.Lines(src) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		if markdownDepth(line) > limit {
			return true
		}
		if len(bytes.TrimSpace(line)) == 0 {
			brackets = 0 // a blank line ends inline content
		}
		deep := false
		if brackets, deep = openBrackets(line, brackets, limit); deep {
			return true
		}
	}
	return false
}

// openBrackets returns how many brackets and parentheses are open after
// line, with open before it, and whether more than limit were at once.
func openBrackets(line []byte, open, limit int) (int, bool) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++ // an escaped character
		case '[', '(':
			if open++; open > limit {
				return open, true
			}
		case ']', ')':
			open = max(0, open-1)
		}
	}
	return open, false
}

// markdownDepth bounds how many containers (block quotes, list items) a
// line of Markdown sits in: one per marker at its start ("> > - 1. text"
// is four deep), and one per two columns of the white space among them
// (but the space that ends a marker), since a line indented under a list
// item nests in it. It counts a little more than CommonMark would, never
// less.
func markdownDepth(line []byte) int {
	markers, columns := 0, 0
	for i := 0; i < len(line); {
		c := line[i]
		end := i + 1 // of the marker starting at i, if it is one
		switch {
		case c == ' ':
			columns, i = columns+1, i+1
			continue
		case c == '\t':
			columns, i = columns+4, i+1
			continue
		case c == '>':
		case c == '-' || c == '*' || c == '+':
			if !endsMarker(line, end) {
				return markers + columns/2
			}
		case '0' <= c && c <= '9':
			for end < len(line) && end-i < 9 && '0' <= line[end] && line[end] <= '9' {
				end++
			}
			if end == len(line) || (line[end] != '.' && line[end] != ')') || !endsMarker(line, end+1) {
				return markers + columns/2
			}
			end++
		default:
			return markers + columns/2
		}
		markers, i = markers+1, end
		if i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++ // the marker's own space
		}
	}
	return markers + columns/2
}

// endsMarker reports whether a list marker ending before line[i] is one:
// followed by white space or the end of the line.
func endsMarker(line []byte, i int) bool {
	return i == len(line) || line[i] == ' ' || line[i] == '\t'
}

// htmlDeeperThan reports whether the HTML in holds elements open more
// than limit deep. Elements are counted as HTML parsers nest them, a
// little short: void elements never hold others, and elements whose end
// tag may be left out (p, li, td, ...) are not counted, since the next of
// their kind closes them; an end tag closes the elements opened since the
// start tag it matches; "/>" closes only inside SVG and MathML.
func htmlDeeperThan(in []byte, limit int) bool {
	z := html.NewTokenizer(bytes.NewReader(in))
	var open []string // names of the elements open, innermost last
	foreign := 0      // open svg and math elements
	for {
		switch tt := z.Next(); tt {
		case html.ErrorToken:
			return false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			if unnested[string(name)] || tt == html.SelfClosingTagToken && foreign > 0 {
				continue
			}
			open = append(open, string(name))
			if isForeign(open[len(open)-1]) {
				foreign++
			}
			if len(open) > limit {
				return true
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if i := lastIndex(open, string(name)); i >= 0 {
				for _, n := range open[i:] {
					if isForeign(n) {
						foreign--
					}
				}
				open = open[:i]
			}
		}
	}
}

func lastIndex(names []string, name string) int {
	for i := len(names) - 1; i >= 0; i-- {
		if names[i] == name {
			return i
		}
	}
	return -1
}

// isForeign reports whether the element name starts SVG or MathML, where
// "/>" closes an element as in XML.
func isForeign(name string) bool { return name == "svg" || name == "math" }

// unnested are the elements that do not count: void elements, which hold
// nothing, and those whose end tag HTML lets an author leave out, which
// the parser closes when a sibling or the parent ends.
var unnested = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true, "input": true,
	"keygen": true, "link": true, "meta": true, "param": true, "source": true, "track": true, "wbr": true,
	"html": true, "head": true, "body": true, "p": true, "li": true, "dt": true, "dd": true, "option": true,
	"optgroup": true, "rb": true, "rt": true, "rtc": true, "rp": true, "tr": true, "td": true, "th": true,
	"thead": true, "tbody": true, "tfoot": true, "colgroup": true, "caption": true,
}
