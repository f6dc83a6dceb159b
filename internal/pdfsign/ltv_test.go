package pdfsign

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// shortLivedIdentity is a quire identity (own CA, which issues CRLs) whose
// signing certificate expires after life.
func shortLivedIdentity(t *testing.T, life time.Duration) *Identity {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	ca, err := createCert(&x509.Certificate{Subject: pkix.Name{CommonName: "short-lived test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.AddDate(5, 0, 0), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign},
		&caKey.PublicKey, nil, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := createCert(&x509.Certificate{Subject: pkix.Name{CommonName: "short-lived signer"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(life), KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}, &key.PublicKey, ca, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return &Identity{Key: key, Certificate: cert, Chain: []*x509.Certificate{ca}, ca: &authority{cert: ca, key: caKey}}
}

// dssOf parses the DSS of pdf: its certificates, CRLs and VRI keys.
func dssOf(t *testing.T, b []byte) (certs []*x509.Certificate, crls []*x509.RevocationList, vri pdf.Dict) {
	t.Helper()
	d, err := pdf.Read(b, pdf.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	v := &verifier{pdf: b, d: d, dssOf: map[*pdf.Document]*dssData{}}
	s := v.dss(d)
	certs, crls = s.certs, s.crls
	_, cat, _ := d.Catalog()
	dss, err := d.Dict(cat["DSS"])
	if err != nil {
		t.Fatalf("no DSS in the catalog: %v", err)
	}
	vri, _ = d.Dict(dss["VRI"])
	return certs, crls, vri
}

func TestLongTermSignatureVerifiesAfterExpiry(t *testing.T) {
	requireValidators(t)
	tsa := pdftest.NewTSA(t)
	id := shortLivedIdentity(t, time.Hour)
	out, _, err := signBytes(context.Background(), pdftest.Generated(1, true, 0), id, Options{Timestamper: &TSAClient{URL: tsa.URL}, Level: LevelLT})
	if err != nil {
		t.Fatal(err)
	}
	certs, crls, vri := dssOf(t, out)
	if len(certs) != 4 || len(crls) != 1 || crls[0].CheckSignatureFrom(id.Chain[0]) != nil {
		t.Fatalf("DSS holds %d certificates (want signer, CA, TSA and the TSA's root, which its token carries) and %d CRLs (want the CA's; no Fetch, so not the TSA's)", len(certs), len(crls))
	}
	contents, _ := extractCMS(t, out, 0)
	key := sha1.Sum(contents)
	entry, ok := vri[pdf.Name(strings.ToUpper(hex.EncodeToString(key[:])))].(pdf.Dict)
	if !ok || len(entry["Cert"].(pdf.Array)) != 4 || len(entry["CRL"].(pdf.Array)) != 1 {
		t.Fatalf("VRI has no entry for the signature: %v", vri)
	}

	now := VerifyOptions{Roots: id.Roots(), TSARoots: tsa.Roots()}
	res, err := VerifyWith(out, now, pdf.Limits{})
	if err != nil || !res.Valid || !res.Signers[0].CoversWholeDocument || !res.Signers[0].RevocationChecked {
		t.Fatalf("verify now: %v %+v", err, res)
	}
	later := now
	later.Now = time.Now().Add(3 * time.Hour) // the certificate expired an hour or two ago
	res, err = VerifyWith(out, later, pdf.Limits{})
	s := res.Signers[0]
	if err != nil || !res.Valid || !s.TimestampTrusted || s.CertificateCheckedAt == nil || !s.CertificateCheckedAt.Equal(*s.TimestampTime) {
		t.Fatalf("verify after expiry: %v %+v", err, res)
	}
	// Without a trusted time-stamp, an expired certificate fails.
	untrusted := later
	untrusted.TSARoots = x509.NewCertPool()
	if res, _ := VerifyWith(out, untrusted, pdf.Limits{}); res.Valid || !strings.Contains(res.Reason, "expired") {
		t.Fatalf("expired certificate accepted without a trusted time-stamp: %+v", res)
	}
	// Without the DSS's CRL, neither.
	bt, _, err := signBytes(context.Background(), pdftest.Generated(1, true, 0), id, Options{Timestamper: &TSAClient{URL: tsa.URL}, Level: LevelT})
	if err != nil {
		t.Fatal(err)
	}
	if res, _ := VerifyWith(bt, later, pdf.Limits{}); res.Valid || !strings.Contains(res.Reason, "no CRL or OCSP response") {
		t.Fatalf("B-T signature accepted after expiry: %+v", res)
	}

	report := pdfsig(t, nssDB(t, id), out)
	if !strings.Contains(report, "Signature is Valid.") || !strings.Contains(report, "Certificate is Trusted.") {
		t.Fatalf("pdfsig:\n%s", report)
	}
	qpdfCheck(t, out)
	opensslWithCRL(t, id, out, crls[0].Raw, time.Now().Add(30*time.Minute))
}

// opensslWithCRL verifies the signature with openssl cms, checking the
// signer's certificate against crl at a time before it expired. openssl
// cms has no -CRLfile: CRLs are read from the -CAfile bundle.
func opensslWithCRL(t *testing.T, id *Identity, pdf, crl []byte, at time.Time) {
	t.Helper()
	cms, content := extractCMS(t, pdf, 0)
	dir := t.TempDir()
	files := map[string][]byte{"sig.der": derElement(t, cms), "content.bin": content,
		"ca.pem": append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: id.Root().Raw}),
			pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: crl})...)}
	for name, data := range files {
		os.WriteFile(filepath.Join(dir, name), data, 0o600)
	}
	out, err := run(t, "openssl", "cms", "-verify", "-binary", "-inform", "DER", "-in", filepath.Join(dir, "sig.der"),
		"-content", filepath.Join(dir, "content.bin"), "-CAfile", filepath.Join(dir, "ca.pem"),
		"-crl_check", "-attime", big.NewInt(at.Unix()).String(),
		"-purpose", "any", "-out", os.DevNull)
	if err != nil || !strings.Contains(out, "Verification successful") {
		t.Fatalf("openssl cms -verify -crl_check: %v\n%s", err, out)
	}
}

func TestRevokedInDSSFails(t *testing.T) {
	tsa := pdftest.NewTSA(t)
	id := shortLivedIdentity(t, time.Hour)
	bt, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{Timestamper: &TSAClient{URL: tsa.URL}, Level: LevelT})
	if err != nil {
		t.Fatal(err)
	}
	crl, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{Number: big.NewInt(1), ThisUpdate: time.Now(),
		NextUpdate: time.Now().Add(time.Hour), RevokedCertificateEntries: []x509.RevocationListEntry{
			{SerialNumber: id.Certificate.SerialNumber, RevocationTime: time.Now().Add(-2 * time.Hour)}}}, id.ca.cert, id.ca.key)
	if err != nil {
		t.Fatal(err)
	}
	contents, _ := extractCMS(t, bt, 0)
	out, err := appendDSS(bt, pdf.Limits{}, contents, validation{certs: append([]*x509.Certificate{id.Certificate}, id.Chain...), crls: [][]byte{crl}})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{time.Now(), time.Now().Add(3 * time.Hour)} {
		res, err := VerifyWith(out, VerifyOptions{Roots: id.Roots(), TSARoots: tsa.Roots(), Now: at}, pdf.Limits{})
		if err != nil || res.Valid || !strings.Contains(res.Reason, "revoked") {
			t.Fatalf("revoked certificate accepted at %v: %v %+v", at, err, res)
		}
	}
}

