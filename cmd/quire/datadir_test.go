package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/config"
)

// TestCommandsRefuseAMissingDataDir: every command but serve and init
// refuses a data directory they have not set up, names it (absolute) and
// says how to fix it, and creates nothing.
func TestCommandsRefuseAMissingDataDir(t *testing.T) {
	t.Parallel()
	pdf := filepath.Join(t.TempDir(), "in.pdf")
	os.WriteFile(pdf, []byte("%PDF-1.4\n"), 0o600)
	commands := [][]string{
		{"keys", "list"}, {"keys", "create", "--email", "ops@example.com"}, {"license", "list"},
		{"usage"}, {"sign", pdf, "-o", pdf + ".out", "--name", "Ann", "--email", "ann@example.com"}, {"verify", pdf},
	}
	for _, empty := range []bool{false, true} {
		cwd := t.TempDir()
		if empty {
			os.Mkdir(filepath.Join(cwd, "data"), 0o700)
		}
		for _, args := range commands {
			cmd := exec.Command(binary, args...)
			cmd.Dir = cwd // the default QUIRE_DATA_DIR is ./data
			cmd.Env = withoutEnv(os.Environ(), "QUIRE_DATA_DIR")
			out, err := cmd.CombinedOutput()
			want := filepath.Join(cwd, "data")
			if err == nil || !strings.Contains(string(out), want) || !strings.Contains(string(out), "quire init") {
				t.Errorf("%v with empty=%v (%v): want a refusal naming %s and quire init:\n%s", args, empty, err, want, out)
			}
		}
		entries, _ := os.ReadDir(cwd)
		if names := dirNames(entries); empty && names != "data" || !empty && names != "" {
			t.Errorf("the commands left %q in the working directory", names)
		}
		if inner, _ := os.ReadDir(filepath.Join(cwd, "data")); len(inner) > 0 {
			t.Errorf("the commands created %q in the data directory", dirNames(inner))
		}
	}
}

// TestInitSetsUpTheDataDirForCommands: quire init creates what serve would,
// and the commands then run against it.
func TestInitSetsUpTheDataDirForCommands(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	if out, err := runCLI(t, data, nil, "init"); err != nil || !strings.Contains(out, data) {
		t.Fatalf("init (%v):\n%s", err, out)
	}
	for _, name := range []string{"quire.db", "secret", "signing"} {
		if _, err := os.Stat(filepath.Join(data, name)); err != nil {
			t.Errorf("init did not create %s: %v", name, err)
		}
	}
	if out, err := runCLI(t, data, nil, "keys", "create", "--email", "ops@example.com"); err != nil || !strings.Contains(out, "sd_") {
		t.Errorf("keys create after init (%v):\n%s", err, out)
	}
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func dirNames(entries []os.DirEntry) string {
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

// A data directory whose signing key is in a token has no signing/: the
// commands must not refuse it for that.
func TestDataDirWithTokenNeedsNoSigningDir(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.PKCS11Module = "/usr/lib/softhsm/libsofthsm2.so"
	if parts := dataDirParts(&cfg); slices.Contains(parts, "signing") {
		t.Errorf("parts %q", parts)
	}
}
