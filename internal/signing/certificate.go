package signing

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/pdf"
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

// appendCertificate appends the certificate pages (signer and audit trail)
// to doc, in the size of its last page, and returns the page and rectangle
// for the visible signature.
func (s *Service) appendCertificate(doc *pdf.Document, req Request, inputSHA string, at time.Time) (int, [4]float64, error) {
	var rect [4]float64
	w, h, err := doc.LastPageSize()
	if err != nil {
		return 0, rect, s.documentError(err)
	}
	pages, rect, err := certpage.Pages(s.certificateData(req, inputSHA, at), certpage.PageSize{Width: w, Height: h})
	if err != nil {
		s.opt.Logger.Error("certificate page", "err", err)
		return 0, rect, &quire.Error{Code: quire.CodeUnavailable, RetryAfter: time.Minute,
			Message: "The certificate page cannot be rendered on this server; sign with certificate.enabled false or retry later."}
	}
	first, err := doc.AppendPages(pages)
	if err != nil {
		return 0, rect, s.documentError(err)
	}
	return first, rect, nil
}

func (s *Service) certificateData(req Request, inputSHA string, at time.Time) certpage.Data {
	info := s.id.Info()
	d := certpage.Data{DocumentSHA256: inputSHA, EventID: req.EventID, SignedAt: at, Metadata: req.Metadata,
		Signer:      certpage.Signer{Name: req.Signer.Name, Email: req.Signer.Email, IP: req.Signer.IP, UserAgent: req.Signer.UserAgent},
		Certificate: certpage.CertInfo{Subject: info.Subject, Issuer: info.IssuerDN, SHA256: info.FingerprintSHA256, NotBefore: info.NotBefore, NotAfter: info.NotAfter},
		VerifyHint:  s.verifyHint()}
	for _, e := range req.AuditTrail {
		d.Events = append(d.Events, certpage.Event{Type: e.Type, Timestamp: e.Timestamp.UTC(), Data: e.Data})
	}
	return d
}

// appearance draws the visible signature in rect: a frame and three lines
// in Helvetica (a standard font, so nothing is embedded; the text is kept
// to printable ASCII, which it can show).
func appearance(rect [4]float64, at time.Time, eventID string) *pdf.Stream {
	w, h := rect[2]-rect[0], rect[3]-rect[1]
	size := min(9, h/4)
	lines := []string{"Digitally signed with quire", at.Format("2006-01-02 15:04:05 UTC"), "Event " + ascii(eventID)}
	var c bytes.Buffer
	fmt.Fprintf(&c, "q 0.2 0.3 0.6 RG 1 w 0.5 0.5 %.2f %.2f re S Q\nBT /Helv %.2f Tf 0.1 0.15 0.4 rg\n", w-1, h-1, size)
	for i, l := range lines {
		fmt.Fprintf(&c, "1 0 0 1 %.2f %.2f Tm (%s) Tj\n", size/2, h-float64(i+1)*size*1.3, escapeLiteral(l))
	}
	c.WriteString("ET\n")
	font := pdf.Dict{"Type": pdf.Name("Font"), "Subtype": pdf.Name("Type1"),
		"BaseFont": pdf.Name("Helvetica"), "Encoding": pdf.Name("WinAnsiEncoding")}
	return &pdf.Stream{Data: c.Bytes(), Dict: pdf.Dict{"Type": pdf.Name("XObject"), "Subtype": pdf.Name("Form"),
		"BBox":      pdf.Array{pdf.Real(0), pdf.Real(0), pdf.Real(w), pdf.Real(h)},
		"Resources": pdf.Dict{"Font": pdf.Dict{"Helv": font}}}}
}

func ascii(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

func escapeLiteral(s string) string {
	return strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`).Replace(s)
}
