package pdfcheck

import (
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// TestProblems: a valid file has none, and every validator reports a
// damaged one.
func TestProblems(t *testing.T) {
	if p := Problems(t, pdftest.OnePage("fine")); len(p) > 0 {
		t.Errorf("a valid file: %v", p)
	}
	// The page's content stream says it is longer than it is, and the
	// cross-reference table points one object at the wrong offset.
	broken := strings.Replace(string(pdftest.OnePage("broken")), "/Length 37", "/Length 57", 1)
	broken = strings.Replace(broken, "0000000015 00000 n", "0000000025 00000 n", 1)
	p := strings.Join(Problems(t, []byte(broken)), "\n")
	t.Logf("problems found:\n%s", p)
	for _, tool := range []string{"qpdf:", "pdffonts:", "pdfinfo:", "mutool:", "pdfcpu:"} {
		if !strings.Contains(p, tool) {
			t.Errorf("%s finds no problem in a damaged file", tool)
		}
	}
}
