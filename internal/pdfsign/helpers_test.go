package pdfsign

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
)

const corpusDir = "../../../shared/corpus/pdf"

// corpusFiles lists the shared corpus, skipping the test when it is absent.
func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.pdf"))
	if len(files) == 0 {
		t.Skipf("PDF corpus not found at %s (it lives beside the repository in shared/corpus/pdf)", corpusDir)
	}
	return files
}

// run runs a command and returns its combined output and exit error.
func run(t testing.TB, name string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// testIdentity generates (once per directory) a quire identity.
func testIdentity(t testing.TB) *Identity {
	t.Helper()
	id, err := LoadIdentity(KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// rsaIdentity builds an RSA-3072 CA and signer, stored as PEM files and
// loaded through LoadIdentity like an operator's own key would be.
func rsaIdentity(t testing.TB) *Identity {
	t.Helper()
	caKey, _ := rsa.GenerateKey(rand.Reader, 3072)
	key, _ := rsa.GenerateKey(rand.Reader, 3072)
	now := time.Now().Add(-time.Hour)
	caT := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test RSA CA"},
		NotBefore: now, NotAfter: now.AddDate(1, 0, 0), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caT, caT, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	lT := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "test RSA signer"},
		EmailAddresses: []string{"signer@example.com"}, NotBefore: now, NotAfter: now.AddDate(1, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, lT, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certPEM := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})...)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	os.WriteFile(filepath.Join(dir, "c.pem"), certPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "k.pem"), keyPEM, 0o600)
	id, err := LoadIdentity(KeySource{CertFile: filepath.Join(dir, "c.pem"), KeyFile: filepath.Join(dir, "k.pem")})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// signBytes opens b as the signing service does and signs it.
func signBytes(ctx context.Context, b []byte, id *Identity, opt Options) ([]byte, string, error) {
	d, err := pdf.Open(ctx, b, pdf.Limits{})
	if err != nil {
		return nil, "", err
	}
	return Sign(ctx, d, id, opt)
}

// appendPages opens b, appends pages and saves the result.
func appendPages(ctx context.Context, b []byte, pages []pdf.Page) ([]byte, error) {
	d, err := pdf.Open(ctx, b, pdf.Limits{})
	if err != nil {
		return nil, err
	}
	if _, err := d.AppendPages(pages); err != nil {
		return nil, err
	}
	return d.Save()
}