func TestChangeAfterDSSIsDetected(t *testing.T) {
	tsa := pdftest.NewTSA(t)
	id := testIdentity(t)
	out, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{Timestamper: &TSAClient{URL: tsa.URL}, Level: LevelLT})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := appendPages(context.Background(), out, []pdf.Page{{MediaBox: [4]float64{0, 0, 200, 200}, Content: []byte("0 0 m 10 10 l S")}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := VerifyWith(changed, VerifyOptions{Roots: id.Roots(), TSARoots: tsa.Roots()}, pdf.Limits{})
	if err != nil || res.Valid || res.Signers[0].CoversWholeDocument {
		t.Fatalf("a page added after the DSS went unnoticed: %v %+v", err, res)
	}
}

func TestArchiveTimestamp(t *testing.T) {
	requireValidators(t)
	tsa := pdftest.NewTSA(t)
	id := testIdentity(t)
	out, _, err := signBytes(context.Background(), pdftest.Generated(2, true, 0), id, Options{Timestamper: &TSAClient{URL: tsa.URL}, Level: LevelLTA})
	if err != nil {
		t.Fatal(err)
	}
	res, err := VerifyWith(out, VerifyOptions{Roots: id.Roots(), TSARoots: tsa.Roots()}, pdf.Limits{})
	if err != nil || !res.Valid || len(res.Signers) != 2 {
		t.Fatalf("verify: %v %+v", err, res)
	}
	dts := res.Signers[1]
	if dts.SubFilter != "ETSI.RFC3161" || !dts.TimestampTrusted || !dts.CoversWholeDocument || dts.TimestampTime == nil {
		t.Fatalf("document time-stamp: %+v", dts)
	}
	if _, _, vri := dssOf(t, out); len(vri) != 1 {
		t.Fatalf("VRI: %v", vri)
	}
	qpdfCheck(t, out)
	report := pdfsig(t, nssDB(t, id), out)
	// pdfsig checks the signature; poppler cannot validate document
	// time-stamps ("Unimplemented Feature") and says so.
	if !strings.Contains(report, "Signature is Valid.") || strings.Contains(report, "Invalid") {
		t.Fatalf("pdfsig:\n%s", report)
	}
	t.Logf("pdfsig:\n%s", report)
	// Tampering with the DSS breaks the document time-stamp.
	i := bytes.LastIndex(out, []byte("/DSS"))
	tampered := append([]byte(nil), out...)
	copy(tampered[i:], "/DSX")
	if res, _ := VerifyWith(tampered, VerifyOptions{Roots: id.Roots(), TSARoots: tsa.Roots()}, pdf.Limits{}); res.Valid {
		t.Fatal("tampered DSS accepted")
	}
}

func TestLevelsNeedATimestamper(t *testing.T) {
	for _, l := range []Level{LevelT, LevelLT, LevelLTA} {
		if _, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), testIdentity(t), Options{Level: l}); err == nil {
			t.Errorf("%s without a TSA: no error", l)
		}
	}
	for _, s := range []string{"B-B", "b-t", "B-LT", "B-LTA"} {
		if _, err := ParseLevel(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseLevel("B-X"); err == nil {
		t.Error("B-X parsed")
	}
}

func TestGeneratedIdentityIssuesCRLs(t *testing.T) {
	dir := t.TempDir()
	id, err := LoadIdentity(KeySource{DataDir: dir, PublicURL: "https://docs.example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	want := "https://docs.example.com/v1/ca/" + id.CAID()
	if c := id.Certificate; len(c.CRLDistributionPoints) != 1 || c.CRLDistributionPoints[0] != want+"/crl" ||
		len(c.IssuingCertificateURL) != 1 || c.IssuingCertificateURL[0] != want+"/certificate" {
		t.Fatalf("CDP %v, AIA %v; want under %s", c.CRLDistributionPoints, c.IssuingCertificateURL, want)
	}
	reloaded, err := LoadIdentity(KeySource{DataDir: dir})
	if err != nil || reloaded.CAID() != id.CAID() {
		t.Fatalf("reloaded: %v", err)
	}
	first, _ := reloaded.CRL(time.Now())
	second, err := reloaded.CRL(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := x509.ParseRevocationList(first)
	b, err := x509.ParseRevocationList(second)
	if err != nil || b.CheckSignatureFrom(id.Chain[0]) != nil || b.Number.Cmp(a.Number) <= 0 || len(b.RevokedCertificateEntries) != 0 {
		t.Fatalf("CRL: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, identityDir, caKeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("CA key file: %v %v", err, st)
	}
	if _, err := rsaIdentity(t).CRL(time.Now()); !errors.Is(err, ErrNoCRL) {
		t.Fatalf("operator identity: %v", err)
	}
}
