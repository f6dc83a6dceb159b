package certpage

import (
	"fmt"

	"github.com/quire-dev/quire/internal/pdf"
)

// LaterSigners is how many signers after the first the certificate makes
// room for: a signed document cannot gain pages (pdfsign.Slot), so each
// later signer is drawn in a box reserved on the first signer's pages.
const LaterSigners = 2

// Slot is a box reserved for a later signer.
type Slot struct {
	Page int        // 0-based, among the certificate's pages
	Rect [4]float64 // [llx lly urx ury] in points
}

// Certificate is a rendered certificate: its pages, the rectangle on the
// first page for the signature widget, and the boxes for later signers.
type Certificate struct {
	Pages     []pdf.Page
	Signature [4]float64
	Slots     []Slot
}

// laterSignatures reserves the boxes of the later signers, two to a row
// (one on a narrow page), each kept whole on one page, framed dashed, with
// nothing drawn inside: the signature that fills a box draws it.
func (l *layout) laterSignatures() {
	l.section("Later signatures")
	l.note("Signers after the first are shown in these boxes, each drawn by its own signature: " +
		"a signed document cannot gain pages without breaking the signatures it carries.")
	m := l.m
	cols := 2
	if m.stacked {
		cols = 1
	}
	gap := m.fs
	w := (m.contentW - float64(cols-1)*gap) / float64(cols)
	h := slotLines * slotLineHeight(m.fs)
	for i := 0; i < LaterSigners; i += cols {
		l.top -= 0.3 * m.lh
		l.ensure(h)
		for c := 0; c < cols && i+c < LaterSigners; c++ {
			x, y := m.x0+float64(c)*(w+gap), l.top-h
			l.pg.rect(x, y, w, h, 0.75, 0.5, true)
			l.slots = append(l.slots, Slot{Page: len(l.doc.pages) - 1, Rect: [4]float64{x, y, x + w, y + h}})
		}
		l.top -= h
	}
}

// A slot holds slotLines lines of small text.
const slotLines = 6

func slotLineHeight(fs float64) float64 { return lineHeight(textStyle{size: fs * 0.85}) }

// Entry is what a later signer's box shows.
type Entry struct {
	Signer         Signer
	SignedAt       string // as the signature's time is shown, UTC
	EventID        string
	DocumentSHA256 string // the document as this signer received it
	// The audit trail is not drawn: it is recorded with the event, and
	// POST /v1/verify gives it for this signature.
}

// Entry draws e in a box of w by h points and returns it as a page of
// that size (its content and resources, fonts subset and embedded), to be
// made the appearance of the signature that fills the box.
func (r *Renderer) Entry(e Entry, w, h float64) (p pdf.Page, err error) {
	defer func() { // untrusted text, large shaping code: as in Pages
		if v := recover(); v != nil {
			p, err = pdf.Page{}, fmt.Errorf("certpage: rendering failed: %v", v)
		}
	}()
	sh := r.shapers.Get().(*shaper)
	doc := newDocument(r.fonts, PageSize{Width: w, Height: h})
	pg := doc.addPage()
	lh := h / (slotLines + 0.5)
	st := textStyle{size: lh / 1.4}
	pad := st.size * 0.6
	// A hash of 64 hex digits fits a line at about 0.6 em a digit.
	hashSt := textStyle{size: min(st.size, (w-2*pad)/(64*0.62))}
	lines := []struct {
		text string
		st   textStyle
	}{
		{cleanShort(e.Signer.Name, maxNameRunes), textStyle{size: st.size, bold: true}},
		{cleanShort(e.Signer.Email, maxNameRunes), st},
		{"Signed at " + e.SignedAt, st},
		{"Event " + cleanShort(e.EventID, maxNameRunes), st},
		{"Document SHA-256, as this signer received it:", textStyle{size: st.size, gray: 0.35}},
		{cleanShort(e.DocumentSHA256, maxNameRunes), hashSt},
	}
	pg.clip(0, 0, w, h)
	top := h - pad/2
	for _, ln := range lines {
		top -= lh
		if shaped := sh.lines(ln.text, ln.st.size, w-2*pad); len(shaped) > 0 {
			pg.text(doc, shaped[0], pad+shaped[0].indent, top+0.25*lh, ln.st)
		}
	}
	pg.restore()
	r.shapers.Put(sh)
	return doc.pageObjects()[0], nil
}
