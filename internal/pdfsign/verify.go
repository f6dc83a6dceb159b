package pdfsign

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

// Result is the outcome of Verify, shaped for the API's
// {valid, reason?, signers:[...]}.
type Result struct {
	Valid   bool           `json:"valid"`
	Reason  string         `json:"reason,omitempty"`
	Signers []SignerResult `json:"signers"`
	Pages   int            `json:"pages,omitempty"` // 0 when the page tree cannot be read
}

// SignerResult describes one signature, in file order (oldest first).
type SignerResult struct {
	Field  string `json:"field"`
	Valid  bool   `json:"valid"` // intact, correctly signed, and trusted when roots were given
	Reason string `json:"reason,omitempty"`

	// From the signature dictionary: what the signer claims.
	Name        string     `json:"name,omitempty"`
	SignReason  string     `json:"signatureReason,omitempty"`
	Location    string     `json:"location,omitempty"`
	SigningTime *time.Time `json:"signingTime,omitempty"` // /M
	SubFilter   string     `json:"subFilter"`

	// From the signer certificate.
	Subject      string `json:"subject,omitempty"`
	CommonName   string `json:"commonName,omitempty"`
	Email        string `json:"email,omitempty"`
	SerialNumber string `json:"serialNumber,omitempty"`
	Issuer       string `json:"issuer,omitempty"`

	TimestampTime *time.Time `json:"timestampTime,omitempty"` // from an RFC 3161 token
	// TimestampTrusted: the token's TSA chains to VerifyOptions.TSARoots.
	TimestampTrusted bool `json:"timestampTrusted"`
	// CertificateCheckedAt is when the signer's chain was found valid:
	// the verification time, or, for a certificate that has expired
	// since, the trusted time-stamp's time (long-term validation).
	CertificateCheckedAt *time.Time `json:"certificateCheckedAt,omitempty"`
	// RevocationChecked: CRLs or OCSP responses of the document's DSS
	// showed the chain was not revoked at CertificateCheckedAt.
	RevocationChecked bool `json:"revocationChecked"`
	// Certification is the DocMDP P (1-3) of a certification signature;
	// 0 for an approval signature or a document time-stamp.
	Certification int `json:"certification,omitempty"`

	// Digest is the hex digest of the signed byte ranges (SHA-256 for
	// quire's signatures): it identifies the signature in any later copy of
	// the file, whatever was appended since.
	Digest string `json:"digest,omitempty"`

	DigestValid         bool `json:"digestValid"`         // signed bytes unchanged
	SignatureValid      bool `json:"signatureValid"`      // CMS signature verifies with the certificate
	CertificateBound    bool `json:"certificateBound"`    // ESS signing-certificate hash matches
	Trusted             bool `json:"trusted"`             // certificate chains to the given roots
	CoversWholeDocument bool `json:"coversWholeDocument"` // nothing but validation data (a DSS) was appended after it
}

// VerifyOptions say what VerifyWith trusts, and when.
type VerifyOptions struct {
	Roots *x509.CertPool // the roots signer certificates must chain to; nil: none checked
	// TSARoots are the roots a time-stamp authority must chain to for its
	// time to count; nil: time-stamps are reported but not relied on.
	TSARoots *x509.CertPool
	Now      time.Time // the verification time; zero: now
	// Admit, when set, is called once the document's cross-reference data
	// is read, with its object count (pdf.Document.ObjectCount), before
	// the work; its error ends the verification. The caller charges its
	// memory budget there.
	Admit func(objects int) error
}

