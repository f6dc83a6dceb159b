package signing

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/safeinput"
)

// Converter turns a DOCX into a PDF, with options (PDF/A); *libreoffice.Pool
// is one. It checks the document as it converts it (ConvertRequest), so
// that a DOCX is opened once, by the converter; Check runs those checks
// alone, for a job's submission. A nil Converter means that DOCX input is
// refused.
type Converter interface {
	Check(r engine.Request, in []byte) error
	ConvertRequest(ctx context.Context, r engine.Request, in []byte) (engine.Result, error)
}

// Recorder keeps the record of each signature and the signing roots of
// every instance; *store.DB is one.
type Recorder interface {
	RecordSigning(ctx context.Context, s quire.Signing) error
	RecordSigningCharged(ctx context.Context, s quire.Signing, c quire.Charge) (quire.ChargeResult, error)
	SigningByDigest(ctx context.Context, digest string) (quire.Signing, error)
	AddSigningRoot(ctx context.Context, der []byte, now time.Time) error
	SigningRoots(ctx context.Context) ([][]byte, error)
	AddTSARoot(ctx context.Context, der []byte, now time.Time) error
	TSARoots(ctx context.Context) ([][]byte, error)
}

// Options are the limits and settings of signing.
type Options struct {
	MaxDocumentBytes int64               // largest document, inline or downloaded
	PDFLimits        pdf.Limits          // the PDF reader's bounds; MaxInputSize is set from MaxDocumentBytes
	Timestamper      pdfsign.Timestamper // non-nil: RFC 3161 time-stamps (PAdES B-T)
	Level            pdfsign.Level       // PAdES level of signatures; above B-B it needs the Timestamper
	TrustRoots       []*x509.Certificate // signers trusted besides the service's own CA (QUIRE_TRUST_ROOTS)
	TrustTSA         []*x509.Certificate // time-stamp authority roots trusted besides those learned from Timestamper's tokens (QUIRE_TRUST_TSA)
	Logger           *slog.Logger
	Now              func() time.Time
	PublicURL        string         // the service's absolute URL, named on certificate pages; empty: unknown
	Organization     string         // who operates the service, named on certificate pages; empty: not named
	Certificates     *certpage.Lazy // renders the certificate pages appended to signed documents; nil: its defaults
}

// Service signs documents and verifies signatures.
type Service struct {
	id         *pdfsign.Identity
	rec        Recorder
	conv       Converter
	fetcher    *fetch.Fetcher
	revocation *revocationCache
	opt        Options
}

// New returns the signing service, signing as id; with a nil id, it only
// verifies. It downloads documents and revocation data with f, which
// bounds what they may reach and weigh.
func New(id *pdfsign.Identity, rec Recorder, conv Converter, f *fetch.Fetcher, opt Options) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Certificates == nil {
		opt.Certificates = certpage.NewLazy(certpage.Options{})
	}
	s := &Service{id: id, rec: rec, conv: conv, fetcher: f, revocation: &revocationCache{get: f.Get, now: opt.Now, log: opt.Logger}, opt: opt}
	if opt.Timestamper != nil {
		s.opt.Timestamper = &learning{Timestamper: opt.Timestamper, s: s, seen: map[[32]byte]bool{}}
	}
	return s
}

// Publish records this instance's signing root in the database, so that
// every instance sharing it verifies this one's signatures as the
// service's (instances may each have generated their own identity).
func (s *Service) Publish(ctx context.Context) error {
	if err := s.rec.AddSigningRoot(ctx, s.id.Root().Raw, s.opt.Now()); err != nil {
		return fmt.Errorf("record the signing root: %w", err)
	}
	return nil
}

// limits bound the PDF reader: the configured limits, and twice the
// largest document as input, room for a converted DOCX.
func (s *Service) limits() pdf.Limits {
	l := s.opt.PDFLimits
	l.MaxInputSize = 2 * s.opt.MaxDocumentBytes
	return l
}

// MaxDocumentBytes is the largest document accepted.
func (s *Service) MaxDocumentBytes() int64 { return s.opt.MaxDocumentBytes }

// MaxRequestBytes is the largest request body that can carry the largest
// document: base64 grows it by 4/3, and the rest of the request (audit
// trail, drawn signatures) gets 2 MiB.
func (s *Service) MaxRequestBytes() int64 { return s.opt.MaxDocumentBytes/3*4 + 4 + 2<<20 }

// Key describes the signing certificate, for GET /v1/verify/key.
func (s *Service) Key() pdfsign.KeyInfo { return s.id.Info() }

