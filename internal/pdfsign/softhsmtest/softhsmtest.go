// Package softhsmtest makes SoftHSM2 tokens for tests: a real PKCS#11
// token in a temporary directory.
package softhsmtest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/miekg/pkcs11"
)

// Module is where Debian's softhsm2 installs its PKCS#11 module.
const Module = "/usr/lib/softhsm/libsofthsm2.so"

// Token is an initialised token with a user PIN.
type Token struct {
	Module, Label, PIN string
	Dir                string // where SoftHSM2 keeps the token's files
}

// New initialises a token labelled label in a temporary directory and
// points SOFTHSM2_CONF at it for the rest of the test. SoftHSM2 reads
// that variable when the module is initialised, so the test must close
// every session to an earlier test's token first (pdfsign.Identity.Close).
func New(t testing.TB, label string) Token {
	t.Helper()
	if _, err := os.Stat(Module); err != nil {
		t.Fatalf("no SoftHSM2 module (apt-get install softhsm2): %v", err)
	}
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	conf := filepath.Join(dir, "softhsm2.conf")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("directories.tokendir = "+tokens+"\nobjectstore.backend = file\nlog.level = ERROR\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOFTHSM2_CONF", conf)
	tok := Token{Module: Module, Label: label, PIN: "1234", Dir: tokens}
	out, err := exec.Command("softhsm2-util", "--init-token", "--free", "--label", label, "--pin", tok.PIN, "--so-pin", "5678").CombinedOutput()
	if err != nil {
		t.Fatalf("softhsm2-util --init-token (apt-get install softhsm2): %v\n%s", err, out)
	}
	return tok
}

// CloseAllSessions closes, through the PKCS#11 module itself, every
// session this process has with the tokens of tok's module: as when the
// token is pulled out, the sessions and the login quire holds are gone.
func CloseAllSessions(t testing.TB, tok Token) {
	t.Helper()
	p := pkcs11.New(tok.Module)
	if p == nil {
		t.Fatal("cannot load the PKCS#11 module")
	}
	defer p.Destroy()
	if err := p.Initialize(); err != nil && !errors.Is(err, pkcs11.Error(pkcs11.CKR_CRYPTOKI_ALREADY_INITIALIZED)) {
		t.Fatal(err)
	}
	slots, err := p.GetSlotList(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots {
		if err := p.CloseAllSessions(s); err != nil {
			t.Fatal(err)
		}
	}
}
