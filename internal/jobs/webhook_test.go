package jobs

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The signature is Standard Webhooks': the example of its specification
// verifies.
func TestSignMatchesStandardWebhooks(t *testing.T) {
	key, err := LoadSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "")
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	Sign(h, key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if got, want := h.Get("webhook-signature"), "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Errorf("webhook-signature %q, want %q", got, want)
	}
	if h.Get("webhook-id") != "msg_p5jXN8AQM9LWM0D4loKWxJek" || h.Get("webhook-timestamp") != "1614265330" {
		t.Errorf("headers %v", h)
	}
}

// Without QUIRE_WEBHOOK_SECRET, a secret is made once in the data
// directory, readable by its owner only, and read back after.
func TestSecretGeneratedOnce(t *testing.T) {
	dir := t.TempDir()
	a, err := LoadSecret("", dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadSecret("", dir)
	if err != nil || string(a) != string(b) || len(a) != 32 {
		t.Fatalf("second load: %x, %v; first %x", b, err, a)
	}
	fi, err := os.Stat(filepath.Join(dir, "webhook-secret"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("webhook-secret: %v %v", fi, err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "webhook-secret"))
	if !strings.HasPrefix(string(text), "whsec_") {
		t.Errorf("webhook-secret %q", text)
	}
	for _, bad := range []string{"MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_short", "whsec_!!!"} {
		if _, err := LoadSecret(bad, dir); err == nil || !strings.Contains(err.Error(), "QUIRE_WEBHOOK_SECRET") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// The waits between deliveries double from a second to an hour, each
// between half and all of its step.
func TestBackoff(t *testing.T) {
	for attempt, step := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second, 13: time.Hour, 40: time.Hour} {
		for range 50 {
			if d := backoff(attempt); d < step/2 || d > step {
				t.Fatalf("attempt %d: %s, want %s to %s", attempt, d, step/2, step)
			}
		}
	}
}
