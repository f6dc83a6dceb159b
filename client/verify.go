package client

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"strings"
	"time"
)

// VerifyResult is the answer of POST /v1/verify: whether the signatures of
// a PDF hold.
type VerifyResult struct {
	// Valid is true when the document holds at least one signature that
	// is intact, trusted, not revoked and uses no weak digest, no
	// signature or time-stamp failed, and every change made after each
	// signature is permitted. A document time-stamp is no signature.
	Valid bool `json:"valid"`
	// Reason says why the document is not valid; empty when it is.
	Reason string `json:"reason,omitempty"`
	// Signer is the primary signer: the newest signature's; nil when the
	// document has none.
	Signer *VerifiedSigner `json:"signer"`
	// Signers has one entry per signature, in the order of the document.
	Signers []VerifiedSigner `json:"signers"`
	// Document describes the verified file.
	Document VerifiedDocument `json:"document"`
}

// VerifiedDocument is the metadata of a verified PDF.
type VerifiedDocument struct {
	SHA256      string `json:"sha256"` // hex
	Size        int    `json:"size"`   // bytes
	Pages       int    `json:"pages"`  // 0 when the page tree could not be read
	ContentType string `json:"contentType"`
	Signatures  int    `json:"signatures"`
}

// VerifiedSigner is one signature of a verified PDF.
type VerifiedSigner struct {
	Name string `json:"name"` // the signer's name, as signed
	// Email is the signer's e-mail address: the one recorded for the
	// signing event when the service made this signature, otherwise the
	// signing certificate's, when it has one.
	Email   string `json:"email"`
	Subject string `json:"subject"` // distinguished name of the signing certificate
	// SigningTime is when the signature was made, as the document claims it
	// (/M); zero when the signature carries no time.
	SigningTime time.Time `json:"signingTime"`
	// EventID, SignerEmail and RecordedAt come from the service's record of
	// the signing; empty when the service did not make this signature.
	EventID     string    `json:"eventId"`
	SignerEmail string    `json:"signerEmail"`
	RecordedAt  time.Time `json:"recordedAt"`
	// AuditTrail is the sign request's audit trail as the service recorded
	// it; empty when the service did not make this signature (or recorded
	// it before it kept audit trails).
	AuditTrail []AuditEvent `json:"auditTrail"`
	// CoversWholeDocument is false when bytes were added after this
	// signature (a later signature, or an edit).
	CoversWholeDocument bool `json:"coversWholeDocument"`
	// Trusted is true when the signing certificate chains to a
	// certificate the service trusts, such as its own signing certificate.
	Trusted bool `json:"trusted"`
	// Valid is true when the signature is intact, by a trusted
	// certificate that is not revoked, uses a digest fit for signatures,
	// and only permitted changes follow it.
	Valid bool `json:"valid"`
	// Reason says why this signature is not valid; empty when it is.
	Reason string `json:"reason,omitempty"`

	// SignatureReason, Location and ContactInfo are, like Name and
	// SigningTime, read from the revision the signature covers.
	SignatureReason string `json:"signatureReason"`
	Location        string `json:"location"`
	ContactInfo     string `json:"contactInfo"`
	// ChangedAfterSigning names the entries of the signature dictionary a
	// later revision changed (the values above are the signed ones).
	ChangedAfterSigning []string `json:"changedAfterSigning"`
	// SubFilter is the signature's type: ETSI.CAdES.detached,
	// adbe.pkcs7.detached, adbe.pkcs7.sha1, or ETSI.RFC3161 for a
	// document time-stamp.
	SubFilter string `json:"subFilter"`
	// TimestampTrusted: the time-stamp's authority is trusted; an
	// untrusted time-stamp proves nothing.
	TimestampTime    time.Time `json:"timestampTime"`
	TimestampTrusted bool      `json:"timestampTrusted"`

	// The examiner's words (ETSI EN 319 102-1 and 319 142-1): the format
	// level found (nil for a time-stamp, or a CAdES signature that is no
	// baseline), the indication (TOTAL_PASSED, INDETERMINATE,
	// TOTAL_FAILED) and its sub-indication (nil when TOTAL_PASSED).
	Level         *string `json:"level"`
	Indication    string  `json:"indication"`
	SubIndication *string `json:"subIndication"`
	// Revocation is the revocation data the document holds for it.
	Revocation Revocation `json:"revocation"`
	// Modifications are the changes made after this signature.
	Modifications Modifications `json:"modifications"`
}

