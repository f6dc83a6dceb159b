package pdfsign

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// signedData is a parsed CMS SignedData with its first SignerInfo, the
// only one PDF signatures carry.
type signedData struct {
	contentType asn1.ObjectIdentifier
	content     []byte // encapsulated content; nil when detached
	certs       []*x509.Certificate
	certErrs    []error // certificates Go refuses to parse
	signer      signerInfo
	ber         bool // it came BER-encoded and was re-encoded in DER
}

type signerInfo struct {
	issuer      []byte // raw Name, with issuerAndSerialNumber
	serial      *big.Int
	keyID       []byte // with subjectKeyIdentifier
	digestAlg   asn1.ObjectIdentifier
	signedAttrs []byte // DER, re-tagged as SET OF: the bytes the signature covers
	attrs       map[string][]byte
	attrErr     error // an attribute CMS allows once that came more than once
	repeated    bool  // some signed attribute came more than once
	sigAlg      algorithm
	signature   []byte
	unsigned    map[string][]byte
}

var errCMS = errors.New("malformed CMS SignedData")

// parseSignedData parses a ContentInfo{signedData}, in DER or, re-encoded,
// in BER. Bytes after the ContentInfo are ignored: /Contents is padded
// with zeros.
func parseSignedData(b []byte) (*signedData, error) {
	sd, err := parseSignedDataDER(b)
	if err == nil {
		return sd, nil
	}
	der, berr := berToDER(b)
	if berr != nil {
		return nil, err
	}
	sd, derr := parseSignedDataDER(der)
	if derr != nil {
		return nil, err
	}
	sd.ber = true
	return sd, nil
}

func parseSignedDataDER(der []byte) (*signedData, error) {
	in := cryptobyte.String(der)
	var ci, wrapped, sd, algs, encap cryptobyte.String
	var ct asn1.ObjectIdentifier
	var version int64
	if !in.ReadASN1(&ci, cbasn1.SEQUENCE) || !ci.ReadASN1ObjectIdentifier(&ct) || !ct.Equal(oidSignedData) ||
		!ci.ReadASN1(&wrapped, tagExplicit0) || !wrapped.ReadASN1(&sd, cbasn1.SEQUENCE) ||
		!sd.ReadASN1Integer(&version) || !sd.ReadASN1(&algs, cbasn1.SET) || !sd.ReadASN1(&encap, cbasn1.SEQUENCE) {
		return nil, fmt.Errorf("%w (not a ContentInfo holding a SignedData)", errCMS)
	}
	out := &signedData{}
	if !encap.ReadASN1ObjectIdentifier(&out.contentType) {
		return nil, fmt.Errorf("%w: encapContentInfo", errCMS)
	}
	if encap.PeekASN1Tag(tagExplicit0) {
		var e cryptobyte.String
		if !encap.ReadASN1(&e, tagExplicit0) || !e.ReadASN1Bytes(&out.content, cbasn1.OCTET_STRING) {
			return nil, fmt.Errorf("%w: eContent", errCMS)
		}
	}
	if sd.PeekASN1Tag(tagExplicit0) {
		var certs cryptobyte.String
		sd.ReadASN1(&certs, tagExplicit0)
		for !certs.Empty() {
			var c cryptobyte.String
			var tag cbasn1.Tag
			if !certs.ReadAnyASN1Element(&c, &tag) {
				return nil, fmt.Errorf("%w: certificates", errCMS)
			}
			if tag != cbasn1.SEQUENCE {
				continue // attribute certificates and other choices
			}
			cert, err := x509.ParseCertificate(c)
			if err != nil {
				out.certErrs = append(out.certErrs, err)
				continue
			}
			out.certs = append(out.certs, cert)
		}
	}
	sd.SkipOptionalASN1(tagExplicit1) // CRLs
	var infos, si cryptobyte.String
	if !sd.ReadASN1(&infos, cbasn1.SET) || !infos.ReadASN1(&si, cbasn1.SEQUENCE) {
		return nil, fmt.Errorf("%w: no SignerInfo", errCMS)
	}
	var err error
	out.signer, err = parseSignerInfo(si)
	return out, err
}

