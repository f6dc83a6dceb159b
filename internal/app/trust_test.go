package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func selfSigned(t *testing.T, name string) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestLoadCertificates reads QUIRE_TRUST_ROOTS's forms: a PEM file of
// several certificates and a directory of them, and refuses a file that
// holds none, naming the setting and the file.
func TestLoadCertificates(t *testing.T) {
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.pem")
	os.WriteFile(bundle, append(selfSigned(t, "a"), selfSigned(t, "b")...), 0o600)
	sub := filepath.Join(dir, "roots")
	os.Mkdir(sub, 0o700)
	os.WriteFile(filepath.Join(sub, "c.pem"), selfSigned(t, "c"), 0o600)
	os.WriteFile(filepath.Join(sub, "d.crt"), selfSigned(t, "d"), 0o600)
	certs, err := loadCertificates("QUIRE_TRUST_ROOTS", bundle+", "+sub+",")
	if err != nil || len(certs) != 4 {
		t.Fatalf("loaded %d certificates, %v; want 4", len(certs), err)
	}
	junk := filepath.Join(dir, "junk.txt")
	os.WriteFile(junk, []byte("not a certificate"), 0o600)
	if _, err := loadCertificates("QUIRE_TRUST_TSA", junk); err == nil || !strings.Contains(err.Error(), "QUIRE_TRUST_TSA") || !strings.Contains(err.Error(), "junk.txt") {
		t.Fatalf("a file without certificates: %v", err)
	}
	if certs, err := loadCertificates("QUIRE_TRUST_ROOTS", ""); err != nil || len(certs) != 0 {
		t.Fatalf("empty: %d, %v", len(certs), err)
	}
}
