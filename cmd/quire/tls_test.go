package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeTLS: with QUIRE_TLS_CERT and QUIRE_TLS_KEY quire answers HTTPS
// with that certificate, and one without the other stops it at start.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certPEM, keyPEM := selfSigned(t)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, certPEM, 0o600)
	os.WriteFile(keyFile, keyPEM, 0o600)

	in := start(t, filepath.Join(dir, "data"), "QUIRE_TLS_CERT="+certFile, "QUIRE_TLS_KEY="+keyFile)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "localhost"}}}
	base := strings.Replace(in.base, "http://", "https://", 1)
	res, err := c.Get(base + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.TLS == nil {
		t.Errorf("GET over HTTPS: %d, TLS %v", res.StatusCode, res.TLS != nil)
	}
	if res, err := http.Get(in.base + "/v1/health"); err == nil && res.StatusCode == 200 {
		t.Error("plain HTTP is served too")
	}

	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(), "QUIRE_DATA_DIR="+filepath.Join(dir, "data2"), "QUIRE_ADDR=127.0.0.1:0", "QUIRE_TLS_CERT="+certFile)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "QUIRE_TLS_KEY") {
		t.Errorf("a certificate without a key (%v):\n%s", err, out)
	}
}

// selfSigned makes a certificate for localhost and 127.0.0.1, in PEM.
func selfSigned(t *testing.T) (certPEM, keyPEM []byte) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
}
