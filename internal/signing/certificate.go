package signing

import (
	"fmt"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// verifyHint tells the reader of a certificate page how to check it: in
// Acrobat or pdfsig, or on the service's verification page, named by its
// absolute URL when the service knows it.
func (s *Service) verifyHint() string {
	page := "open /verify on the server that signed it"
	if s.opt.PublicURL != "" {
		page = "open " + strings.TrimRight(s.opt.PublicURL, "/") + "/verify"
	}
	return "Open this PDF in Adobe Acrobat Reader or run pdfsig on it: the signature must be valid and cover the " +
		"whole document. To check it in a browser, " + page + " and drop the file there; its certificate is at GET /v1/verify/key."
}

// slotPrefix names the empty signature fields that a certificate page
// reserves for later signers ("Later signature 1", ...).
const slotPrefix = "Later signature "

// certificate prepares the signer's entry in the certificate: on a
// document not signed yet, the certificate pages appended, with the
// visible signature on the first and boxes reserved for later signers
// (empty signature fields); on a signed one, which cannot gain a page,
// the first free box of an earlier certificate, drawn by this signature.
// With no box left the signature is invisible: its /Reason names the
// signer and event, and /v1/verify gives the audit trail recorded.
func (s *Service) certificate(doc *pdf.Document, req Request, inputSHA string, at time.Time, opt *pdfsign.Options) error {
	signed, err := pdfsign.Signed(doc)
	if err != nil {
		return s.documentError(fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
	}
	r, err := s.opt.Certificates.Renderer()
	if err != nil {
		return s.certificateUnavailable(err)
	}
	if signed {
		return s.laterEntry(r, doc, req, inputSHA, at, opt)
	}
	w, h, err := doc.LastPageSize()
	if err != nil {
		return s.documentError(err)
	}
	c, err := r.Certificate(s.certificateData(req, inputSHA, at), certpage.PageSize{Width: w, Height: h})
	if err != nil {
		return s.certificateUnavailable(err)
	}
	first, err := doc.AppendPages(c.Pages)
	if err != nil {
		return s.documentError(err)
	}
	opt.Page, opt.Rect, opt.Appearance = first, c.Signature, appearance(c.Signature)
	for i, sl := range c.Slots {
		opt.Slots = append(opt.Slots, pdfsign.Slot{Name: fmt.Sprintf("%s%d", slotPrefix, i+1), Page: first + sl.Page, Rect: sl.Rect})
	}
	return nil
}

// laterEntry draws this signer in the first free box of a signed
// document's certificate, or leaves the signature invisible when there is
// none.
func (s *Service) laterEntry(r *certpage.Renderer, doc *pdf.Document, req Request, inputSHA string, at time.Time, opt *pdfsign.Options) error {
	slots, err := pdfsign.Slots(doc, slotPrefix)
	if err != nil {
		return s.documentError(fmt.Errorf("%w: %v", pdf.ErrUnreadable, err))
	}
	if len(slots) == 0 {
		s.opt.Logger.Info("signed document without a free certificate box: signed without an entry on the page", "event", req.EventID)
		return nil
	}
	sl := slots[0]
	w, h := sl.Rect[2]-sl.Rect[0], sl.Rect[3]-sl.Rect[1]
	e := certpage.Entry{Signer: certpage.Signer{Name: req.Signer.Name, Email: req.Signer.Email}, EventID: req.EventID,
		SignedAt: at.UTC().Format("2006-01-02 15:04:05 UTC"), DocumentSHA256: inputSHA}
	pg, err := r.Entry(e, w, h)
	if err != nil {
		return s.certificateUnavailable(err)
	}
	opt.Field, opt.Page, opt.Rect = sl.Name, sl.Page, sl.Rect
	opt.Appearance = &pdf.Stream{Data: pg.Content, Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
		"BBox": pdf.Array{pdf.Real(0), pdf.Real(0), pdf.Real(w), pdf.Real(h)}, "Resources": pg.Resources}}
	return nil
}

func (s *Service) certificateUnavailable(err error) error {
	s.opt.Logger.Error("certificate page", "err", err)
	return &quire.Error{Code: quire.CodeUnavailable, RetryAfter: time.Minute,
		Message: "The certificate page cannot be rendered on this server; sign with certificate.enabled false or retry later."}
}

func (s *Service) certificateData(req Request, inputSHA string, at time.Time) certpage.Data {
	info := s.id.Info()
	d := certpage.Data{DocumentSHA256: inputSHA, EventID: req.EventID, SignedAt: at, Metadata: req.Metadata, Organization: s.opt.Organization,
		Signer:      certpage.Signer{Name: req.Signer.Name, Email: req.Signer.Email, IP: req.Signer.IP, UserAgent: req.Signer.UserAgent},
		Certificate: certpage.CertInfo{Subject: info.Subject, Issuer: info.IssuerDN, SHA256: info.FingerprintSHA256, NotBefore: info.NotBefore, NotAfter: info.NotAfter},
		VerifyHint:  s.verifyHint()}
	for _, e := range req.AuditTrail {
		d.Events = append(d.Events, certpage.Event{Type: e.Type, Timestamp: e.Timestamp.UTC(), Data: e.Data})
	}
	return d
}

// appearance is the visible signature's frame over rect. What it frames,
// the drawn signature and the signing time, is on the certificate page in
// the page's embedded fonts: the widget itself needs no font, as a font
// that is not embedded would break a PDF/A document.
func appearance(rect [4]float64) *pdf.Stream {
	w, h := rect[2]-rect[0], rect[3]-rect[1]
	frame := fmt.Sprintf("q 0.2 0.3 0.6 RG 1 w 0.5 0.5 %.2f %.2f re S Q\n", w-1, h-1)
	return &pdf.Stream{Data: []byte(frame), Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
		"BBox":      pdf.Array{pdf.Real(0), pdf.Real(0), pdf.Real(w), pdf.Real(h)},
		"Resources": pdf.Dict{}}}
}