// TSAStates is the state of each time-stamp authority, for GET
// /v1/health; nil without a list of authorities.
func (s *Service) TSAStates() []pdfsign.TSAState {
	if l, ok := s.opt.Timestamper.(*learning); ok {
		return l.States()
	}
	return nil
}

// Result is a signed document and what its caller is told about it.
type Result struct {
	PDF     []byte
	EventID string // the request's event id, or the one generated for it
	SHA256  string // hex SHA-256 of PDF, as recorded with the event
	// For the metering: the pages of PDF, and whether the input was a
	// DOCX converted on the way.
	Pages     int
	Converted bool
	// Level is the PAdES level the signature reached (Quire-Signature-Level).
	Level pdfsign.Level
}

// level is the PAdES level a request asks: its own, else the configured
// one. Above B-B it needs a time-stamp authority: without one, the
// signature is B-B, or a strict request is refused.
func (s *Service) level(req Request) (pdfsign.Level, error) {
	asked := s.opt.Level
	if req.Level != "" {
		asked, _ = pdfsign.ParseLevel(req.Level) // Validate checked it
	}
	if asked == pdfsign.LevelB || s.opt.Timestamper != nil {
		return asked, nil
	}
	if req.Strict {
		return 0, quire.Errorf(quire.CodeUnprocessable, "PAdES %s needs a time-stamp authority, and none is configured on this server (QUIRE_TSA_URL); "+
			"ask for level B-B, or without strict to get B-B.", asked)
	}
	return pdfsign.LevelB, nil
}

// reached checks the level a signature reached against the one asked: a
// strict request gets 422 rather than less; any other the signature,
// with the level reached named in the answer (and the shortfall logged
// for the operator).
func (s *Service) reached(req Request, asked, got pdfsign.Level) error {
	if got >= asked {
		return nil
	}
	s.opt.Logger.Warn("signature below the level asked: revocation data missing for a certificate of the signer's or the TSA's chain",
		"asked", asked.String(), "reached", got.String(), "event", req.EventID)
	if !req.Strict {
		return nil
	}
	return quire.Errorf(quire.CodeUnprocessable, "The signature would reach PAdES %s, not the %s asked: revocation data (a CRL or an OCSP answer) "+
		"could not be obtained for a certificate of the signer's or the time-stamp authority's chain. Nothing was signed.", got, asked)
}

// CRL is a fresh CRL (DER) of quire's own CA named caID, for the CRL
// distribution point of the signing certificate; NOT_FOUND for any other.
func (s *Service) CRL(caID string) ([]byte, error) {
	if caID != s.id.CAID() || caID == "" {
		return nil, errUnknownCA(caID)
	}
	crl, err := s.id.CRL(s.opt.Now()) // signed in the token when the CA's key is there
	return crl, s.dependencyError(err)
}

// CACertificate is the certificate (DER) of quire's own CA named caID.
func (s *Service) CACertificate(caID string) ([]byte, error) {
	if caID != s.id.CAID() || caID == "" {
		return nil, errUnknownCA(caID)
	}
	return s.id.CACertificate()
}

func errUnknownCA(caID string) error {
	return quire.Errorf(quire.CodeNotFound, "This server has no signing CA %q; each instance serves its own CA's CRL and certificate.", caID)
}

