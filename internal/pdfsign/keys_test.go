package pdfsign

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestConcurrentLoadIdentityAgrees(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data") // not even created yet
	const n = 8
	ids := make([]*Identity, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ids[i], errs[i] = LoadIdentity(KeySource{DataDir: dir})
		}()
	}
	close(start)
	wg.Wait()
	stored, err := LoadIdentity(KeySource{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte("quire"))
	for i, id := range ids {
		if errs[i] != nil {
			t.Fatalf("instance %d: %v", i, errs[i])
		}
		if !bytes.Equal(id.Certificate.Raw, stored.Certificate.Raw) || len(id.Chain) != 1 ||
			!bytes.Equal(id.Chain[0].Raw, stored.Chain[0].Raw) {
			t.Fatalf("instance %d got another identity than the one stored", i)
		}
		sig, err := id.Key.Sign(rand.Reader, digest[:], crypto.SHA256)
		if err != nil {
			t.Fatal(err)
		}
		if !ecdsa.VerifyASN1(stored.Certificate.PublicKey.(*ecdsa.PublicKey), digest[:], sig) {
			t.Fatalf("instance %d: its key does not match the stored certificate", i)
		}
	}
	if err := stored.Certificate.CheckSignatureFrom(stored.Chain[0]); err != nil {
		t.Fatalf("the signing certificate is not issued by the stored CA: %v", err)
	}
	// The CA key is kept (for CRLs), and no temporary directory is left behind.
	names, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != identityDir {
		t.Errorf("data directory holds %v, want only %s", entries, identityDir)
	}
	want := map[string]bool{caCertFile: true, caKeyFile: true, sigCertFile: true, sigKeyFile: true}
	for _, p := range names {
		if !want[filepath.Base(p)] {
			t.Errorf("unexpected file %s", p)
		}
	}
	if len(names) != len(want) {
		t.Errorf("stored files %v", names)
	}
}

func TestLoadIdentityDoesNotReplaceOnStatError(t *testing.T) {
	dir := t.TempDir()
	// "signing" is a file: looking for signing/signing.pem fails, but not
	// with "does not exist", so nothing may be generated over it.
	path := filepath.Join(dir, identityDir)
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIdentity(KeySource{DataDir: dir}); err == nil {
		t.Fatal("an identity was produced although the stored one could not be checked")
	}
	if data, _ := os.ReadFile(path); string(data) != "keep me" {
		t.Fatal("the existing file was replaced")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data directory holds %v", entries)
	}
}

func TestGenerateLosingTheRaceLoadsTheWinner(t *testing.T) {
	dir := t.TempDir()
	first, err := generate(dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	// A second instance that also found no identity generates its own,
	// fails to rename it into place, and must use the stored one.
	second, err := generate(dir, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first.Certificate.Raw, second.Certificate.Raw) || !first.Key.Public().(*ecdsa.PublicKey).Equal(second.Key.Public()) {
		t.Fatal("the second instance kept an identity of its own")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("data directory holds %v", entries)
	}
}

// TestGeneratedIdentityNamesTheOperator: QUIRE_SIGNING_ORG is the
// organisation of both generated certificates and starts their common
// names; without it, quire. The common name ends with a random
// installation id, never the host name.
func TestGeneratedIdentityNamesTheOperator(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Fatalf("the test needs the host name: %q, %v", host, err)
	}
	subjectID := regexp.MustCompile(` (signing CA|document signing) [0-9a-f]{16}$`)
	for org, want := range map[string]string{"Acme Légal GmbH": "Acme Légal GmbH", "": "quire"} {
		id, err := LoadIdentity(KeySource{DataDir: t.TempDir(), Organization: org})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range append([]*x509.Certificate{id.Certificate}, id.Chain...) {
			if got := c.Subject.Organization; len(got) != 1 || got[0] != want {
				t.Errorf("Organization %q: certificate %s names %v", org, c.Subject.CommonName, got)
			}
			cn := c.Subject.CommonName
			if !strings.HasPrefix(cn, want+" ") || !subjectID.MatchString(cn) || strings.Contains(c.Subject.String(), host) {
				t.Errorf("Organization %q: subject %q, want %q, a role and a random id, not the host %q", org, c.Subject, want, host)
			}
		}
	}
}
