package certpage

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

// Data is what a certificate shows. Every string may come from an API caller
// and is cleaned and bounded before it is drawn.
type Data struct {
	DocumentSHA256 string // hex digest of the document as received
	EventID        string
	Signer         Signer
	SignedAt       time.Time
	Events         []Event        // the audit trail, in the order received
	Metadata       map[string]any // the request's free-form metadata
	Certificate    CertInfo       // the certificate the document is signed with
	Organization   string         // who operates the signing service; empty: not shown
	VerifyHint     string         // how to verify, e.g. "POST /v1/verify or pdfsig"
}

// Signer is the person who signed. IP and UserAgent are optional.
type Signer struct {
	Name, Email, IP, UserAgent string
}

// Event is one entry of the audit trail. Data is the event's JSON object as
// decoded by encoding/json (maps, slices, strings, float64, bool, nil).
type Event struct {
	Type      string
	Timestamp time.Time
	Data      map[string]any
}

// CertInfo describes the signing certificate.
type CertInfo struct {
	Subject, Issuer     string
	SHA256              string // fingerprint of the DER certificate, hex
	NotBefore, NotAfter time.Time
}

// PageSize is a page size in points (1/72 inch). Callers pass the size of the
// signed document's last page as displayed, i.e. its MediaBox with /Rotate
// applied, so the certificate pages match the document.
type PageSize struct{ Width, Height float64 }

// A4 is the size used when the size given is not a usable number.
var A4 = PageSize{Width: 595.28, Height: 841.89}

// Page sizes outside this range are clamped: below it the text would be
// unreadable, above it PDF viewers may refuse the page (ISO 32000-1 C.2).
const (
	minPageSide = 144   // 2 inches
	maxPageSide = 14400 // 200 inches
)

// Options configures a Renderer.
type Options struct {
	// Fonts lists the fonts in fallback order: each character is drawn with
	// the first font that has it. Empty means DefaultFonts(FontDir).
	Fonts []FontFile
	// SignatureFont is the face in which the signature box shows the
	// signer's typed name when no drawn signature is given. An empty Path
	// means DefaultSignatureFont(FontDir).
	SignatureFont FontFile
	// FontDir is where the default fonts are looked for; empty means
	// DefaultFontDir. Unused for the fonts given.
	FontDir string
}

// Renderer renders certificates with fonts loaded once. It is safe for
// concurrent use: the parsed fonts are shared read-only and each render
// takes its own shaping state from a pool.
type Renderer struct {
	fonts   []*loadedFont
	shapers sync.Pool
}

// NewRenderer loads the fonts. A missing font file is an error naming the
// Debian package that ships it.
func NewRenderer(opts Options) (*Renderer, error) {
	files := opts.Fonts
	if len(files) == 0 {
		files = DefaultFonts(opts.FontDir)
	}
	sig := opts.SignatureFont
	if sig.Path == "" {
		sig = DefaultSignatureFont(opts.FontDir)
	}
	// The signature face comes last: the shaper and the document index
	// fonts by their place in this list.
	fonts, err := loadFonts(append(slices.Clone(files), sig))
	if err != nil {
		return nil, err
	}
	r := &Renderer{fonts: fonts}
	r.shapers.New = func() any { return newShaper(fonts) }
	return r, nil
}

// Render lays out the certificate for d on pages of the given size and
// returns a standalone PDF (one page or more, fonts and images embedded) and
// the rectangle [llx lly urx ury], in points on the first page, reserved for
// a visible signature widget. A size outside 144..14400 points per side is
// clamped into that range, and one that is not a positive number gives A4.
func (r *Renderer) Render(d Data, size PageSize) (file []byte, sigRect [4]float64, err error) {
	pages, sigRect, err := r.Pages(d, size)
	if err != nil {
		return nil, sigRect, err
	}
	if file, err = pdf.Write(pages); err != nil {
		return nil, [4]float64{}, fmt.Errorf("certpage: %w", err)
	}
	return file, sigRect, nil
}

// Pages lays out the certificate as Render does and returns its pages, to
// be appended to a document (pdf.Document.AppendPages) without a file in
// between. The pages share their resources: fonts and images are streams
// that the document writes once.
func (r *Renderer) Pages(d Data, size PageSize) (pages []pdf.Page, sigRect [4]float64, err error) {
	c, err := r.Certificate(d, size)
	return c.Pages, c.Signature, err
}

// Certificate lays out the certificate as Pages does, with the boxes
// reserved for later signers.
func (r *Renderer) Certificate(d Data, size PageSize) (c Certificate, err error) {
	// The input is untrusted and the shaping code large: a panic on some
	// unforeseen input must fail this render, not the process.
	defer func() {
		if v := recover(); v != nil {
			c, err = Certificate{}, fmt.Errorf("certpage: rendering failed: %v", v)
		}
	}()
	sh := r.shapers.Get().(*shaper)
	doc := newDocument(r.fonts, normalizeSize(size))
	l := newLayout(doc, sh)
	l.certificate(d)
	r.shapers.Put(sh) // not reached after a panic: that state is dropped
	return Certificate{Pages: doc.pageObjects(), Signature: l.sigRect, Slots: l.slots}, nil
}

// normalizeSize clamps the page size to what can hold a readable page.
func normalizeSize(s PageSize) PageSize {
	usable := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }
	if !usable(s.Width) || !usable(s.Height) {
		return A4
	}
	return PageSize{Width: clamp(s.Width, minPageSide, maxPageSide), Height: clamp(s.Height, minPageSide, maxPageSide)}
}

// Lazy is a Renderer whose fonts are loaded at its first use, so that a
// service starts, and signs without certificate pages, on a machine
// without them. A failed load is not remembered: installing a missing
// font package fixes a running service.
type Lazy struct {
	opt Options
	mu  sync.Mutex
	r   *Renderer
}

// NewLazy returns the renderer of opt, loaded at its first use.
func NewLazy(opt Options) *Lazy { return &Lazy{opt: opt} }

// Renderer returns the renderer, loading its fonts on first use.
func (l *Lazy) Renderer() (*Renderer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.r == nil {
		r, err := NewRenderer(l.opt)
		if err != nil {
			return nil, err
		}
		l.r = r
	}
	return l.r, nil
}

// Pages lays out with the renderer; see Renderer.Pages.
func (l *Lazy) Pages(d Data, size PageSize) (pages []pdf.Page, sigRect [4]float64, err error) {
	r, err := l.Renderer()
	if err != nil {
		return nil, sigRect, err
	}
	return r.Pages(d, size)
}
