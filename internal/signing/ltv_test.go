package signing

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ocsp"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// operatorIdentity is an identity an operator brings as PEM files: a
// signing certificate valid for life, whose CRL distribution point is a
// server of the CA's (its requests counted in hits), and with withOCSP an
// OCSP responder too (counted in ocspHits).
func operatorIdentity(t *testing.T, life time.Duration, withOCSP bool) (id *pdfsign.Identity, hits, ocspHits *atomic.Int32) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "operator CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.AddDate(5, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	caDER, _ := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	ca, _ := x509.ParseCertificate(caDER)
	hits, ocspHits = new(atomic.Int32), new(atomic.Int32)
	crlServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		der, _ := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(time.Now().UnixNano()),
			ThisUpdate: time.Now(), NextUpdate: time.Now().Add(24 * time.Hour)}, ca, caKey)
		w.Write(der)
	}))
	t.Cleanup(crlServer.Close)
	lT := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "operator signer", Organization: []string{"Example Ltd"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(life), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		CRLDistributionPoints: []string{crlServer.URL + "/operator.crl"}}
	if withOCSP {
		lT.OCSPServer = []string{ocspResponder(t, ca, caKey, ocspHits)}
	}
	der, _ := x509.CreateCertificate(rand.Reader, lT, ca, &key.PublicKey, caKey)
	keyDER, _ := x509.MarshalPKCS8PrivateKey(key)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	return id, hits, ocspHits
}

// ocspResponder answers RFC 5019 GET requests: "good" for every serial,
// signed by the CA itself.
func ocspResponder(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, hits *atomic.Int32) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		raw, err := url.PathUnescape(strings.TrimPrefix(r.URL.EscapedPath(), "/"))
		der, err2 := base64.StdEncoding.DecodeString(raw)
		req, err3 := ocsp.ParseRequest(der)
		if err != nil || err2 != nil || err3 != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		resp, err := ocsp.CreateResponse(ca, ca, ocsp.Response{Status: ocsp.Good, SerialNumber: req.SerialNumber,
			ThisUpdate: time.Now().Add(-time.Minute), NextUpdate: time.Now().Add(time.Hour)}, caKey)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/ocsp-response")
		w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func submitted(doc []byte, certificate bool) Request {
	return Request{Document: Document{Bytes: doc}, Signer: Signer{Name: "Ann", Email: "ann@example.com"}, Certificate: certificate,
		AuditTrail: []AuditEvent{{Type: "submit", Timestamp: time.Now().UTC()}}}
}

// TestLongTermVerifyAfterExpiry signs at B-LT with an operator's
// short-lived certificate (its CRL fetched from its distribution point),
// then verifies on a clock set after the certificate expired.
func TestLongTermVerifyAfterExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	id, hits, _ := operatorIdentity(t, time.Hour, false)
	tsa := pdftest.NewTSA(t)
	// The TSA is trusted as the service's own: its root is learned from its
	// tokens into the database.
	service := func(now time.Time, db *store.DB) *Service {
		return New(id, db, nil, loopbackFetcher(), Options{Certificates: certificates, MaxDocumentBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
			Timestamper: &pdfsign.TSAClient{URL: tsa.URL}, Level: pdfsign.LevelLT,
			Now: func() time.Time { return now }})
	}
	signed, err := service(time.Now(), db).Sign(ctx, submitted(pdftest.OnePage("long term"), false), "key")
	out := signed.PDF
	if err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 1 {
		t.Fatalf("the CRL distribution point was asked %d times, want 1", hits.Load())
	}
	signer := service(time.Now(), db)
	for range 2 { // the CRL is reused, not downloaded for every signature
		if _, err := signer.Sign(ctx, submitted(pdftest.OnePage("again"), false), "key"); err != nil {
			t.Fatal(err)
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("the CRL distribution point was asked %d times for 3 signatures by 2 services, want 2", hits.Load())
	}
	later := time.Now().Add(3 * time.Hour)
	res, err := service(later, db).Verify(ctx, Document{Bytes: out})
	if err != nil || !res.Valid {
		t.Fatalf("verify after expiry: %v %+v", err, res)
	}
	if s := res.Signer; !s.RevocationChecked || s.CertificateCheckedAt == nil || !s.CertificateCheckedAt.Equal(*s.TimestampTime) || s.EventID == "" {
		t.Fatalf("signer after expiry: %+v", s)
	}
	// A database that never saw a token of that TSA does not trust it.
	if res, err := service(later, storetest.Open(t, storetest.URL(t, "sqlite"))).Verify(ctx, Document{Bytes: out}); err != nil || res.Valid || res.Signer.TimestampTrusted {
		t.Fatalf("verified after expiry without trusting the TSA: %v %+v", err, res)
	}
}

