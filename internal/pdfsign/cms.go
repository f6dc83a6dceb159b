package pdfsign

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"math/big"
	"sort"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// Object identifiers used by the CMS code (RFC 5652, RFC 5035, RFC 3161,
// RFC 5754, RFC 5758).
var (
	oidData                 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidSignedData           = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidTSTInfo              = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}
	oidAttrContentType      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidAttrMessageDigest    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidAttrSigningCert      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 12}
	oidAttrSigningCertV2    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 47}
	oidAttrTimeStampToken   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 14}
	oidSHA1                 = asn1.ObjectIdentifier{1, 3, 14, 3, 2, 26}
	oidSHA256               = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidSHA384               = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 2}
	oidSHA512               = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 3}
	oidRSAEncryption        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	oidSHA256WithRSA        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidSHA384WithRSA        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 12}
	oidSHA512WithRSA        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 13}
	oidECDSAWithSHA256      = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidECDSAWithSHA384      = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 3}
	oidECDSAWithSHA512      = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 4}
	oidECPublicKeyAlgorithm = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidEmailAddress         = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}
)

var (
	tagExplicit0 = cbasn1.Tag(0).ContextSpecific().Constructed()
	tagExplicit1 = cbasn1.Tag(1).ContextSpecific().Constructed()
	tagExplicit2 = cbasn1.Tag(2).ContextSpecific().Constructed()
	tagGenName4  = cbasn1.Tag(4).ContextSpecific().Constructed()
)

// cmsSigner is what a CMS signature needs from an identity: a key behind
// crypto.Signer (so it can live in an HSM or KMS), its certificate and
// the issuing chain to embed.
type cmsSigner struct {
	key   crypto.Signer
	cert  *x509.Certificate
	chain []*x509.Certificate
}

// cmsContent is what is being signed: for a PDF signature only the
// SHA-256 digest of the byte ranges (detached); for a time-stamp token the
// encapsulated TSTInfo as well.
type cmsContent struct {
	contentType asn1.ObjectIdentifier
	digest      []byte // SHA-256 of the content
	embedded    []byte // nil: detached
}

// signCMS builds a CAdES-BES / PAdES B-B SignedData over c. The signed
// attributes are exactly content-type, message-digest and ESS
// signing-certificate-v2; there is no signing-time, which PAdES baseline
// forbids (the time is /M of the signature dictionary). With a
// Timestamper, a time-stamp token over the signature value is added as an
// unsigned attribute (PAdES B-T).
func signCMS(ctx context.Context, s cmsSigner, c cmsContent, tsa Timestamper) ([]byte, error) {
	attrs := signedAttributes(s.cert, c)
	toSign := derSet(attrs)
	sigAlg, err := signatureAlgorithm(s.key.Public())
	if err != nil {
		return nil, err
	}
	h := sha256.Sum256(toSign)
	sig, err := s.key.Sign(rand.Reader, h[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: signing key: %w", err)
	}
	var unsigned [][]byte
	if tsa != nil {
		d := sha256.Sum256(sig)
		token, err := tsa.Timestamp(ctx, d[:])
		if err != nil {
			return nil, fmt.Errorf("pdfsign: time-stamp: %w", err)
		}
		unsigned = append(unsigned, attribute(oidAttrTimeStampToken, token))
	}
	return assembleSignedData(s, c, attrs, sigAlg, sig, unsigned)
}

// signedAttributes encodes the three signed attributes, each as one DER
// Attribute element.
func signedAttributes(cert *x509.Certificate, c cmsContent) [][]byte {
	ct := derOf(func(b *cryptobyte.Builder) { b.AddASN1ObjectIdentifier(c.contentType) })
	md := derOf(func(b *cryptobyte.Builder) { b.AddASN1OctetString(c.digest) })
	return [][]byte{
		attribute(oidAttrContentType, ct),
		attribute(oidAttrMessageDigest, md),
		attribute(oidAttrSigningCertV2, signingCertificateV2(cert)),
	}
}

// signingCertificateV2 is the ESS SigningCertificateV2 value (RFC 5035)
// naming the signer certificate by its SHA-256 hash and issuer/serial.
// hashAlgorithm is omitted because SHA-256 is its DER default.
func signingCertificateV2(cert *x509.Certificate) []byte {
	h := sha256.Sum256(cert.Raw)
	return derOf(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // SigningCertificateV2
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // certs
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // ESSCertIDv2
					b.AddASN1OctetString(h[:])
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // IssuerSerial
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { // GeneralNames
							b.AddASN1(tagGenName4, func(b *cryptobyte.Builder) { b.AddBytes(cert.RawIssuer) })
						})
						b.AddASN1BigInt(cert.SerialNumber)
					})
				})
			})
		})
	})
}