func parseSignerInfo(si cryptobyte.String) (signerInfo, error) {
	var s signerInfo
	var version int64
	if !si.ReadASN1Integer(&version) {
		return s, fmt.Errorf("%w: SignerInfo version", errCMS)
	}
	if si.PeekASN1Tag(cbasn1.SEQUENCE) {
		var ias cryptobyte.String
		s.serial = new(big.Int)
		if !si.ReadASN1(&ias, cbasn1.SEQUENCE) || !ias.ReadASN1Element((*cryptobyte.String)(&s.issuer), cbasn1.SEQUENCE) ||
			!ias.ReadASN1Integer(s.serial) {
			return s, fmt.Errorf("%w: issuerAndSerialNumber", errCMS)
		}
	} else if !si.ReadASN1Bytes(&s.keyID, cbasn1.Tag(0).ContextSpecific()) {
		return s, fmt.Errorf("%w: signer identifier", errCMS)
	}
	alg, err := readAlgorithm(&si)
	if err != nil {
		return s, err
	}
	s.digestAlg = alg.oid
	if si.PeekASN1Tag(tagExplicit0) {
		var raw cryptobyte.String
		si.ReadASN1Element(&raw, tagExplicit0)
		s.signedAttrs = append([]byte{0x31}, raw[1:]...) // [0] IMPLICIT -> SET OF
		if s.attrs, s.attrErr, s.repeated, err = parseAttributes(raw); err != nil {
			return s, err
		}
	}
	if s.sigAlg, err = readAlgorithm(&si); err != nil {
		return s, err
	}
	if !si.ReadASN1Bytes(&s.signature, cbasn1.OCTET_STRING) {
		return s, fmt.Errorf("%w: signature value", errCMS)
	}
	if si.PeekASN1Tag(tagExplicit1) {
		var raw cryptobyte.String
		si.ReadASN1Element(&raw, tagExplicit1)
		if s.unsigned, _, _, err = parseAttributes(raw); err != nil {
			return s, err
		}
	}
	return s, nil
}

// singleValued are the attributes that RFC 5652 (5.3, 11) allows once,
// with one value: a second content type, digest or signing time would
// leave a verifier to pick which one was signed. The reference
// validators (Bouncy Castle, under EU DSS) refuse such a SignerInfo and
// take the first of any other repeated attribute; so does quire.
var singleValued = oidSet(oidAttrContentType.String(), oidAttrMessageDigest.String(), oidAttrSigningTime)

// parseAttributes maps attribute OIDs to their first value (DER). dup
// names a single-valued attribute that came twice, or with two values;
// repeated says whether any attribute came twice.
func parseAttributes(element []byte) (attrs map[string][]byte, dup error, repeated bool, err error) {
	in := cryptobyte.String(element)
	var set cryptobyte.String
	var tag cbasn1.Tag
	if !in.ReadAnyASN1(&set, &tag) {
		return nil, nil, false, fmt.Errorf("%w: attributes", errCMS)
	}
	attrs = map[string][]byte{}
	for !set.Empty() {
		var attr, values cryptobyte.String
		var oid asn1.ObjectIdentifier
		var first cryptobyte.String
		if !set.ReadASN1(&attr, cbasn1.SEQUENCE) || !attr.ReadASN1ObjectIdentifier(&oid) ||
			!attr.ReadASN1(&values, cbasn1.SET) || !values.ReadAnyASN1Element(&first, &tag) {
			return nil, nil, false, fmt.Errorf("%w: attribute", errCMS)
		}
		key := oid.String()
		_, seen := attrs[key]
		repeated = repeated || seen
		if singleValued[key] && (seen || !values.Empty()) && dup == nil {
			dup = fmt.Errorf("the %s attribute appears more than once", attrName(key))
		}
		if !seen {
			attrs[key] = first
		}
	}
	return attrs, dup, repeated, nil
}

func attrName(oid string) string {
	switch oid {
	case oidAttrContentType.String():
		return "content-type"
	case oidAttrMessageDigest.String():
		return "message-digest"
	}
	return "signing-time"
}

// signerCert finds the certificate the SignerInfo names.
func (sd *signedData) signerCert() (*x509.Certificate, error) {
	for _, c := range sd.certs {
		if sd.signer.serial != nil && c.SerialNumber.Cmp(sd.signer.serial) == 0 && bytes.Equal(c.RawIssuer, sd.signer.issuer) {
			return c, nil
		}
		if sd.signer.keyID != nil && bytes.Equal(c.SubjectKeyId, sd.signer.keyID) {
			return c, nil
		}
	}
	if len(sd.certErrs) > 0 {
		return nil, fmt.Errorf("signer certificate unusable: %w", sd.certErrs[0])
	}
	return nil, errors.New("signer certificate is not in the CMS")
}

// digestHash is the hash of the SignerInfo's digest algorithm.
func (sd *signedData) digestHash() (crypto.Hash, error) { return hashFor(sd.signer.digestAlg) }

