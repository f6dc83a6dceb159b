package pdfsign

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThalesGroup/crypto11"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign/softhsmtest"
)

// tokenSource is a key labelled key in tok, with dataDir as data directory.
func tokenSource(tok softhsmtest.Token, key, dataDir string) KeySource {
	return KeySource{DataDir: dataDir, Token: &Token{Module: tok.Module, Label: tok.Label, PIN: tok.PIN, Key: key}}
}

func loadTokenIdentity(t *testing.T, src KeySource) *Identity {
	t.Helper()
	id, err := LoadIdentity(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { id.Close() })
	return id
}

func TestTokenIdentitySigns(t *testing.T) {
	requireValidators(t)
	tok := softhsmtest.New(t, "quire-test")
	dataDir := t.TempDir()
	id := loadTokenIdentity(t, tokenSource(tok, "signing", dataDir))
	if _, ok := id.Key.(*tokenKey); !ok {
		t.Fatalf("the key is a %T, not the token's", id.Key)
	}
	if !publicKeysEqual(id.Key.Public(), id.Certificate.PublicKey) {
		t.Fatal("the token's public key is not the certificate's")
	}
	out, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{Name: "Jane Doe", Reason: "Approved"})
	if err != nil {
		t.Fatal(err)
	}
	report := pdfsig(t, nssDB(t, id), out)
	for _, want := range []string{"Signature is Valid.", "Certificate is Trusted."} {
		if !strings.Contains(report, want) {
			t.Fatalf("pdfsig lacks %q:\n%s", want, report)
		}
	}
	opensslVerify(t, id, out)
	if res, err := Verify(out, id.Roots(), pdf.Limits{}); err != nil || !res.Valid {
		t.Fatalf("verify: %v %+v", err, res)
	}
	// Nothing of the identity is written to the data directory.
	filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if path != dataDir {
			t.Errorf("%s written to the data directory", path)
		}
		return err
	})
	// The CA's key is in the token too, and issues the CRLs.
	if _, ok := id.ca.key.(*tokenKey); !ok || id.CAID() == "" {
		t.Fatalf("CA key %T, CA id %q", id.ca.key, id.CAID())
	}
	if _, err := id.CRL(time.Now()); err != nil {
		t.Fatalf("CRL: %v", err)
	}
	// Another instance on the token signs with the same key and certificate.
	again := loadTokenIdentity(t, tokenSource(tok, "signing", t.TempDir()))
	if again.Info() != id.Info() {
		t.Errorf("second load: %+v, first %+v", again.Info(), id.Info())
	}
}

func TestTokenInstancesStartingTogetherAgree(t *testing.T) {
	tok := softhsmtest.New(t, "quire-race")
	ids := make([]*Identity, 4)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() { ids[i] = loadTokenIdentity(t, tokenSource(tok, "signing", t.TempDir())) })
	}
	wg.Wait()
	for i, id := range ids[1:] {
		if id.Info() != ids[0].Info() {
			t.Errorf("instance %d: %s, instance 0: %s", i+1, id.Info().Fingerprint, ids[0].Info().Fingerprint)
		}
	}
}

func TestTokenCertificateFromFile(t *testing.T) {
	tok := softhsmtest.New(t, "quire-cert")
	other := testIdentity(t) // its certificate is not for the token's key
	path := writeTemp(t, "cert.pem", []byte(other.Info().PEM+other.Info().ChainPEM))
	src := tokenSource(tok, "signing", t.TempDir())
	src.CertFile = path
	if id, err := LoadIdentity(src); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Fatalf("a certificate of another key accepted: %v", err)
		id.Close()
	}
	// The token's own certificate, handed over as a file, is used with its chain.
	id := loadTokenIdentity(t, tokenSource(tok, "signing", t.TempDir()))
	src.CertFile = writeTemp(t, "own.pem", []byte(id.Info().PEM+id.Info().ChainPEM))
	fromFile := loadTokenIdentity(t, src)
	if fromFile.Info().Fingerprint != id.Info().Fingerprint || len(fromFile.Chain) != 1 || fromFile.CAID() != "" {
		t.Errorf("from file: %+v", fromFile.Info())
	}
}

func TestTokenFailureIsUnavailable(t *testing.T) {
	tok := softhsmtest.New(t, "quire-fault")
	id := loadTokenIdentity(t, tokenSource(tok, "signing", t.TempDir()))
	doc := pdftest.Generated(1, false, 0)
	if _, _, err := signBytes(context.Background(), doc, id, Options{}); err != nil {
		t.Fatal(err)
	}
	softhsmtest.CloseAllSessions(t, tok)
	_, _, err := signBytes(context.Background(), doc, id, Options{})
	if !errors.Is(err, ErrKeyUnavailable) {
		t.Fatalf("with the sessions closed: %v, want ErrKeyUnavailable", err)
	}
	// The token is there again: the next signature reconnects.
	if _, _, err := signBytes(context.Background(), doc, id, Options{}); err != nil {
		t.Fatalf("after the failure: %v", err)
	}
}

func TestTokenOperatorCertificate(t *testing.T) {
	tok := softhsmtest.New(t, "quire-operator")
	// The operator's key pair and certificate, put in the token with its tools.
	c, err := crypto11.Configure(&crypto11.Config{Path: tok.Module, TokenLabel: tok.Label, Pin: tok.PIN})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := c.GenerateECDSAKeyPairWithLabel([]byte{1, 2, 3}, []byte("operator"), elliptic.P256())
	if err != nil {
		t.Fatal(err)
	}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	now := time.Now()
	ca, err := createCert(caTemplate("Operator", "ca", now), &caKey.PublicKey, nil, caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := createCert(signingTemplate("Operator", "signer", now, "", ca), pair.Public(), ca, caKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ImportCertificateWithLabel([]byte{1, 2, 3}, []byte("operator"), cert); err != nil {
		t.Fatal(err)
	}
	c.Close()

	id := loadTokenIdentity(t, tokenSource(tok, "operator", t.TempDir()))
	if !id.Certificate.Equal(cert) || len(id.Chain) != 0 || id.CAID() != "" {
		t.Fatalf("identity: %s, chain %d, CA %q; want the operator's certificate alone", id.Certificate.Subject, len(id.Chain), id.CAID())
	}
	if _, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{}); err != nil {
		t.Fatal(err)
	}
}
