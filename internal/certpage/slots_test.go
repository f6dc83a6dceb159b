package certpage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
)

// TestSlotsReserved: the certificate reserves LaterSigners boxes, on its
// pages, apart from each other and from the signature box, with nothing
// painted inside them (a signature drawn there covers no signed text).
func TestSlotsReserved(t *testing.T) {
	for _, size := range []PageSize{A4, {Width: 298, Height: 420}, {Width: 842, Height: 595}} {
		c, err := testRenderer(t).Certificate(sampleData("Ann"), size)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Slots) != LaterSigners {
			t.Fatalf("%v: %d slots", size, len(c.Slots))
		}
		file, err := pdf.Write(c.Pages)
		if err != nil {
			t.Fatal(err)
		}
		d, err := pdf.Read(file, pdf.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		pages, _ := d.Pages()
		boxes := []Slot{{Page: 0, Rect: c.Signature}} // what a widget covers, by page
		for i, s := range c.Slots {
			r := pdf.Box(s.Rect)
			if s.Page < 0 || s.Page >= len(pages) || r.Empty() || r[0] < 0 || r[1] < 0 || r[2] > size.Width || r[3] > size.Height {
				t.Errorf("%v: slot %d on page %d at %v", size, i, s.Page, r)
				continue
			}
			for _, b := range boxes {
				if b.Page == s.Page && pdf.Box(b.Rect).Overlaps(r) {
					t.Errorf("%v: slot %d at %v overlaps %v", size, i, r, b.Rect)
				}
			}
			boxes = append(boxes, s)
			painted, err := d.PaintedBoxes(t.Context(), pages[s.Page])
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range painted {
				if p.Overlaps(r) {
					t.Errorf("%v: slot %d at %v has text or an image at %v", size, i, r, p)
				}
			}
		}
	}
}

// TestEntryText: a later signer's box says who signed, when, the event
// and the hash as received, in every script.
func TestEntryText(t *testing.T) {
	for script, name := range scriptNames {
		e := Entry{Signer: Signer{Name: name, Email: "signer@example.com"}, SignedAt: "2026-11-29 10:00:00 UTC",
			EventID: "evt_2", DocumentSHA256: strings.Repeat("ab", 32)}
		p, err := testRenderer(t).Entry(e, 250, 70)
		if err != nil {
			t.Fatal(err)
		}
		file, err := pdf.Write([]pdf.Page{p})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "entry.pdf")
		os.WriteFile(path, file, 0o600)
		text := extractText(t, path)
		for _, w := range []string{name, "signer@example.com", "2026-11-29 10:00:00 UTC", "Event evt_2", e.DocumentSHA256} {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the box lacks %q: %s", script, w, text)
			}
		}
	}
}