// verify checks the CMS against contentDigest, the digest of the signed
// content under the SignerInfo's digest algorithm: content-type and
// message-digest attributes, the signature by cert, and the ESS
// signing-certificate(-v2) hash when present; essPresent says whether one
// was.
func (sd *signedData) verify(contentDigest []byte, cert *x509.Certificate) (essPresent bool, err error) {
	si := sd.signer
	h, err := sd.digestHash()
	if err != nil {
		return false, err
	}
	if si.signedAttrs == nil {
		if err := checkSignature(cert, si.sigAlg, h, contentDigest, si.signature, true); err != nil {
			return false, err
		}
		return false, nil
	}
	if err := sd.checkAttributes(contentDigest); err != nil {
		return false, err
	}
	if err := checkSignedAttributes(cert, si, h); err != nil {
		return false, err
	}
	return checkESS(si.attrs, cert)
}

// checkSignedAttributes verifies the signature over the signed attributes
// as encoded, and failing that in DER's order of SET OF (sorted), which
// some signers sign while sending another order.
func checkSignedAttributes(cert *x509.Certificate, si signerInfo, h crypto.Hash) error {
	err := checkSignature(cert, si.sigAlg, h, si.signedAttrs, si.signature, false)
	if !errors.Is(err, errBadSignature) {
		return err
	}
	if sorted, ok := sortedSet(si.signedAttrs); ok && !bytes.Equal(sorted, si.signedAttrs) &&
		checkSignature(cert, si.sigAlg, h, sorted, si.signature, false) == nil {
		return nil
	}
	return err
}

// sortedSet re-encodes a DER SET OF with its elements in DER's order.
func sortedSet(set []byte) ([]byte, bool) {
	in := cryptobyte.String(set)
	var body cryptobyte.String
	if !in.ReadASN1(&body, cbasn1.SET) {
		return nil, false
	}
	var elems [][]byte
	for !body.Empty() {
		var e cryptobyte.String
		var tag cbasn1.Tag
		if !body.ReadAnyASN1Element(&e, &tag) {
			return nil, false
		}
		elems = append(elems, e)
	}
	slices.SortFunc(elems, bytes.Compare)
	return derTLV([]byte{0x31}, bytes.Join(elems, nil)), true
}

func (sd *signedData) checkAttributes(contentDigest []byte) error {
	if sd.signer.attrErr != nil {
		return sd.signer.attrErr
	}
	var ct asn1.ObjectIdentifier
	in := cryptobyte.String(sd.signer.attrs[oidAttrContentType.String()])
	if !in.ReadASN1ObjectIdentifier(&ct) || !ct.Equal(sd.contentType) {
		return errors.New("content-type attribute missing or different from the content's type")
	}
	var md []byte
	in = cryptobyte.String(sd.signer.attrs[oidAttrMessageDigest.String()])
	if !in.ReadASN1Bytes(&md, cbasn1.OCTET_STRING) {
		return errors.New("message-digest attribute missing")
	}
	if !bytes.Equal(md, contentDigest) {
		return errDigestMismatch
	}
	return nil
}

// errDigestMismatch: the signed bytes are not what was signed.
var errDigestMismatch = errors.New("message digest does not match the signed bytes: the document was modified")

// checkESS compares the ESS signing-certificate-v2 (or v1) hash with the
// signer certificate: it binds the signature to this very certificate.
func checkESS(attrs map[string][]byte, cert *x509.Certificate) (bool, error) {
	val, h := attrs[oidAttrSigningCertV2.String()], crypto.SHA256
	if val == nil {
		if val, h = attrs[oidAttrSigningCert.String()], crypto.SHA1; val == nil {
			return false, nil
		}
	}
	in := cryptobyte.String(val)
	var sc, certs, id cryptobyte.String
	if !in.ReadASN1(&sc, cbasn1.SEQUENCE) || !sc.ReadASN1(&certs, cbasn1.SEQUENCE) || !certs.ReadASN1(&id, cbasn1.SEQUENCE) {
		return true, errors.New("malformed ESS signing-certificate attribute")
	}
	if h == crypto.SHA256 && id.PeekASN1Tag(cbasn1.SEQUENCE) {
		a, err := readAlgorithm(&id)
		if err != nil {
			return true, err
		}
		if h, err = hashFor(a.oid); err != nil {
			return true, err
		}
	}
	var want []byte
	if !id.ReadASN1Bytes(&want, cbasn1.OCTET_STRING) {
		return true, errors.New("malformed ESS certificate hash")
	}
	hh := h.New()
	hh.Write(cert.Raw)
	if !bytes.Equal(hh.Sum(nil), want) {
		return true, errors.New("ESS signing-certificate hash does not match the signer certificate")
	}
	return true, nil
}