// Sign returns the signed PDF for a request made with the API key keyID,
// and records the signing (hashes and event, never content). The request
// is validated here, so that every entry point applies the same rules.
func (s *Service) Sign(ctx context.Context, req Request, keyID string) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	if req.EventID == "" {
		req.EventID = uuid.NewString()
	}
	asked, err := s.level(req)
	if err != nil {
		return Result{}, err
	}
	in, err := s.Load(ctx, req.Document)
	if err != nil {
		return Result{}, err
	}
	b, err := s.asPDF(ctx, in, req.PDFA)
	if err != nil {
		return Result{}, err
	}
	now := s.opt.Now().UTC()
	doc, err := pdf.Open(ctx, b, s.limits())
	if err != nil {
		return Result{}, s.documentError(err)
	}
	if err := chargeShape(ctx, len(b), doc.ObjectCount(), signBytesPerObject); err != nil {
		return Result{}, err
	}
	// The document hashes its bytes once for the input's, the signature's
	// and the output's SHA-256 (when the input is the document's bytes).
	inputSHA := hex.EncodeToString(doc.SHA256(in).Sum(nil))
	opt := pdfsign.Options{Name: req.Signer.Name, Time: now,
		Reason: "Signed by " + req.Signer.Name + " <" + req.Signer.Email + ">, event " + req.EventID,
		Level:  asked, Fetch: s.revocation.Get}
	if asked >= pdfsign.LevelT { // B-B is no time-stamp, even with an authority
		opt.Timestamper = s.opt.Timestamper
	}
	if p := pdfsign.Certification(doc); p != 0 && req.Certificate {
		// No DocMDP level allows new pages: the document is signed
		// without its certificate page (P=1 is refused by Sign).
		s.opt.Logger.Info("certified document: signed without the certificate page", "docmdp", p, "event", req.EventID)
		req.Certificate = false
	}
	if req.Certificate {
		if err := s.certificate(doc, req, inputSHA, now, &opt); err != nil {
			return Result{}, err
		}
	}
	sig, err := pdfsign.SignReport(ctx, doc, s.id, opt)
	if err != nil {
		return Result{}, s.documentError(err)
	}
	if err := s.reached(req, asked, sig.Level); err != nil {
		return Result{}, err
	}
	pages, _ := doc.Pages() // read already by the signing: an error was answered there
	res := Result{PDF: sig.PDF, EventID: req.EventID, SHA256: hex.EncodeToString(doc.SHA256(sig.PDF).Sum(nil)),
		Pages: len(pages), Converted: !isPDF(in), Level: sig.Level}
	rec := quire.Signing{SignedDigest: sig.Digest, EventID: req.EventID, InputSHA256: inputSHA, OutputSHA256: res.SHA256,
		SignerEmail: req.Signer.Email, APIKeyID: keyID, SignedAt: now, AuditTrail: req.AuditTrail}
	if err := s.record(ctx, rec, res); err != nil {
		return Result{}, err
	}
	return res, nil
}

// record stores the record of a signing and, for a metered request, the
// count of its response (metering.Tally) in the same transaction: one
// commit for both. A count the key's quota refuses fails the signing.
func (s *Service) record(ctx context.Context, rec quire.Signing, res Result) error {
	a := metering.TallyOf(ctx)
	if a == nil {
		if err := s.rec.RecordSigning(ctx, rec); err != nil {
			return fmt.Errorf("record signing: %w", err)
		}
		return nil
	}
	a.Pages = int64(res.Pages)
	if res.Converted {
		a.Converted = 1
	}
	c := a.Charge(s.opt.Now())
	counted, err := s.rec.RecordSigningCharged(ctx, rec, c)
	if err != nil {
		return fmt.Errorf("record signing and its count: %w", err)
	}
	return a.Settled(c, counted)
}

// Load returns the bytes of a valid document (its request validated):
// inline, or downloaded; either way at most the limit.
func (s *Service) Load(ctx context.Context, d Document) ([]byte, error) {
	if d.URL == "" {
		if int64(len(d.Bytes)) > s.opt.MaxDocumentBytes {
			return nil, quire.Errorf(quire.CodePayloadTooLarge, "The document is larger than the limit of %d bytes.", s.opt.MaxDocumentBytes)
		}
		return d.Bytes, nil
	}
	b, err := s.fetcher.Get(ctx, d.URL)
	if err != nil {
		s.opt.Logger.Info("document download failed", "err", err)
		return nil, fetch.ToAPIError(err, "document.url")
	}
	return b, nil
}

// asPDF returns a PDF as is and converts a DOCX, to PDF/A version pdfa
// when it is not ""; anything else is refused. The converter checks the
// DOCX as it converts it: one that is damaged or password protected gets
// the answer that /v1/convert gives it (422), a file that is neither PDF
// nor DOCX 400 (docxError), and a PDF with pdfa 400: quire does not turn
// a PDF into PDF/A.
func (s *Service) asPDF(ctx context.Context, in []byte, pdfa string) ([]byte, error) {
	if isPDF(in) || s.conv == nil {
		return in, s.checkFormat(in, pdfa)
	}
	r, err := s.conv.ConvertRequest(ctx, docxRequest(pdfa), in)
	if err != nil {
		return nil, docxError(err, 5*time.Second)
	}
	return r.Output, nil
}

// docxRequest is the conversion of a DOCX to sign, to PDF/A version pdfa
// when it is not "".
func docxRequest(pdfa string) engine.Request {
	return engine.Request{From: engine.FromDOCX, To: engine.ToPDF, Options: engine.JobOptions{PDFA: pdfa}}
}