// certifiedPDF is a one-page PDF certified with DocMDP level p.
func certifiedPDF(t *testing.T, p int) []byte {
	t.Helper()
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := pdf.Open(context.Background(), pdftest.OnePage("certified"), pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := pdfsign.Sign(context.Background(), doc, id, pdfsign.Options{Name: "Certifier", DocMDP: p})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCertifiedDocuments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t, storetest.Open(t, storetest.URL(t, "sqlite")))
	_, err := svc.Sign(ctx, submitted(certifiedPDF(t, 1), true), "key")
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodeUnprocessable || !strings.Contains(qe.Message, "P=1") {
		t.Fatalf("P=1: %v", err)
	}
	for _, p := range []int{2, 3} {
		signed, err := svc.Sign(ctx, submitted(certifiedPDF(t, p), true), "key")
		out := signed.PDF
		if err != nil {
			t.Fatalf("P=%d: %v", p, err)
		}
		res, err := svc.Verify(ctx, Document{Bytes: out})
		if err != nil || len(res.Signers) != 2 || res.Document.Pages != 1 || res.Signers[0].Certification != p || !res.Signers[1].SignatureValid {
			t.Fatalf("P=%d: signed without a certificate page? %v %+v", p, err, res)
		}
	}
}

// TestCRLBehindSSRFGuardLeftOut: a distribution point on a private
// address is not fetched unless private fetches are allowed; the document
// is signed without its CRL, and cannot be validated after expiry.
func TestCRLBehindSSRFGuardLeftOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	id, hits, _ := operatorIdentity(t, time.Hour, false)
	tsa := pdftest.NewTSA(t)
	guarded := fetch.New(fetch.Options{MaxBytes: 1 << 20}) // the default rules: no loopback
	opt := Options{Certificates: certificates, MaxDocumentBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Timestamper: &pdfsign.TSAClient{URL: tsa.URL}, Level: pdfsign.LevelLT, Now: time.Now}
	signed, err := New(id, db, nil, guarded, opt).Sign(ctx, submitted(pdftest.OnePage("guarded"), false), "key")
	out := signed.PDF
	if err != nil || hits.Load() != 0 {
		t.Fatalf("sign: %v, CRL server asked %d times", err, hits.Load())
	}
	later := time.Now().Add(3 * time.Hour)
	opt.Now = func() time.Time { return later }
	res, err := New(id, db, nil, guarded, opt).Verify(ctx, Document{Bytes: out})
	if err != nil || res.Valid || !strings.Contains(res.Reason, "no CRL or OCSP response") {
		t.Fatalf("verify after expiry without a CRL: %v %+v", err, res)
	}
}

// TestOCSPPreferred: a certificate that names an OCSP responder gets its
// "good" answer in the DSS (/OCSPs) instead of its CRL, and the answer
// validates the signature after the certificate expired.
func TestOCSPPreferred(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	id, crlHits, ocspHits := operatorIdentity(t, time.Hour, true)
	tsa := pdftest.NewTSA(t)
	opt := Options{Certificates: certificates, MaxDocumentBytes: 1 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Timestamper: &pdfsign.TSAClient{URL: tsa.URL}, Level: pdfsign.LevelLT,
		Now: time.Now}
	signed, err := New(id, db, nil, loopbackFetcher(), opt).Sign(ctx, submitted(pdftest.OnePage("ocsp"), false), "key")
	out := signed.PDF
	if err != nil || ocspHits.Load() != 1 || crlHits.Load() != 0 {
		t.Fatalf("sign: %v; OCSP asked %d times, CRL %d", err, ocspHits.Load(), crlHits.Load())
	}
	d, err := pdf.Read(out, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	_, cat, _ := d.Catalog()
	dss, err := d.Dict(cat["DSS"])
	ocsps, _ := d.Array(dss["OCSPs"])
	crls, _ := d.Array(dss["CRLs"])
	if err != nil || len(ocsps) != 1 || len(crls) != 1 || crlHits.Load() != 0 { // the one CRL is the TSA's, which names no OCSP responder
		t.Fatalf("DSS %v: want one OCSP response and only the TSA's CRL", dss)
	}
	later := time.Now().Add(3 * time.Hour)
	opt.Now = func() time.Time { return later }
	res, err := New(id, db, nil, loopbackFetcher(), opt).Verify(ctx, Document{Bytes: out})
	if err != nil || !res.Valid || !res.Signer.RevocationChecked {
		t.Fatalf("verify after expiry with OCSP: %v %+v", err, res)
	}
}

// loopbackFetcher downloads from the tests' servers on loopback.
func loopbackFetcher() *fetch.Fetcher {
	return fetch.New(fetch.Options{AllowPrivate: true, MaxBytes: 1 << 20})
}