// Verify checks every signature of pdf. trust holds the roots the signer
// certificates must chain to (the service's CA); nil checks integrity and
// signatures only and reports Trusted false. The document is valid when
// it has signatures, all are intact, correctly signed and trusted, and the
// newest one covers the whole file. Signer certificates are checked at the
// current time, whether or not a signature carries a time-stamp.
//
// Verify reads pdf as it is, within lim (zero fields take
// pdf.DefaultLimits; a larger file fails with pdf.ErrTooLarge), never
// repairing it. A signature dictionary that several fields share is
// checked once. A document with more than 100 signatures is refused with
// an error wrapping pdf.ErrUnreadable rather than checked in part: each
// signature hashes up to the whole file, and a partial verdict would
// leave signatures unchecked.
func Verify(b []byte, trust *x509.CertPool, lim pdf.Limits) (Result, error) {
	return VerifyWith(b, VerifyOptions{Roots: trust}, lim)
}

// VerifyWith is Verify with time-stamp roots and a verification time.
// A signer certificate that is no longer valid at opt.Now is still
// accepted when the signature carries a time-stamp by a TSA that chains
// to opt.TSARoots, the chain was valid at the time-stamp's time, and the
// document's DSS holds, for every certificate of the chain below the
// root, a CRL or OCSP response for its issuer that does not revoke it by
// then (PAdES B-LT). Document time-stamps (ETSI.RFC3161) are checked like
// signatures: intact, and correctly signed by their TSA; Trusted when the
// TSA chains to opt.TSARoots.
func VerifyWith(b []byte, opt VerifyOptions, lim pdf.Limits) (Result, error) {
	return VerifyContext(context.Background(), b, opt, lim)
}

// VerifyContext is VerifyWith that stops with ctx's error once ctx ends
// (the client gone, a timeout): it looks at ctx before each signature and
// while it walks the page tree, the parts of the work that grow with the
// file.
func VerifyContext(ctx context.Context, b []byte, opt VerifyOptions, lim pdf.Limits) (Result, error) {
	return verify(ctx, b, opt, lim, nil)
}

// knownDigest is a digest already computed over the byte ranges of a
// signature (Sign's own), which its self-check need not compute again.
type knownDigest struct {
	hash   crypto.Hash
	ranges [4]int
	sum    []byte
}

// of returns the digest of ranges with h when it is the known one, and
// computes it otherwise.
func (k *knownDigest) of(h crypto.Hash, b []byte, ranges [4]int) []byte {
	if k != nil && k.hash == h && k.ranges == ranges {
		return k.sum
	}
	return rangeDigest(h, b, ranges)
}

// rangeDigest hashes the two byte ranges of a signature with h.
func rangeDigest(h crypto.Hash, b []byte, ranges [4]int) []byte {
	hh := h.New()
	hh.Write(b[:ranges[1]])
	hh.Write(b[ranges[2] : ranges[2]+ranges[3]])
	return hh.Sum(nil)
}

func verify(ctx context.Context, b []byte, opt VerifyOptions, lim pdf.Limits, known *knownDigest) (res Result, err error) {
	defer pdf.Recover(&err)
	d, err := pdf.Read(b, lim)
	if err != nil {
		return Result{}, err
	}
	if opt.Admit != nil {
		if err := opt.Admit(d.ObjectCount()); err != nil {
			return Result{}, err
		}
	}
	fields, err := signatureFields(d)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %v", pdf.ErrUnreadable, err)
	}
	if len(fields) > maxSignatures {
		return Result{}, fmt.Errorf("%w: %d signatures, more than the %d that are verified", pdf.ErrUnreadable, len(fields), maxSignatures)
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	v := &verifier{pdf: b, d: d, opt: opt, known: known}
	res = Result{Signers: []SignerResult{}}
	sort.SliceStable(fields, func(i, j int) bool { return rangeEnd(fields[i].value) < rangeEnd(fields[j].value) })
	for _, f := range fields {
		if err := ctx.Err(); err != nil { // each signature may hash the whole file
			return Result{}, err
		}
		res.Signers = append(res.Signers, v.verifySignature(f))
	}
	if n := len(res.Signers); n > 0 && !res.Signers[n-1].CoversWholeDocument {
		res.Signers[n-1].CoversWholeDocument = v.onlyValidationDataAfter(rangeEnd(fields[n-1].value), lim)
	}
	res.Valid, res.Reason = overall(res.Signers, opt.Roots != nil)
	pages, err := d.PagesContext(ctx)
	if ended(err) {
		return Result{}, err
	}
	if err == nil { // signatures can be checked without a page tree
		res.Pages = len(pages)
	}
	return res, nil
}

