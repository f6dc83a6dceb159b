package safeinput

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/quire-dev/quire/internal/engine"
)

// A Markdown table of tens of thousands of cells costs goldmark seconds
// in the server process, before any engine and outside the job timeout
// (its table parser is quadratic in the rows: 20,000 rows of two cells
// 0.6 s, 80,000 rows 2.0 s; 50,000 columns 1.3-2.4 s, measured on a
// loaded machine); no real document holds one. Tables larger than
// TextLimits.MaxTableCells are refused, measured in one linear pass that
// stops at the limit, like the nesting (nesting.go).

// DefaultMaxTableCells is TextLimits.MaxTableCells's default.
const DefaultMaxTableCells = 100_000

// TextLimits bound what a Markdown or HTML document may hold, checked
// before any engine (and goldmark) sees it. A zero field selects its
// default; a negative one, no limit.
type TextLimits struct {
	MaxNesting    int // DefaultMaxNesting: see CheckNesting
	MaxTableCells int // DefaultMaxTableCells: cells of one Markdown table
}

// CheckText returns nil when in, a document of format from, is within
// l, and otherwise an error matching ErrUnprocessable. Only Markdown and
// HTML are measured; it serves every engine.
func CheckText(in []byte, from string, l TextLimits) error {
	if err := CheckNesting(in, from, cmp.Or(l.MaxNesting, DefaultMaxNesting)); err != nil {
		return err
	}
	limit := cmp.Or(l.MaxTableCells, DefaultMaxTableCells)
	if from == engine.FromMarkdown && limit >= 0 && markdownTableOver(in, limit) {
		return fmt.Errorf("%w: a table has more than %d cells (QUIRE_CONVERT_MAX_TABLE_CELLS)", engine.ErrUnprocessable, limit)
	}
	return nil
}

// markdownTableOver reports whether a GFM table of src (a line with a
// pipe, then a delimiter row such as "|---|:-:|") has more than limit
// cells: each of its lines, up to a blank one, counts as many as it has
// cells or as the delimiter row, whichever is more. It counts a little
// more than GFM would (a line that ends the table by opening another
// block counts too), never less.
func markdownTableOver(src []byte, limit int) bool {
	prev, columns, cells := []byte(nil), 0, 0 // columns: 0 outside a table
	for line := range bytes.Lines(src) {
		line = bytes.TrimSuffix(line, []byte("\n"))
		switch {
		case columns > 0 && len(bytes.TrimSpace(line)) > 0:
			cells += max(columns, cellsOf(line))
		case isDelimiterRow(line) && bytes.IndexByte(prev, '|') >= 0:
			columns = cellsOf(line)
			cells = max(columns, cellsOf(prev)) + columns
		default:
			columns = 0
		}
		if cells > limit {
			return true
		}
		if columns == 0 {
			cells = 0
		}
		prev = line
	}
	return false
}

// cellsOf is how many cells a table line holds: one more than its
// unescaped pipes, but those at its ends.
func cellsOf(line []byte) int {
	line = bytes.TrimSpace(line)
	pipes := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			pipes++
		}
	}
	n := pipes + 1
	if bytes.HasPrefix(line, []byte("|")) {
		n--
	}
	if len(line) > 1 && bytes.HasSuffix(line, []byte("|")) && !bytes.HasSuffix(line, []byte(`\|`)) {
		n--
	}
	return max(n, 1)
}

// isDelimiterRow reports whether line may be a GFM table's delimiter
// row: pipes, colons, white space and at least one dash, nothing else.
func isDelimiterRow(line []byte) bool {
	dash := false
	for _, c := range line {
		switch c {
		case '-':
			dash = true
		case '|', ':', ' ', '\t':
		default:
			return false
		}
	}
	return dash
}