// Revocation is the revocation data found for a signature: how many CRLs
// and OCSP responses, and where ("dss", "signed-attributes" or "none").
type Revocation struct {
	CRL   int    `json:"crl"`
	OCSP  int    `json:"ocsp"`
	Where string `json:"where"`
}

// Modifications are the changes made in the revisions after a signature,
// compared object by object with the revision it covers.
type Modifications struct {
	// Level is the highest class of change: "none", "ltv" (validation
	// data, document time-stamps), "form" (form filling, metadata),
	// "annotations", "signature" or "other" (pages, page content, ...).
	Level string `json:"level"`
	// Permitted: every change is allowed after this signature.
	Permitted bool     `json:"permitted"`
	Changes   []Change `json:"changes"`
}

// Change is one object changed after a signature.
type Change struct {
	Object    int    `json:"object"` // object number; 0 for bytes outside any object
	Page      int    `json:"page"`   // 1-based; 0 when on no page
	Class     string `json:"class"`
	What      string `json:"what"`
	Permitted bool   `json:"permitted"`
}

// VerifySignature checks the signatures of a PDF (POST /v1/verify, the
// file as the multipart part "file"). A document that is not valid is a
// successful answer with Valid false; an *Error means the check could not
// be made, e.g. CodeUnprocessable for an encrypted or corrupt PDF.
func (c *Client) VerifySignature(ctx context.Context, pdf []byte) (*VerifyResult, error) {
	r := request{method: "POST", path: "/v1/verify", accept: "application/json", auth: true}
	res, err := c.postFile(ctx, r, bytes.NewReader(pdf), "document.pdf", "application/pdf")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var v VerifyResult
	if err := c.decodeJSON(r, res, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// SigningCertificate is the answer of GET /v1/verify/key: the certificate
// the service signs documents with, so that callers can pin or trust it.
type SigningCertificate struct {
	// The hosted API's fields.
	Version     string `json:"version"`     // identifies the key; changes when it does
	Algorithm   string `json:"algorithm"`   // e.g. "ECDSA-SHA256"
	PublicKey   string `json:"publicKey"`   // the certificate's public key, PEM-encoded
	Fingerprint string `json:"fingerprint"` // SHA-256 of the DER certificate, "AB:CD:..."
	ValidFrom   string `json:"validFrom"`   // date, YYYY-MM-DD
	ValidTo     string `json:"validTo"`     // date, YYYY-MM-DD
	Issuer      string `json:"issuer"`      // the issuing organisation's name

	// quire's.
	PEM               string    `json:"pem"`               // the certificate, PEM-encoded
	FingerprintSHA256 string    `json:"fingerprintSha256"` // SHA-256 of the DER certificate, hex
	NotBefore         time.Time `json:"notBefore"`
	NotAfter          time.Time `json:"notAfter"`
	IssuerDN          string    `json:"issuerDn"` // distinguished name
	Subject           string    `json:"subject"`  // distinguished name
}

// SigningCertificate returns the service's signing certificate (GET
// /v1/verify/key).
func (c *Client) SigningCertificate(ctx context.Context) (*SigningCertificate, error) {
	var sc SigningCertificate
	err := c.getJSON(ctx, request{method: "GET", path: "/v1/verify/key", auth: true}, &sc)
	if err != nil {
		return nil, err
	}
	return &sc, nil
}

// Certificate parses PEM and checks that FingerprintSHA256 is its
// fingerprint (hex, with or without colons, in either case), so that a
// certificate pinned by its fingerprint is the one returned.
func (s *SigningCertificate) Certificate() (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(s.PEM))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("quire client: signing certificate: pem holds no CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("quire client: signing certificate: %w", err)
	}
	sum := sha256.Sum256(cert.Raw)
	want := strings.ToLower(strings.ReplaceAll(s.FingerprintSHA256, ":", ""))
	if got := hex.EncodeToString(sum[:]); got != want {
		return nil, fmt.Errorf("quire client: signing certificate: fingerprintSha256 %q is not the certificate's (%s)", s.FingerprintSHA256, got)
	}
	return cert, nil
}
