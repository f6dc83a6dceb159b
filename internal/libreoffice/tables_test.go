package libreoffice

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/safeinput"
)

// markdownTable is a GFM table of cols columns and rows body rows.
func markdownTable(cols, rows int) string {
	return "|" + strings.Repeat(" a |", cols) + "\n|" + strings.Repeat("---|", cols) + "\n" + strings.Repeat("|"+strings.Repeat(" b |", cols)+"\n", rows)
}

// tableCases are Markdown documents around the default limit of 100,000
// cells.
var tableCases = []struct {
	name, in string
	over     bool
}{
	{"50,000 columns, two rows", markdownTable(50_000, 1), true},
	{"two columns, 60,000 rows", markdownTable(2, 60_000), true},
	{"a header of 100,001 cells, no pipes at the ends", strings.Repeat("a|", 100_000) + "a\n" + strings.Repeat("-|", 100_000) + "-\n", true},
	{"body rows longer than the header", "| a |\n|---|\n" + strings.Repeat("|"+strings.Repeat(" b |", 1000)+"\n", 101), true},
	{"1000 columns, 99 rows", markdownTable(1000, 98), false},
	{"a README's table", "# T\n\n| Name | Size |\n|:-----|-----:|\n| a \\| b | 1 |\n\ntext | with a pipe\n", false},
	{"tables of 50,000 cells each, apart", markdownTable(2, 24_999) + "\n" + markdownTable(2, 24_999) + "\n" + markdownTable(2, 24_999), false},
	{"pipes without a delimiter row", strings.Repeat("a | b | c\n", 100_000), false},
}

func TestCheckTextTables(t *testing.T) {
	for _, c := range tableCases {
		err := safeinput.CheckText([]byte(c.in), engine.FromMarkdown, safeinput.TextLimits{})
		switch {
		case c.over && (!errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "QUIRE_CONVERT_MAX_TABLE_CELLS")):
			t.Errorf("%s: %v, want ErrUnprocessable naming the limit", c.name, err)
		case !c.over && err != nil:
			t.Errorf("%s: %v, want nil", c.name, err)
		}
		if err := safeinput.CheckText([]byte(c.in), engine.FromMarkdown, safeinput.TextLimits{MaxTableCells: -1}); err != nil {
			t.Errorf("%s without a limit: %v", c.name, err)
		}
	}
	if err := safeinput.CheckText([]byte(markdownTable(10, 10)), engine.FromMarkdown, safeinput.TextLimits{MaxTableCells: 100}); err == nil {
		t.Error("a table of 110 cells passed a limit of 100")
	}
	if err := safeinput.CheckText([]byte(markdownTable(50_000, 1)), engine.FromHTML, safeinput.TextLimits{}); err != nil {
		t.Errorf("HTML is not measured for Markdown tables: %v", err)
	}
}

// TestLargeTableIsRefusedBeforeTheEngine: a table over the limit ends in
// 422 naming it (the check's answer, before goldmark renders anything)
// and never reaches LibreOffice; a large table within it converts.
func TestLargeTableIsRefusedBeforeTheEngine(t *testing.T) {
	p, counters := sharedSerial(t)
	for _, c := range tableCases[:2] {
		_, err := p.Convert(context.Background(), []byte(c.in), engine.FromMarkdown)
		if apiCode(err) != quire.CodeUnprocessable || !strings.Contains(err.Error(), "QUIRE_CONVERT_MAX_TABLE_CELLS") {
			t.Errorf("%s: %v, want 422 naming the limit", c.name, err)
		}
	}
	if c := counters(); c.Converted+c.Failed != 0 {
		t.Errorf("counters %+v: a table over the limit reached the worker", c)
	}
	if _, err := p.Convert(context.Background(), []byte(markdownTable(20, 200)), engine.FromMarkdown); err != nil {
		t.Errorf("a table of 20 columns and 200 rows: %v, want a PDF", err)
	}
}
