package pdfsign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"reflect"
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

// SignerResult describes one signature or document time-stamp, in file
// order (oldest first).
type SignerResult struct {
	Field string `json:"field"`
	// Valid: intact, correctly signed, by a trusted certificate (a
	// time-stamp: by a trusted authority) that is not revoked, with a
	// digest algorithm fit for signatures, and only permitted changes
	// after it.
	Valid  bool   `json:"valid"`
	Reason string `json:"reason,omitempty"`

	// From the signature dictionary as signed (the revision the signature
	// covers): what the signer claims.
	Name        string     `json:"name,omitempty"`
	SignReason  string     `json:"signatureReason,omitempty"`
	Location    string     `json:"location,omitempty"`
	ContactInfo string     `json:"contactInfo,omitempty"`
	SigningTime *time.Time `json:"signingTime,omitempty"` // /M
	SubFilter   string     `json:"subFilter"`
	// ChangedAfterSigning names the entries of the signature dictionary
	// (Name, Reason, Location, ContactInfo, M, ...) that a later revision
	// changed: the values above are the signed ones, not those.
	ChangedAfterSigning []string `json:"changedAfterSigning,omitempty"`

	// From the signer certificate.
	Subject      string `json:"subject,omitempty"`
	CommonName   string `json:"commonName,omitempty"`
	Email        string `json:"email,omitempty"`
	SerialNumber string `json:"serialNumber,omitempty"`
	Issuer       string `json:"issuer,omitempty"`

	TimestampTime *time.Time `json:"timestampTime,omitempty"` // from an RFC 3161 token
	// TimestampTrusted: the token's TSA chains to VerifyOptions.TSARoots.
	// An untrusted time-stamp is reported and proves nothing.
	TimestampTrusted bool `json:"timestampTrusted"`
	// CertificateCheckedAt is when the signer's chain was found valid:
	// the verification time, or, for a certificate that has expired
	// since, the trusted time-stamp's time (long-term validation).
	CertificateCheckedAt *time.Time `json:"certificateCheckedAt,omitempty"`
	// RevocationChecked: CRLs or OCSP responses (in the document's DSS or
	// the signed attributes) showed the chain was not revoked at
	// CertificateCheckedAt.
	RevocationChecked bool `json:"revocationChecked"`
	// Certification is the DocMDP P (1-3) of a certification signature;
	// 0 for an approval signature or a document time-stamp.
	Certification int `json:"certification,omitempty"`

	// Digest is the hex digest of the signed byte ranges (SHA-256 for
	// quire's signatures): it identifies the signature in any later copy of
	// the file, whatever was appended since.
	Digest string `json:"digest,omitempty"`

	DigestValid      bool `json:"digestValid"`      // signed bytes unchanged
	SignatureValid   bool `json:"signatureValid"`   // CMS signature verifies with the certificate
	CertificateBound bool `json:"certificateBound"` // ESS signing-certificate hash matches
	Trusted          bool `json:"trusted"`          // certificate chains to the given roots
	// CoversWholeDocument: nothing but validation data and document
	// time-stamps was added after it.
	CoversWholeDocument bool `json:"coversWholeDocument"`

	// The examiner's vocabulary (ETSI EN 319 102-1, 319 142-1).
	Level         *string       `json:"level"`         // PAdES-BASELINE-B|T|LT|LTA, PKCS7-B|T|LT|LTA; null for a time-stamp
	Indication    string        `json:"indication"`    // TOTAL_PASSED, INDETERMINATE or TOTAL_FAILED
	SubIndication *string       `json:"subIndication"` // why not TOTAL_PASSED; null when it is
	Revocation    Revocation    `json:"revocation"`
	Modifications Modifications `json:"modifications"`
}

// Revocation is the revocation data found for a signature.
type Revocation struct {
	CRL  int `json:"crl"`
	OCSP int `json:"ocsp"`
	// Where: "dss" (the document security store), "signed-attributes"
	// (Adobe's revocation archive in the CMS) or "none".
	Where string `json:"where"`
}