// checkFormat refuses what asPDF would: a document that is neither a PDF
// nor a DOCX, a DOCX that /v1/convert would refuse (the converter's
// checks) or that cannot be converted here, pdfa for a PDF.
func (s *Service) checkFormat(in []byte, pdfa string) error {
	switch {
	case isPDF(in) && pdfa != "":
		return quire.Invalid("The sign request is not valid.", quire.Detail{Field: "pdfa", Issue: "applies to a DOCX document, which is converted; this document is a PDF already"})
	case isPDF(in):
		return nil
	case s.conv != nil:
		return docxError(s.conv.Check(docxRequest(pdfa), in), 0)
	}
	if err := safeinput.Check(in, engine.FromDOCX); err != nil {
		return docxError(err, 0)
	}
	return quire.Errorf(quire.CodeUnprocessable, "DOCX documents cannot be signed here: the conversion engine is not enabled.")
}

// docxError is the answer to a document that the converter refused as a
// DOCX (err, nil for none): not a DOCX at all is neither of the formats
// signed; the rest is answered as /v1/convert answers it.
func docxError(err error, retryAfter time.Duration) error {
	if errors.Is(err, engine.ErrInvalidFormat) {
		return &quire.Error{Code: quire.CodeInvalidFormat, Message: "The document is neither a PDF nor a DOCX file.",
			Details: []quire.Detail{{Field: "document", Issue: "must be a PDF or DOCX file"}}}
	}
	return engine.ToAPIError(err, retryAfter)
}

// Check runs the checks of Sign that spend no time on the document's
// work (download, conversion, signing): the request, its level, and a document sent
// inline: its size, its format and, for a PDF, its structure within the
// limits. A document named by URL is checked once downloaded, when the
// job runs. A job's submission runs it, so that a request Sign would
// refuse is refused before it is queued, as it would be.
func (s *Service) Check(ctx context.Context, req Request) error {
	if err := req.Validate(); err != nil {
		return err
	}
	if _, err := s.level(req); err != nil {
		return err
	}
	if req.Document.URL != "" {
		return nil
	}
	in, err := s.Load(ctx, req.Document)
	if err == nil {
		err = s.checkFormat(in, req.PDFA)
	}
	if err != nil || !isPDF(in) {
		return err
	}
	if _, err := pdf.Open(ctx, in, s.limits()); err != nil {
		return s.documentError(err)
	}
	return nil
}

