package auth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func TestKeyFormat(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		k := newKey("sd")
		if len(k) != 52 || !strings.HasPrefix(k, "sd_") || !wellFormed(k) || seen[k] {
			t.Fatalf("key %q (len %d) is not a fresh well-formed key", k, len(k))
		}
		seen[k] = true
		if p := shownPrefix(k); p != k[:11] {
			t.Errorf("shown prefix %q, want %q", p, k[:11])
		}
	}
	k := newKey("sd")
	for _, bad := range []string{
		"", "sd_", k[:51], k + "x", "SD" + k[2:], "sd-" + k[3:], "_" + k[3:],
		k[:10] + "!" + k[11:],                // not base64url
		k[:len(k)-1] + string(k[len(k)-1]^1), // checksum
		k[:5] + string(k[5]^1) + k[6:],       // body changed, checksum not
	} {
		if wellFormed(bad) {
			t.Errorf("%q is taken as well formed", bad)
		}
	}
	if other := newKey("acme2"); !wellFormed(other) || !strings.HasPrefix(other, "acme2_") {
		t.Errorf("a key under another prefix %q", other)
	}
}

func TestNormalizeEmail(t *testing.T) {
	for in, want := range map[string]string{"Ann@Example.COM": "ann@example.com", " bob@example.org ": "bob@example.org",
		"first.last+tag@sub.example.co.uk": "first.last+tag@sub.example.co.uk"} {
		if got, err := NormalizeEmail(in); err != nil || got != want {
			t.Errorf("NormalizeEmail(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "plain", "@example.com", "ann@", "ann@localhost", "Ann <ann@example.com>",
		"ann@example..com", "ann@example.com.", "ann@[127.0.0.1]", strings.Repeat("a", 65) + "@example.com",
		"a@" + strings.Repeat("b", 250) + ".com", "ann@exa mple.com", "ann@example.com\r\nBcc: x@example.com"} {
		if _, err := NormalizeEmail(bad); err == nil {
			t.Errorf("NormalizeEmail(%q) accepted", bad)
		}
	}
}

func TestLoadSecret(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var wg sync.WaitGroup
	secrets := make([][]byte, 8)
	for i := range secrets { // several processes starting at once agree on one secret
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := LoadSecret("", dir)
			if err != nil {
				t.Error(err)
			}
			secrets[i] = s
		}()
	}
	wg.Wait()
	for _, s := range secrets[1:] {
		if string(s) != string(secrets[0]) || len(s) != 32 {
			t.Fatal("instances got different secrets")
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "secret"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("secret file mode %v, %v", fi.Mode(), err)
	}
	if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode %v", di.Mode())
	}
	if s, _ := LoadSecret("", dir); string(s) != string(secrets[0]) {
		t.Error("the secret changed on restart")
	}
	given := strings.Repeat("ab", 32)
	if s, err := LoadSecret(given, t.TempDir()); err != nil || len(s) != 32 || s[0] != 0xab {
		t.Errorf("QUIRE_SECRET: %x, %v", s, err)
	}
	for _, bad := range []string{"zz", strings.Repeat("ab", 8)} {
		if _, err := LoadSecret(bad, t.TempDir()); err == nil || !strings.Contains(err.Error(), "QUIRE_SECRET") {
			t.Errorf("LoadSecret(%q) = %v", bad, err)
		}
	}
}

func TestCheckSecret(t *testing.T) {
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		a, b := []byte(strings.Repeat("a", 32)), []byte(strings.Repeat("b", 32))
		if err := CheckSecret(ctx, db, a); err != nil {
			t.Fatal(err)
		}
		if err := CheckSecret(ctx, db, a); err != nil {
			t.Fatalf("the same secret again: %v", err)
		}
		if err := CheckSecret(ctx, db, b); err == nil {
			t.Fatal("another secret was accepted")
		}
	})
}