// Indications (ETSI EN 319 102-1, 5.1.3).
const (
	TotalPassed   = "TOTAL_PASSED"
	Indeterminate = "INDETERMINATE"
	TotalFailed   = "TOTAL_FAILED"
)

// VerifyOptions say what VerifyWith trusts, and when.
type VerifyOptions struct {
	Roots *x509.CertPool // the roots signer certificates must chain to; nil: none trusted
	// TSARoots are the roots a time-stamp authority must chain to for its
	// time to count; nil: time-stamps are reported but not relied on.
	TSARoots *x509.CertPool
	Now      time.Time // the verification time; zero: now
	// Admit, when set, is called once the document's cross-reference data
	// is read, with its object count (pdf.Document.ObjectCount), before
	// the work; its error ends the verification. The caller charges its
	// memory budget there.
	Admit func(objects int) error
	// AdmitRevision, when set, is called for each earlier revision read
	// (the file cut where it ends), with its object count; its error ends
	// the verification. Each revision read holds its own objects.
	AdmitRevision func(objects int) error
}

// Verify checks every signature of pdf against trust, the roots signer
// certificates must chain to (nil: none is trusted).
//
// Verify reads pdf as it is, within lim (zero fields take
// pdf.DefaultLimits; a larger file fails with pdf.ErrTooLarge), never
// repairing it; a file encrypted with an empty user password is
// decrypted as it is read. A signature dictionary that several fields
// share is checked once. A document with more than 100 signatures is
// refused with an error wrapping pdf.ErrUnreadable rather than checked in
// part: each signature hashes up to the whole file, and a partial verdict
// would leave signatures unchecked.
func Verify(b []byte, trust *x509.CertPool, lim pdf.Limits) (Result, error) {
	return VerifyWith(b, VerifyOptions{Roots: trust}, lim)
}

// VerifyWith is Verify with time-stamp roots and a verification time.
//
// Each signature is checked in the revision it covers (its byte range
// must end where a readable revision ends): the entries of its signature
// dictionary are read there; then every later revision is compared with
// the one before it, object by object, and each change classified and
// judged (permissions.judge). The document is valid when it holds at
// least one signature (a document time-stamp is none) that is intact,
// chains to opt.Roots, is not revoked and uses no weak digest, no entry
// failed, and only permitted changes follow each signature.
//
// A signer certificate that is no longer valid at opt.Now is still
// accepted when the signature carries a time-stamp by a TSA that chains
// to opt.TSARoots, the chain was valid at the time-stamp's time, and the
// document's DSS (or the signed attributes) holds, for every certificate
// of the chain below the root, a CRL or OCSP response for its issuer
// that does not revoke it by then (PAdES B-LT).
func VerifyWith(b []byte, opt VerifyOptions, lim pdf.Limits) (Result, error) {
	return VerifyContext(context.Background(), b, opt, lim)
}

// VerifyContext is VerifyWith that stops with ctx's error once ctx ends
// (the client gone, a timeout): it looks at ctx before each signature,
// while it walks page trees and page content, and between revisions.
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