// assembleSignedData writes ContentInfo{signedData, SignedData{…}}.
func assembleSignedData(s cmsSigner, c cmsContent, attrs [][]byte, sigAlg, sig []byte, unsigned [][]byte) ([]byte, error) {
	version := int64(1)
	if !c.contentType.Equal(oidData) {
		version = 3 // RFC 5652, 5.1: eContentType other than id-data
	}
	certs := [][]byte{s.cert.Raw}
	for _, ca := range s.chain {
		certs = append(certs, ca.Raw)
	}
	var b cryptobyte.Builder
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1ObjectIdentifier(oidSignedData)
		b.AddASN1(tagExplicit0, func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1Int64(version)
				b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { addAlgorithm(b, oidSHA256, false) })
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
					b.AddASN1ObjectIdentifier(c.contentType)
					if c.embedded != nil {
						b.AddASN1(tagExplicit0, func(b *cryptobyte.Builder) { b.AddASN1OctetString(c.embedded) })
					}
				})
				b.AddASN1(tagExplicit0, func(b *cryptobyte.Builder) { addSorted(b, certs) })
				b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
						b.AddASN1Int64(1)
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
							b.AddBytes(s.cert.RawIssuer)
							b.AddASN1BigInt(s.cert.SerialNumber)
						})
						addAlgorithm(b, oidSHA256, false)
						b.AddASN1(tagExplicit0, func(b *cryptobyte.Builder) { addSorted(b, attrs) })
						b.AddBytes(sigAlg)
						b.AddASN1OctetString(sig)
						if len(unsigned) > 0 {
							b.AddASN1(tagExplicit1, func(b *cryptobyte.Builder) { addSorted(b, unsigned) })
						}
					})
				})
			})
		})
	})
	return b.Bytes()
}

// signatureAlgorithm returns the DER AlgorithmIdentifier for signing a
// SHA-256 digest with a key of the type of pub.
func signatureAlgorithm(pub crypto.PublicKey) ([]byte, error) {
	switch pub.(type) {
	case *rsa.PublicKey:
		return derOf(func(b *cryptobyte.Builder) { addAlgorithm(b, oidSHA256WithRSA, true) }), nil
	case *ecdsa.PublicKey:
		return derOf(func(b *cryptobyte.Builder) { addAlgorithm(b, oidECDSAWithSHA256, false) }), nil
	case ed25519.PublicKey:
		return nil, fmt.Errorf("pdfsign: Ed25519 keys are not supported for PAdES signatures")
	}
	return nil, fmt.Errorf("pdfsign: unsupported signing key type %T", pub)
}

// addAlgorithm writes an AlgorithmIdentifier; RSA algorithms carry an
// explicit NULL parameter (RFC 4055), digests and ECDSA none (RFC 5754).
func addAlgorithm(b *cryptobyte.Builder, oid asn1.ObjectIdentifier, nullParam bool) {
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
		b.AddASN1ObjectIdentifier(oid)
		if nullParam {
			b.AddASN1NULL()
		}
	})
}

// attribute encodes Attribute ::= SEQUENCE { attrType, SET { value } }.
func attribute(oid asn1.ObjectIdentifier, value []byte) []byte {
	return derOf(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1ObjectIdentifier(oid)
			b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { b.AddBytes(value) })
		})
	})
}

// derSet encodes elems as a DER SET OF: the form the signature covers.
func derSet(elems [][]byte) []byte {
	return derOf(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { addSorted(b, elems) })
	})
}

// addSorted writes elements in ascending byte order, as DER requires for
// the members of a SET OF.
func addSorted(b *cryptobyte.Builder, elems [][]byte) {
	sorted := append([][]byte(nil), elems...)
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i], sorted[j]) < 0 })
	for _, e := range sorted {
		b.AddBytes(e)
	}
}

// derOf runs f on a fresh builder. The builders here only receive values
// that cannot fail to encode, so an error is a programming error.
func derOf(f func(b *cryptobyte.Builder)) []byte {
	var b cryptobyte.Builder
	f(&b)
	return b.BytesOrPanic()
}

// serialString formats a certificate serial number as hex, as tools show it.
func serialString(n *big.Int) string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf("%X", n)
}