// isPDF reports a PDF header within the first kilobyte, where PDF readers
// look for it (some producers write junk before it).
func isPDF(b []byte) bool {
	return bytes.Contains(b[:min(len(b), 1024)], []byte("%PDF-"))
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// VerifyResult is the answer of POST /v1/verify: pdfsign's verdict, and
// for each signature quire made, the signing event it records.
type VerifyResult struct {
	Valid   bool           `json:"valid"`
	Reason  string         `json:"reason,omitempty"`
	Signer  *SignerResult  `json:"signer"` // the primary signer: the newest signature's; null when none
	Signers []SignerResult `json:"signers"`
	// Document describes the verified file.
	Document DocumentInfo `json:"document"`
}

// SignerResult is one signature, with quire's record of it when it has one.
// Then Email is the signer's e-mail recorded for the event (quire's
// certificate is the service's, not the signer's); otherwise it is the
// signing certificate's.
type SignerResult struct {
	pdfsign.SignerResult
	EventID     string             `json:"eventId,omitempty"`
	SignerEmail string             `json:"signerEmail,omitempty"`
	RecordedAt  *time.Time         `json:"recordedAt,omitempty"`
	AuditTrail  []quire.AuditEvent `json:"auditTrail,omitempty"` // the sign request's events
}

// DocumentInfo is the metadata of a verified document.
type DocumentInfo struct {
	SHA256      string `json:"sha256"`
	Size        int    `json:"size"`            // bytes
	Pages       int    `json:"pages,omitempty"` // absent when the page tree cannot be read
	ContentType string `json:"contentType"`
	Signatures  int    `json:"signatures"`
}

// Verify checks every signature of the document, inline or downloaded,
// against the service's roots.
func (s *Service) Verify(ctx context.Context, d Document) (VerifyResult, error) {
	if err := quire.InvalidRequest("The verify request is not valid.", nil, d.Problems()); err != nil {
		return VerifyResult{}, err
	}
	b, err := s.Load(ctx, d)
	if err != nil {
		return VerifyResult{}, err
	}
	roots, err := s.roots(ctx)
	if err != nil {
		return VerifyResult{}, err
	}
	tsaRoots, err := s.tsaRoots(ctx)
	if err != nil {
		return VerifyResult{}, err
	}
	admit := func(objects int) error { return chargeShape(ctx, len(b), objects, verifyBytesPerObject) }
	admitRevision := func(objects int) error { return chargeShape(ctx, 0, objects, verifyBytesPerObject) }
	res, err := pdfsign.VerifyContext(ctx, b, pdfsign.VerifyOptions{Roots: roots, TSARoots: tsaRoots, Now: s.opt.Now(),
		Admit: admit, AdmitRevision: admitRevision}, s.limits())
	if err != nil {
		return VerifyResult{}, s.documentError(err)
	}
	out := VerifyResult{Valid: res.Valid, Reason: res.Reason, Signers: make([]SignerResult, len(res.Signers)),
		Document: DocumentInfo{SHA256: sha(b), Size: len(b), Pages: res.Pages, ContentType: "application/pdf", Signatures: len(res.Signers)}}
	for i, sr := range res.Signers {
		out.Signers[i].SignerResult = sr
		if !sr.DigestValid || !sr.SignatureValid { // only an intact signature is named by its record
			continue
		}
		rec, err := s.rec.SigningByDigest(ctx, sr.Digest)
		if errors.Is(err, quire.ErrNotFound) {
			continue
		}
		if err != nil {
			return VerifyResult{}, fmt.Errorf("look up signing: %w", err)
		}
		at := rec.SignedAt
		out.Signers[i].EventID, out.Signers[i].SignerEmail, out.Signers[i].RecordedAt = rec.EventID, rec.SignerEmail, &at
		out.Signers[i].AuditTrail = rec.AuditTrail
		out.Signers[i].Email = rec.SignerEmail
	}
	if n := len(out.Signers); n > 0 {
		out.Signer = &out.Signers[n-1]
	}
	return out, nil
}

// What signing and verifying hold for each object of a PDF, beyond
// memory.PerBodyByte times its size. Measured with pdftest.WidePageTree
// (one /Pages node of n tiny pages, 100 bytes each; 20,000 to 200,000
// pages): a signing with the certificate page allocated 5.4 KB per page and
// raised the heap in use by at most 3.2 KB per page, the 8 times the body
// included (646 MB for 200,000 pages in 20 MB); a verification allocated
// 1.7 KB per page.
const (
	signBytesPerObject   = 3 << 10
	verifyBytesPerObject = 2 << 10
)

// chargeShape grows the operation's memory reservation (memory.Grow) to
// what a PDF of size bytes and objects objects will hold, before the work,
// and checks that the client has not gone.
func chargeShape(ctx context.Context, size, objects, perObject int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return memory.Grow(ctx, int64(size)*memory.PerBodyByte+int64(objects)*int64(perObject))
}

// documentError translates pdf's refusals of a document into the
// contract's error codes. The cause of an unreadable document is logged,
// not answered: it names the parser's internals.
func (s *Service) documentError(err error) error {
	switch {
	case errors.Is(err, pdfsign.ErrCertified):
		return quire.Errorf(quire.CodeUnprocessable, "The PDF is certified with DocMDP permissions P=1, which forbid any change, a new signature included.")
	case errors.Is(err, pdf.ErrEncrypted):
		return quire.Errorf(quire.CodeUnprocessable, "The PDF is encrypted; send it without a password.")
	case errors.Is(err, pdf.ErrDamagedSigned):
		return quire.Errorf(quire.CodeUnprocessable, "The PDF is damaged and already signed: repairing it would break the earlier signature.")
	case errors.Is(err, pdf.ErrUnreadable):
		s.opt.Logger.Info("unreadable PDF", "err", err)
		return quire.Errorf(quire.CodeUnprocessable, "The PDF cannot be read, even after an attempt to repair its structure.")
	case errors.Is(err, pdf.ErrTooLarge):
		return quire.Errorf(quire.CodePayloadTooLarge, "The PDF is larger than the limit.")
	}
	return s.dependencyError(err)
}

// dependencyError turns the failure of a time-stamp authority or of the
// signing key's token into 503 ENGINE_UNAVAILABLE; other errors pass.
func (s *Service) dependencyError(err error) error {
	switch {
	case errors.Is(err, pdfsign.ErrTSAUnavailable):
		s.opt.Logger.Warn("signing: no time-stamp authority answered", "err", err)
		return &quire.Error{Code: quire.CodeEngineBusy, RetryAfter: dependencyRetryAfter,
			Message: "No time-stamp authority answered; the document was not signed. Try again later."}
	case errors.Is(err, pdfsign.ErrKeyUnavailable):
		s.opt.Logger.Error("signing: the signing key's token failed", "err", err)
		return &quire.Error{Code: quire.CodeEngineBusy, RetryAfter: dependencyRetryAfter,
			Message: "The signing key's token is unavailable; nothing was signed. Try again later."}
	}
	return err
}

// dependencyRetryAfter is the wait suggested when a time-stamp authority
// or the signing key's token is down.
const dependencyRetryAfter = 30 * time.Second