// verify checks the signatures of b. Sign's self-check passes the digest
// it knows (known): then the modifications of the newest entry only are
// looked for, and no trust is checked.
func verify(ctx context.Context, b []byte, opt VerifyOptions, lim pdf.Limits, known *knownDigest) (res Result, err error) {
	defer pdf.Recover(&err)
	d, end, err := readNewest(b, lim)
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
	v := &verifier{pdf: b, d: d, opt: opt, known: known, revs: newRevisions(ctx, b, d, end, lim, opt.AdmitRevision), dssOf: map[*pdf.Document]*dssData{}}
	sort.SliceStable(fields, func(i, j int) bool { return rangeEnd(fields[i].value) < rangeEnd(fields[j].value) })
	entries := make([]*entry, len(fields))
	for i, f := range fields {
		if err := ctx.Err(); err != nil { // each signature may hash the whole file
			return Result{}, err
		}
		entries[i] = v.check(f)
	}
	if err := v.judge(ctx, entries); err != nil {
		return Result{}, err
	}
	if v.revs.stop != nil {
		return Result{}, v.revs.stop
	}
	res = Result{Signers: make([]SignerResult, len(entries))}
	for i, e := range entries {
		res.Signers[i] = e.res
	}
	res.Valid, res.Reason = overall(entries, opt.Roots != nil)
	pages, err := d.PagesContext(ctx)
	if ended(err) {
		return Result{}, err
	}
	if err == nil { // signatures can be checked without a page tree
		res.Pages = len(pages)
	}
	return res, nil
}

// maxPrefixTries bounds the earlier ends of file tried when the whole
// file does not read: each try reads the file again.
const maxPrefixTries = 4

// readNewest reads b, or when its newest update cannot be read (a
// cross-reference section without trailer, as the incremental saving
// attacks append), its newest prefix that ends after "%%EOF" and reads:
// what follows it is then reported as a change nobody can check. It
// returns the document and where it ends.
func readNewest(b []byte, lim pdf.Limits) (*pdf.Document, int, error) {
	d, err := pdf.Read(b, lim)
	if err == nil || !errors.Is(err, pdf.ErrUnreadable) {
		return d, len(b), err
	}
	end := len(b)
	for range maxPrefixTries {
		i := bytes.LastIndex(b[:end], eofMarker)
		if i < 0 {
			break
		}
		end = i // the next try looks before this marker
		cut := i + len(eofMarker)
		for cut < len(b) && cut < i+len(eofMarker)+2 && (b[cut] == '\r' || b[cut] == '\n') {
			cut++
		}
		if cut == len(b) {
			continue // the whole file, which did not read
		}
		if d, perr := pdf.Read(b[:cut], lim); perr == nil {
			return d, cut, nil
		}
	}
	return nil, 0, err
}

var eofMarker = []byte("%%EOF")

