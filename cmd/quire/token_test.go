package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign/softhsmtest"
)

// TestCommandsOpenOnlyWhatTheyUse: with the signing key in a PKCS#11
// token (SoftHSM2), the commands that work on records (keys, license,
// usage, jobs) and verify run once the token is gone: they do not open
// it. quire verify still trusts the instance's signature, by the root
// recorded in the database; quire sign, which needs the key, fails.
func TestCommandsOpenOnlyWhatTheyUse(t *testing.T) { // not parallel: the token's SOFTHSM2_CONF is set in the environment
	tok := softhsmtest.New(t, "quire") // SOFTHSM2_CONF, in the environment the commands get
	env := []string{"QUIRE_SIGNING_PKCS11_MODULE=" + tok.Module, "QUIRE_SIGNING_PKCS11_TOKEN=" + tok.Label, "QUIRE_SIGNING_PKCS11_PIN=" + tok.PIN}
	data := filepath.Join(t.TempDir(), "data")
	if out, err := runCLI(t, data, env, "init"); err != nil {
		t.Fatalf("init (%v):\n%s", err, out)
	}
	dir := t.TempDir()
	in, signed := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "signed.pdf")
	if err := os.WriteFile(in, pdftest.OnePage("token"), 0o600); err != nil {
		t.Fatal(err)
	}
	sign := []string{"sign", in, "-o", signed, "--name", "Ann", "--email", "ann@example.com"}
	if out, err := runCLI(t, data, env, sign...); err != nil {
		t.Fatalf("sign with the token (%v):\n%s", err, out)
	}
	if out, err := runCLI(t, data, env, "keys", "create", "--email", "ops@example.com"); err != nil {
		t.Fatalf("keys create (%v):\n%s", err, out)
	}

	// The token is pulled out: its files are gone.
	if err := os.RemoveAll(tok.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tok.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "list"}, "ops@example.com"},
		{[]string{"license", "list"}, ""},
		{[]string{"usage"}, ""},
		{[]string{"jobs", "list"}, ""},
		{[]string{"verify", signed}, `"valid": true`},
	} {
		out, err := runCLI(t, data, env, c.args...)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%v without the token (%v), want %q:\n%s", c.args, err, c.want, out)
		}
	}
	os.Remove(signed)
	if out, err := runCLI(t, data, env, sign...); err == nil {
		t.Errorf("sign without the token succeeded: the token was not removed, and the test shows nothing:\n%s", out)
	}
}
