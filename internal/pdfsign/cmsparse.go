package pdfsign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"math/big"

	// Registers SHA-1 and SHA-2 with crypto.Hash for foreign signatures.
	_ "crypto/sha1"
	_ "crypto/sha256"
	_ "crypto/sha512"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// signedData is a parsed CMS SignedData with its first SignerInfo, the
// only one PDF signatures carry.
type signedData struct {
	contentType asn1.ObjectIdentifier
	content     []byte // encapsulated content; nil when detached
	certs       []*x509.Certificate
	certErrs    []error // certificates Go refuses to parse (e.g. negative serials)
	signer      signerInfo
}

type signerInfo struct {
	issuer      []byte // raw Name, with issuerAndSerialNumber
	serial      *big.Int
	keyID       []byte // with subjectKeyIdentifier
	digestAlg   asn1.ObjectIdentifier
	signedAttrs []byte // DER, re-tagged as SET OF: the bytes the signature covers
	attrs       map[string][]byte
	sigAlg      asn1.ObjectIdentifier
	signature   []byte
	unsigned    map[string][]byte
}

var errCMS = errors.New("malformed CMS SignedData")

// parseSignedData parses DER ContentInfo{signedData}. Bytes after the
// ContentInfo are ignored: /Contents is padded with zeros.
func parseSignedData(der []byte) (*signedData, error) {
	in := cryptobyte.String(der)
	var ci, wrapped, sd, algs, encap cryptobyte.String
	var ct asn1.ObjectIdentifier
	var version int64
	if !in.ReadASN1(&ci, cbasn1.SEQUENCE) || !ci.ReadASN1ObjectIdentifier(&ct) || !ct.Equal(oidSignedData) ||
		!ci.ReadASN1(&wrapped, tagExplicit0) || !wrapped.ReadASN1(&sd, cbasn1.SEQUENCE) ||
		!sd.ReadASN1Integer(&version) || !sd.ReadASN1(&algs, cbasn1.SET) || !sd.ReadASN1(&encap, cbasn1.SEQUENCE) {
		return nil, fmt.Errorf("%w (not DER ContentInfo/SignedData)", errCMS)
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
	var err error
	if s.digestAlg, err = readAlgorithm(&si); err != nil {
		return s, err
	}
	if si.PeekASN1Tag(tagExplicit0) {
		var raw cryptobyte.String
		si.ReadASN1Element(&raw, tagExplicit0)
		s.signedAttrs = append([]byte{0x31}, raw[1:]...) // [0] IMPLICIT -> SET OF
		if s.attrs, err = parseAttributes(raw); err != nil {
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
		if s.unsigned, err = parseAttributes(raw); err != nil {
			return s, err
		}
	}
	return s, nil
}

func readAlgorithm(s *cryptobyte.String) (asn1.ObjectIdentifier, error) {
	var alg cryptobyte.String
	var oid asn1.ObjectIdentifier
	if !s.ReadASN1(&alg, cbasn1.SEQUENCE) || !alg.ReadASN1ObjectIdentifier(&oid) {
		return nil, fmt.Errorf("%w: AlgorithmIdentifier", errCMS)
	}
	return oid, nil
}

// parseAttributes maps attribute OIDs to their first value (DER). A
// repeated attribute type is refused, as RFC 5652 forbids it for the
// attributes that matter here.
func parseAttributes(element []byte) (map[string][]byte, error) {
	in := cryptobyte.String(element)
	var set cryptobyte.String
	var tag cbasn1.Tag
	if !in.ReadAnyASN1(&set, &tag) {
		return nil, fmt.Errorf("%w: attributes", errCMS)
	}
	out := map[string][]byte{}
	for !set.Empty() {
		var attr, values cryptobyte.String
		var oid asn1.ObjectIdentifier
		var first cryptobyte.String
		if !set.ReadASN1(&attr, cbasn1.SEQUENCE) || !attr.ReadASN1ObjectIdentifier(&oid) ||
			!attr.ReadASN1(&values, cbasn1.SET) || !values.ReadAnyASN1Element(&first, &tag) {
			return nil, fmt.Errorf("%w: attribute", errCMS)
		}
		if _, dup := out[oid.String()]; dup {
			return nil, fmt.Errorf("%w: attribute %s appears twice", errCMS, oid)
		}
		out[oid.String()] = first
	}
	return out, nil
}

// hashFor maps a digest algorithm OID to its hash.
func hashFor(oid asn1.ObjectIdentifier) (crypto.Hash, error) {
	switch {
	case oid.Equal(oidSHA256):
		return crypto.SHA256, nil
	case oid.Equal(oidSHA384):
		return crypto.SHA384, nil
	case oid.Equal(oidSHA512):
		return crypto.SHA512, nil
	case oid.Equal(oidSHA1):
		return crypto.SHA1, nil
	}
	return 0, fmt.Errorf("unsupported digest algorithm %s", oid)
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

// verify checks the CMS against contentDigest, the digest of the signed
// content under the SignerInfo's digest algorithm: content-type and
// message-digest attributes, the signature by cert, and the ESS
// signing-certificate(-v2) hash when present; essPresent says whether one
// was.
func (sd *signedData) verify(contentDigest []byte, cert *x509.Certificate) (essPresent bool, err error) {
	si := sd.signer
	h, err := hashFor(si.digestAlg)
	if err != nil {
		return false, err
	}
	signed := contentDigest
	if si.signedAttrs != nil {
		if err := sd.checkAttributes(contentDigest); err != nil {
			return false, err
		}
		signed = si.signedAttrs
	}
	if err := checkSignature(cert, si.sigAlg, h, signed, si.signature, si.signedAttrs == nil); err != nil {
		return false, err
	}
	return checkESS(si.attrs, cert)
}

func (sd *signedData) checkAttributes(contentDigest []byte) error {
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
		return errors.New("message digest does not match the signed bytes: the document was modified")
	}
	return nil
}

// checkSignature verifies sig over data (or over the digest itself when
// preHashed, for signatures without signed attributes).
func checkSignature(cert *x509.Certificate, sigAlg asn1.ObjectIdentifier, h crypto.Hash, data, sig []byte, preHashed bool) error {
	digest := data
	if !preHashed {
		hh := h.New()
		hh.Write(data)
		digest = hh.Sum(nil)
	}
	switch pub := cert.PublicKey.(type) {
	case *rsa.PublicKey:
		if !(sigAlg.Equal(oidRSAEncryption) || sigAlg.Equal(oidSHA256WithRSA) || sigAlg.Equal(oidSHA384WithRSA) || sigAlg.Equal(oidSHA512WithRSA)) {
			return fmt.Errorf("unsupported RSA signature algorithm %s", sigAlg)
		}
		if err := rsa.VerifyPKCS1v15(pub, h, digest, sig); err != nil {
			return errors.New("CMS signature does not verify with the signer certificate")
		}
	case *ecdsa.PublicKey:
		if !(sigAlg.Equal(oidECDSAWithSHA256) || sigAlg.Equal(oidECDSAWithSHA384) || sigAlg.Equal(oidECDSAWithSHA512) || sigAlg.Equal(oidECPublicKeyAlgorithm)) {
			return fmt.Errorf("unsupported ECDSA signature algorithm %s", sigAlg)
		}
		if !ecdsa.VerifyASN1(pub, digest, sig) {
			return errors.New("CMS signature does not verify with the signer certificate")
		}
	default:
		return fmt.Errorf("unsupported signer key type %T", cert.PublicKey)
	}
	return nil
}

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
		oid, err := readAlgorithm(&id)
		if err != nil {
			return true, err
		}
		if h, err = hashFor(oid); err != nil {
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
