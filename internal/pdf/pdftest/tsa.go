package pdftest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// TSA is a real RFC 3161 time-stamping authority on loopback: it parses
// each TimeStampReq and answers a token signed by a time-stamping
// certificate (extended key usage timeStamping) under a root of its own.
type TSA struct {
	URL     string
	Root    *x509.Certificate
	RootPEM []byte
	srv     *httptest.Server
	key     *ecdsa.PrivateKey
	cert    *x509.Certificate
	crl     []byte // the root's CRL, DER
}

// Roots is a pool holding the TSA's root.
func (a *TSA) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.Root)
	return p
}

// NewTSA starts a TSA, stopped when the test ends. Its certificate names
// a CRL distribution point on the same server (GET /crl, the root's empty
// CRL), so that validation data can be gathered for it as for a public
// TSA.
func NewTSA(t testing.TB) *TSA {
	t.Helper()
	return newTSA(t, true)
}

// NewTSAWithoutRevocation starts a TSA whose certificate names neither a
// CRL nor an OCSP responder, as some do: no validator can find
// revocation data for it, and so no signature time-stamped by it reaches
// PAdES B-LT.
func NewTSAWithoutRevocation(t testing.TB) *TSA {
	t.Helper()
	return newTSA(t, false)
}

func newTSA(t testing.TB, withCRL bool) *TSA {
	rootKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now().Add(-time.Hour)
	rootT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test TSA root"},
		NotBefore: now, NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	rootDER, err := x509.CreateCertificate(rand.Reader, rootT, rootT, &rootKey.PublicKey, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := x509.ParseCertificate(rootDER)
	a := &TSA{Root: root, RootPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rootDER}), key: key}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	a.URL = a.srv.URL
	t.Cleanup(a.srv.Close)
	certT := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test TSA"},
		NotBefore: now, NotAfter: now.AddDate(10, 0, 0), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}
	if withCRL {
		certT.CRLDistributionPoints = []string{a.URL + "/crl"}
	}
	der, err := x509.CreateCertificate(rand.Reader, certT, root, &key.PublicKey, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	a.cert, _ = x509.ParseCertificate(der)
	a.crl, err = x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: now,
		NextUpdate: now.AddDate(0, 0, 7)}, root, rootKey)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var (
	oidSHA256        = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidECDSAWithSHA2 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidSignedData    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidTSTInfo       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}
	oidContentType   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidMessageDigest = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidSigningCertV2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 47}
)

func (a *TSA) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/crl" {
		w.Header().Set("Content-Type", "application/pkix-crl")
		w.Write(a.crl)
		return
	}
	body, _ := io.ReadAll(r.Body)
	in := cryptobyte.String(body)
	var req, imprint, alg cryptobyte.String
	var version int64
	var digest []byte
	nonce := new(big.Int)
	if r.Header.Get("Content-Type") != "application/timestamp-query" ||
		!in.ReadASN1(&req, cbasn1.SEQUENCE) || !req.ReadASN1Integer(&version) ||
		!req.ReadASN1(&imprint, cbasn1.SEQUENCE) || !imprint.ReadASN1(&alg, cbasn1.SEQUENCE) ||
		!imprint.ReadASN1Bytes(&digest, cbasn1.OCTET_STRING) || !req.ReadASN1Integer(nonce) {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	tst := build(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1Int64(1)
			b.AddASN1ObjectIdentifier(asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1})
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				algorithm(b, oidSHA256)
				b.AddASN1OctetString(digest)
			})
			b.AddASN1Int64(time.Now().UnixNano())
			b.AddASN1GeneralizedTime(time.Now().UTC().Truncate(time.Second))
			b.AddASN1BigInt(nonce)
		})
	})
	resp := build(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { b.AddASN1Int64(0) })
			b.AddBytes(a.token(tst))
		})
	})
	w.Header().Set("Content-Type", "application/timestamp-reply")
	w.Write(resp)
}

// token signs tst into a CMS SignedData with the content-type,
// message-digest and ESS signing-certificate-v2 signed attributes (RFC
// 5816: validators drop a token without the last).
func (a *TSA) token(tst []byte) []byte {
	md := sha256.Sum256(tst)
	certHash := sha256.Sum256(a.cert.Raw)
	ess := build(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { b.AddASN1OctetString(certHash[:]) })
			})
		})
	})
	attrs := [][]byte{
		attribute(oidContentType, build(func(b *cryptobyte.Builder) { b.AddASN1ObjectIdentifier(oidTSTInfo) })),
		attribute(oidMessageDigest, build(func(b *cryptobyte.Builder) { b.AddASN1OctetString(md[:]) })),
		attribute(oidSigningCertV2, ess),
	}
	sort.Slice(attrs, func(i, j int) bool { return bytes.Compare(attrs[i], attrs[j]) < 0 })
	inner := bytes.Join(attrs, nil)
	set := build(func(b *cryptobyte.Builder) { b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { b.AddBytes(inner) }) })
	h := sha256.Sum256(set)
	sig, _ := a.key.Sign(rand.Reader, h[:], crypto.SHA256)
	tag0 := cbasn1.Tag(0).ContextSpecific().Constructed()
	return build(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1ObjectIdentifier(oidSignedData)
			b.AddASN1(tag0, func(b *cryptobyte.Builder) {
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
					b.AddASN1Int64(3)
					b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { algorithm(b, oidSHA256) })
					b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
						b.AddASN1ObjectIdentifier(oidTSTInfo)
						b.AddASN1(tag0, func(b *cryptobyte.Builder) { b.AddASN1OctetString(tst) })
					})
					b.AddASN1(tag0, func(b *cryptobyte.Builder) { b.AddBytes(a.cert.Raw); b.AddBytes(a.Root.Raw) })
					b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) {
						b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
							b.AddASN1Int64(1)
							b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
								b.AddBytes(a.cert.RawIssuer)
								b.AddASN1BigInt(a.cert.SerialNumber)
							})
							algorithm(b, oidSHA256)
							b.AddASN1(cbasn1.Tag(0).ContextSpecific().Constructed(), func(b *cryptobyte.Builder) { b.AddBytes(inner) })
							algorithm(b, oidECDSAWithSHA2)
							b.AddASN1OctetString(sig)
						})
					})
				})
			})
		})
	})
}

func algorithm(b *cryptobyte.Builder, oid asn1.ObjectIdentifier) {
	b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { b.AddASN1ObjectIdentifier(oid) })
}

func attribute(oid asn1.ObjectIdentifier, value []byte) []byte {
	return build(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1ObjectIdentifier(oid)
			b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { b.AddBytes(value) })
		})
	})
}

func build(f func(b *cryptobyte.Builder)) []byte {
	var b cryptobyte.Builder
	f(&b)
	return b.BytesOrPanic()
}
