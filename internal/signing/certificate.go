package signing

import (
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
	pages, rect, err := s.opt.Certificates.Pages(s.certificateData(req, inputSHA, at), certpage.PageSize{Width: w, Height: h})
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