// ended reports whether err is a context's: the work stopped because its
// request ended.
func ended(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// maxSignatures bounds the signatures that Verify checks; Sign does not
// add one beyond it.
const maxSignatures = 100

// overall summarises the signatures into the document's verdict.
func overall(signers []SignerResult, trustGiven bool) (bool, string) {
	if len(signers) == 0 {
		return false, "the document has no signatures"
	}
	for _, s := range signers {
		if !s.Valid {
			return false, fmt.Sprintf("signature %q: %s", s.Field, s.Reason)
		}
	}
	if !signers[len(signers)-1].CoversWholeDocument {
		return false, "the document was changed after the last signature"
	}
	if !trustGiven {
		return false, "no trust roots given: signatures are intact but their signers are not checked"
	}
	return true, ""
}

// rangeEnd is where a signature's second byte range ends: signatures made
// later cover more of the file.
func rangeEnd(v pdf.Dict) int {
	br, _ := v["ByteRange"].(pdf.Array)
	if len(br) != 4 {
		return 0
	}
	return pdf.IntOr(br[2], 0) + pdf.IntOr(br[3], 0)
}

// verifySignature checks one signature; failures go into Reason.
func (vr *verifier) verifySignature(f sigField) SignerResult {
	b, v := vr.pdf, f.value
	r := SignerResult{Field: f.name, Name: textOf(v["Name"]), SignReason: textOf(v["Reason"]), Location: textOf(v["Location"]),
		Certification: docMDP(vr.d, v)}
	r.SubFilter, _ = nameOf(v["SubFilter"])
	if t, ok := parsePDFDate(textOf(v["M"])); ok {
		r.SigningTime = &t
	}
	fail := func(format string, a ...any) SignerResult {
		r.Reason = fmt.Sprintf(format, a...)
		return r
	}
	if r.SubFilter != "ETSI.CAdES.detached" && r.SubFilter != "adbe.pkcs7.detached" && r.SubFilter != "ETSI.RFC3161" {
		return fail("unsupported signature type /SubFilter /%s", r.SubFilter)
	}
	ranges, err := byteRanges(b, v)
	if err != nil {
		return fail("%v", err)
	}
	r.CoversWholeDocument = ranges[2]+ranges[3] == len(b)
	if r.SubFilter == "ETSI.RFC3161" {
		return vr.verifyDocTimestamp(r, contentsOf(v), ranges)
	}
	sd, err := parseSignedData(contentsOf(v))
	if err != nil {
		return fail("%v", err)
	}
	cert, err := sd.signerCert()
	if err != nil {
		return fail("%v", err)
	}
	describeCert(&r, cert)
	h, err := hashFor(sd.signer.digestAlg)
	if err != nil {
		return fail("%v", err)
	}
	digest := vr.known.of(h, b, ranges)
	r.Digest = hex.EncodeToString(digest)
	r.DigestValid = sd.signer.signedAttrs == nil || sd.checkAttributes(digest) == nil
	ess, err := sd.verify(digest, cert)
	if err != nil {
		return fail("%v", err)
	}
	r.SignatureValid, r.CertificateBound = true, ess
	if !ess && r.SubFilter == "ETSI.CAdES.detached" {
		return fail("PAdES signature without the ESS signing-certificate attribute")
	}
	if tok, ok := sd.signer.unsigned[oidAttrTimeStampToken.String()]; ok {
		ts, err := vr.timestamp(tok, func(h crypto.Hash) []byte {
			hh := h.New()
			hh.Write(sd.signer.signature)
			return hh.Sum(nil)
		})
		if err != nil {
			return fail("time-stamp token: %v", err)
		}
		r.TimestampTime, r.TimestampTrusted = &ts.genTime, ts.trusted
	}
	if vr.opt.Roots == nil {
		r.Valid = true
		return r
	}
	at, revoked, err := vr.checkCertificate(cert, sd.certs, r)
	if err != nil {
		return fail("signer certificate not trusted: %v", err)
	}
	r.CertificateCheckedAt, r.RevocationChecked = &at, revoked
	r.Trusted, r.Valid = true, true
	return r
}

// byteRanges checks /ByteRange: it must start at 0, lie within the file,
// and leave out exactly the /Contents hex string of this dictionary.
func byteRanges(b []byte, v pdf.Dict) ([4]int, error) {
	var br [4]int
	a, ok := v["ByteRange"].(pdf.Array)
	if !ok || len(a) != 4 {
		return br, errors.New("/ByteRange is not an array of four integers")
	}
	for i := range br {
		br[i] = pdf.IntOr(a[i], -1)
		if br[i] < 0 {
			return br, errors.New("/ByteRange holds a negative or non-integer value")
		}
	}
	if br[0] != 0 || br[1] < 2 || br[2] <= br[1]+1 || br[2] > len(b) || br[3] > len(b)-br[2] {
		return br, fmt.Errorf("/ByteRange %v does not describe the file", br)
	}
	gap := b[br[1]:br[2]]
	if gap[0] != '<' || gap[len(gap)-1] != '>' {
		return br, errors.New("/ByteRange does not exclude exactly a hex string")
	}
	isHex, equal := hexEqual(gap[1:len(gap)-1], contentsOf(v))
	if !isHex {
		return br, errors.New("/ByteRange excludes more than the /Contents hex string")
	}
	if !equal {
		return br, errors.New("/ByteRange does not exclude this signature's /Contents")
	}
	return br, nil
}

// hexEqual reports whether h is hexadecimal digits, and whether they spell
// raw. It decodes nothing into memory: many signatures may each exclude a
// gap of most of the file.
func hexEqual(h, raw []byte) (isHex, equal bool) {
	if len(h)%2 != 0 {
		return false, false
	}
	equal = len(h) == 2*len(raw)
	for i := 0; i < len(h); i += 2 {
		hi, ok1 := pdf.HexDigit(h[i])
		lo, ok2 := pdf.HexDigit(h[i+1])
		if !ok1 || !ok2 {
			return false, false
		}
		equal = equal && raw[i/2] == hi<<4|lo
	}
	return true, equal
}

// contentsOf returns /Contents as bytes (written as hex or literal).
func contentsOf(v pdf.Dict) []byte {
	switch c := v["Contents"].(type) {
	case pdf.HexString:
		return c
	case pdf.String:
		return c
	}
	return nil
}

func describeCert(r *SignerResult, c *x509.Certificate) {
	r.Subject, r.CommonName, r.Issuer = c.Subject.String(), c.Subject.CommonName, c.Issuer.String()
	r.SerialNumber = serialString(c.SerialNumber)
	if len(c.EmailAddresses) > 0 {
		r.Email = c.EmailAddresses[0]
	}
	for _, n := range c.Subject.Names {
		if s, ok := n.Value.(string); ok && n.Type.Equal(oidEmailAddress) && r.Email == "" {
			r.Email = s
		}
	}
}

func textOf(o pdf.Object) string {
	switch s := o.(type) {
	case pdf.String:
		return pdf.DecodeText(s)
	case pdf.HexString:
		return pdf.DecodeText(s)
	}
	return ""
}

func nameOf(o pdf.Object) (string, bool) {
	n, ok := o.(pdf.Name)
	return string(n), ok
}

// parsePDFDate reads "D:YYYYMMDDHHmmSSOHH'mm'" with its optional parts.
func parsePDFDate(s string) (time.Time, bool) {
	s = strings.TrimPrefix(s, "D:")
	s = strings.ReplaceAll(s, "'", "")
	for _, layout := range []string{"20060102150405Z0700", "20060102150405-0700", "20060102150405Z07", "20060102150405", "200601021504", "20060102"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
