package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestSignAndVerifyCLI(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if o, err := runCLI(t, data, nil, "init"); err != nil {
		t.Fatalf("init: %v\n%s", err, o)
	}
	in := filepath.Join(data, "in.pdf")
	os.WriteFile(in, pdftest.OnePage("CLI agreement"), 0o644)
	out := filepath.Join(data, "out.pdf")
	if o, err := runCLI(t, data, nil, "sign", in, "-o", out, "--name", "Olga Operator", "--email", "olga@example.com", "--event-id", "cli-evt"); err != nil {
		t.Fatalf("sign: %v\n%s", err, o)
	}
	o, err := runCLI(t, data, nil, "verify", out)
	var res struct {
		Valid   bool
		Signers []struct{ EventID string }
	}
	if err != nil || json.Unmarshal([]byte(o), &res) != nil || !res.Valid || len(res.Signers) != 1 || res.Signers[0].EventID != "cli-evt" {
		t.Fatalf("verify (%v):\n%s", err, o)
	}
	signed, _ := os.ReadFile(out)
	signed[100] ^= 1
	os.WriteFile(out, signed, 0o644)
	if o, err := runCLI(t, data, nil, "verify", out); err == nil || !strings.Contains(o, `"valid": false`) {
		t.Errorf("a tampered file verifies (%v):\n%s", err, o)
	}
	if _, err := runCLI(t, data, nil, "sign", in); err == nil {
		t.Error("sign without -o and signer succeeded")
	}
}

// TestSignCLIAppliesTheAPIRules: quire sign refuses what POST /v1/sign
// refuses, naming every bad field, and writes nothing.
func TestSignCLIAppliesTheAPIRules(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	if o, err := runCLI(t, data, nil, "init"); err != nil {
		t.Fatalf("quire init: %v\n%s", err, o)
	}
	in := filepath.Join(data, "in.pdf")
	os.WriteFile(in, pdftest.OnePage("CLI agreement"), 0o644)
	out := filepath.Join(data, "out.pdf")
	o, err := runCLI(t, data, nil, "sign", in, "-o", out, "--name", strings.Repeat("A", 500), "--email", "not-an-email",
		"--event-id", strings.Repeat("x", 400))
	if err == nil {
		t.Fatalf("signed with a bad name, e-mail and event id:\n%s", o)
	}
	for _, want := range []string{"The sign request is not valid.", "signer.name must be 2 to 255 characters",
		"signer.email is not a valid e-mail address", "eventId must be at most 128 characters"} {
		if !strings.Contains(o, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, o)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused signing wrote its output")
	}
}
