package certpage

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// coverageNames are signers whose names need the fallback fonts beyond
// DejaVu Sans: Thai and Indic scripts (Noto Sans) and emoji (Symbola).
var coverageNames = map[string]string{
	"latin":      "Zoë Ångström-Łukasz",
	"thai-indic": "สมชาย ใจดี अनीता शर्मा தமிழ் বাংলা",
	"emoji":      "Emma 😀🎉✍ Stone ☕",
}

// TestGlyphCoverage renders a certificate for each name and requires that
// no glyph drawn is .notdef (glyph 0 of its embedded subset, the empty
// box), and that the text maps back to the name (ToUnicode). It renders
// the first page with pdftoppm into $CERTPAGE_PNG_DIR (a temporary
// directory when unset, named in the log) for a reviewer's eye, with a
// drawn signature in the signature box.
func TestGlyphCoverage(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CERTPAGE_PNG_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for script, name := range coverageNames {
		t.Run(script, func(t *testing.T) {
			d := sampleData(name)
			d.Events = append(d.Events, Event{Type: "field_change", Timestamp: t0, Data: map[string]any{"fieldId": "signature", "value": signaturePNG(t, 400, 150)}})
			path, _, _ := renderFile(t, d, A4)
			pages, _, err := testRenderer(t).Pages(d, A4)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range pages {
				if cids := notdefs(p.Content); cids > 0 {
					t.Errorf("page %d draws .notdef %d times", i+1, cids)
				}
			}
			// pdftotext puts spaces inside Indic words where the shaper
			// moved marks: spaces are left out of the comparison.
			if text := extractText(t, path); !strings.Contains(noSpace(text), noSpace(name)) {
				t.Errorf("pdftotext output lacks %q:\n%s", name, text)
			}
			png := filepath.Join(dir, "certificate-"+script)
			run(t, "poppler-utils", "pdftoppm", "-png", "-r", "80", "-f", "1", "-l", "1", "-singlefile", path, png)
			t.Logf("rendered the first page to %s.png", png)
		})
	}
}

// TestNotdefsCounted: a character that no font has (U+1FAE8, an emoji of
// Unicode 15, after Symbola's Unicode 9) is drawn as .notdef, and the
// check above sees it.
func TestNotdefsCounted(t *testing.T) {
	t.Parallel()
	pages, _, err := testRenderer(t).Pages(sampleData("Ann \U0001FAE8"), A4)
	if err != nil {
		t.Fatal(err)
	}
	if n := notdefs(pages[0].Content); n == 0 {
		t.Error("no .notdef found for a character no font has")
	}
}

var hexString = regexp.MustCompile(`<([0-9A-F]*)>`)

// notdefs counts the glyphs of code 0 in a content stream: certpage writes
// glyphs as 4-digit hex codes, and code 0 is .notdef in every font it
// embeds (the subset keeps glyph 0 first).
func notdefs(content []byte) int {
	n := 0
	for _, m := range hexString.FindAllSubmatch(content, -1) {
		for i := 0; i+4 <= len(m[1]); i += 4 {
			if string(m[1][i:i+4]) == "0000" {
				n++
			}
		}
	}
	return n
}

func noSpace(s string) string { return strings.Join(strings.Fields(s), "") }