// ended reports whether err is a context's: the work stopped because its
// request ended.
func ended(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// maxSignatures bounds the signatures that Verify checks; Sign does not
// add one beyond it.
const maxSignatures = 100

// overall summarises the entries into the document's verdict.
func overall(entries []*entry, trustGiven bool) (bool, string) {
	var signatures []*entry
	for _, e := range entries {
		if !e.timestamp {
			signatures = append(signatures, e)
		}
	}
	if len(signatures) == 0 {
		if len(entries) > 0 {
			return false, "the document has no signatures, only document time-stamps, which sign nothing"
		}
		return false, "the document has no signatures"
	}
	for _, e := range entries {
		if e.res.Indication == TotalFailed {
			return false, fmt.Sprintf("signature %q: %s", e.res.Field, e.res.Reason)
		}
	}
	for _, e := range signatures {
		if e.res.Valid {
			return true, ""
		}
	}
	if !trustGiven {
		return false, "no trust roots given: signatures are intact but their signers are not checked"
	}
	last := signatures[len(signatures)-1]
	return false, fmt.Sprintf("signature %q: %s", last.res.Field, last.res.Reason)
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

// entry is one signature or document time-stamp being verified.
type entry struct {
	res       SignerResult
	value     pdf.Dict // the signature dictionary as the newest revision has it
	timestamp bool
	end       int      // where the revision it signs ends; 0 when that is unknown
	signed    pdf.Dict // the signature dictionary as signed
	field     pdf.Dict // its field as signed
	sd        *signedData
	cert      *x509.Certificate
	sigTST    *timestampResult // the signature time-stamp, when intact
	docTST    *timestampResult // a document time-stamp's own token, when intact
	weak      bool             // a digest no longer fit for signatures
	revoked   bool
	failed    string // the TOTAL_FAILED sub-indication, "" when none
	undecided string // the INDETERMINATE sub-indication, "" when none
	revCRLs   [][]byte
	revOCSPs  [][]byte // from the signed attributes (adbe-revocationInfoArchival)
}

// fail records a TOTAL_FAILED sub-indication and why; the first reason
// stays.
func (e *entry) fail(sub, format string, a ...any) *entry {
	if e.failed == "" {
		e.failed = sub
		e.res.Reason = fmt.Sprintf(format, a...)
	}
	return e
}

// indeterminate records an INDETERMINATE sub-indication unless a failure
// or an earlier one was recorded.
func (e *entry) indeterminate(sub, format string, a ...any) *entry {
	if e.failed == "" && e.undecided == "" {
		e.undecided = sub
		if e.res.Reason == "" {
			e.res.Reason = fmt.Sprintf(format, a...)
		}
	}
	return e
}

// The sub-indications of ETSI EN 319 102-1 that quire reports.
const (
	subFormat        = "FORMAT_FAILURE"
	subHash          = "HASH_FAILURE"
	subCrypto        = "SIG_CRYPTO_FAILURE"
	subNoCert        = "NO_SIGNING_CERTIFICATE_FOUND"
	subNoChain       = "NO_CERTIFICATE_CHAIN_FOUND"
	subRevoked       = "REVOKED"
	subRevokedNoPOE  = "REVOKED_NO_POE"
	subOutOfBounds   = "OUT_OF_BOUNDS_NO_POE"
	subOutNotRevoked = "OUT_OF_BOUNDS_NOT_REVOKED"
	subNoRevocation  = "CERTIFICATE_CHAIN_GENERAL_FAILURE" // what EU DSS says of a chain without revocation data, offline
	subWeak          = "CRYPTO_CONSTRAINTS_FAILURE_NO_POE"
)

var subFilters = map[string]bool{"ETSI.CAdES.detached": true, "adbe.pkcs7.detached": true, "adbe.pkcs7.sha1": true, "ETSI.RFC3161": true}

// check verifies one entry's integrity, cryptography and signer, in the
// revision it covers.
func (vr *verifier) check(f sigField) *entry {
	b, v := vr.pdf, f.value
	e := &entry{res: SignerResult{Field: f.name}, value: v}
	r := &e.res
	r.SubFilter, _ = nameOf(v["SubFilter"])
	e.timestamp = r.SubFilter == "ETSI.RFC3161"
	if !subFilters[r.SubFilter] {
		return e.fail(subFormat, "unsupported signature type /SubFilter /%s", r.SubFilter)
	}
	ranges, err := byteRanges(b, v)
	if err != nil {
		return e.fail(subFormat, "forged signature: %v", err)
	}
	signedDoc, err := vr.revs.doc(ranges[2] + ranges[3])
	if err != nil {
		return e.fail(subFormat, "the bytes the signature covers are not a complete revision of the document: %v", err)
	}
	e.end = ranges[2] + ranges[3]
	if e.signed, e.field = signedValue(signedDoc, f); e.signed == nil {
		return e.fail(subFormat, "the signature dictionary is not in the bytes the signature covers")
	}
	if !reflect.DeepEqual(e.signed["ByteRange"], v["ByteRange"]) || !bytes.Equal(contentsOf(e.signed), contentsOf(v)) {
		return e.fail(subFormat, "the signature's /ByteRange or /Contents differ from the signed ones")
	}
	describeSigned(r, e.signed, v)
	r.Certification = docMDP(signedDoc, e.signed)
	if e.timestamp {
		return vr.checkDocTimestamp(e, contentsOf(v), ranges)
	}
	return vr.checkSignature(e, r.SubFilter, contentsOf(v), ranges)
}

// signedValue finds, in the revision a signature covers, its signature
// dictionary and its field.
func signedValue(d *pdf.Document, f sigField) (value, field pdf.Dict) {
	if f.fieldRef.Num != 0 {
		field, _ = d.Dict(f.fieldRef)
	}
	if f.valueRef.Num != 0 {
		value, _ = d.Dict(f.valueRef)
		return value, field
	}
	value, _ = d.Dict(field["V"])
	return value, field
}

// describeSigned fills in what the signer claims, from the signature
// dictionary as signed, and which of those claims changed since.
func describeSigned(r *SignerResult, signed, now pdf.Dict) {
	r.Name, r.SignReason, r.Location = pdf.TextOf(signed["Name"]), pdf.TextOf(signed["Reason"]), pdf.TextOf(signed["Location"])
	r.ContactInfo = pdf.TextOf(signed["ContactInfo"])
	if t, ok := parsePDFDate(pdf.TextOf(signed["M"])); ok {
		r.SigningTime = &t
	}
	for _, k := range changedKeys(signed, now) {
		r.ChangedAfterSigning = append(r.ChangedAfterSigning, string(k))
	}
}

// checkSignature checks a CMS signature (ETSI.CAdES.detached,
// adbe.pkcs7.detached, adbe.pkcs7.sha1) over its byte ranges.
func (vr *verifier) checkSignature(e *entry, subFilter string, contents []byte, ranges [4]int) *entry {
	r := &e.res
	sd, err := parseSignedData(contents)
	if err != nil {
		return e.fail(subFormat, "%v", err)
	}
	e.sd = sd
	h, err := sd.digestHash()
	if err != nil {
		return e.fail(subFormat, "%v", err)
	}
	digest := vr.known.of(h, vr.pdf, ranges)
	r.Digest = fmt.Sprintf("%x", digest)
	e.weak = weakHash(h)
	weak := h
	if subFilter == "adbe.pkcs7.sha1" { // the CMS signs the SHA-1 of the byte ranges, as its content
		e.weak, weak = true, crypto.SHA1
		if !bytes.Equal(sd.content, rangeDigest(crypto.SHA1, vr.pdf, ranges)) {
			return e.fail(subHash, "%v", errDigestMismatch)
		}
		hh := h.New()
		hh.Write(sd.content)
		digest = hh.Sum(nil)
	}
	cert, certErr := sd.signerCert()
	if certErr == nil {
		e.cert = cert
		describeCert(r, cert)
	}
	if sd.signer.signedAttrs != nil {
		err := sd.checkAttributes(digest)
		if errors.Is(err, errDigestMismatch) {
			return e.fail(subHash, "%v", err)
		}
		if err != nil { // a repeated attribute: the reference validators fail the signature's verification
			return e.fail(subCrypto, "%v", err)
		}
		r.DigestValid = true
	}
	if certErr != nil {
		return e.indeterminate(subNoCert, "%v", certErr)
	}
	ess, err := sd.verify(digest, cert)
	if err != nil {
		return e.fail(subCrypto, "%v", err)
	}
	r.DigestValid, r.SignatureValid, r.CertificateBound = true, true, ess
	e.revCRLs, e.revOCSPs = revocationArchive(sd.signer.attrs)
	if tok, ok := sd.signer.unsigned[oidAttrTimeStampToken.String()]; ok {
		// A token that does not hold is left out, not held against the
		// signature: unsigned attributes can be changed by anyone.
		if ts, err := vr.timestamp(tok, func(h crypto.Hash) []byte {
			hh := h.New()
			hh.Write(sd.signer.signature)
			return hh.Sum(nil)
		}); err == nil {
			e.sigTST = &ts
			r.TimestampTime, r.TimestampTrusted = &ts.genTime, ts.trusted
		}
	}
	vr.trust(e) // a chain that fails is said before a weak algorithm, as EU DSS does
	if e.weak {
		e.indeterminate(subWeak, "the signature uses %v, a digest algorithm no longer fit for signatures", weak)
	}
	return e
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
