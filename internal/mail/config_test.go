package mail

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	gomail "github.com/wneessen/go-mail"
)

func TestParseSMTPURL(t *testing.T) {
	tests := []struct {
		raw  string
		want smtpTarget
	}{
		{"smtp://relay.example.com", smtpTarget{host: "relay.example.com", port: 587, starttls: gomail.TLSMandatory}},
		{"smtp://relay.example.com:2525/", smtpTarget{host: "relay.example.com", port: 2525, starttls: gomail.TLSMandatory}},
		{"smtps://relay.example.com", smtpTarget{host: "relay.example.com", port: 465, implicitTLS: true}},
		{"smtp://u:p@[::1]:25?starttls=none", smtpTarget{host: "::1", port: 25, starttls: gomail.NoTLS, user: "u", pass: "p"}},
		{"smtp://relay?starttls=opportunistic", smtpTarget{host: "relay", port: 587, starttls: gomail.TLSOpportunistic}},
		{"smtp://ops%40example.com:p%3Ass%2F%25@relay", smtpTarget{host: "relay", port: 587, starttls: gomail.TLSMandatory, user: "ops@example.com", pass: "p:ss/%"}},
		{"smtp://apikey@relay", smtpTarget{host: "relay", port: 587, starttls: gomail.TLSMandatory, user: "apikey"}},
	}
	for _, tt := range tests {
		got, err := parseSMTPURL(tt.raw)
		if err != nil {
			t.Errorf("parseSMTPURL(%q): %v", tt.raw, err)
			continue
		}
		got.redacted = ""
		if got != tt.want {
			t.Errorf("parseSMTPURL(%q) = %+v, want %+v", tt.raw, got, tt.want)
		}
	}
}

func TestSMTPTargetNamesRelayWithoutCredentials(t *testing.T) {
	target, err := parseSMTPURL("smtp://user:hunter2@[::1]:2525")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := target.String(), "smtp://[::1]:2525"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if strings.Contains(target.redacted, "hunter2") || !strings.Contains(target.redacted, "user") {
		t.Errorf("redacted = %q, want the user but not the password", target.redacted)
	}
}

func TestNewRejectsBadURLs(t *testing.T) {
	const secret = "hunter2"
	tests := []struct {
		raw, wantErr string
	}{
		{"http://relay.example.com", `scheme "http" is not supported`},
		{"relay.example.com:587", `scheme "relay.example.com" is not supported`},
		{"smtp://", "has no host"},
		{"smtp:relay.example.com", "has no host"},
		{"smtp://relay.example.com:0", `port "0"`},
		{"smtp://relay.example.com:70000", `port "70000"`},
		{"smtp://relay.example.com:abc", "invalid port"},
		{"smtp://relay.example.com/inbox", "must not have a path"},
		{"smtp://relay.example.com?tls=yes", `unknown parameter "tls"`},
		{"smtp://relay.example.com?starttls=maybe", `starttls="maybe" is not one of`},
		{"smtp://relay.example.com?starttls=none&starttls=mandatory", "given 2 times"},
		{"smtps://relay.example.com?starttls=none", "applies only to smtp://"},
		{"smtp://:" + secret + "@relay.example.com", "password but no user"},
		// Passwords that break the URL: the error must not quote them.
		{"smtp://user:" + secret + "@relay.example.com:bad", "detail withheld"},
		{"smtp://user:" + secret + "%zz@relay.example.com", "detail withheld"},
		{"smtp://user:hun/ter2@relay.example.com", "detail withheld"},
		// Here "user:2025" parses as host and port, and the rest of the
		// password moves to the path, query or fragment.
		{"smtp://user:2025/ter2@relay.example.com", "'@' after the host"},
		{"smtp://user:2025?ter2@relay.example.com", "'@' after the host"},
		{"smtp://user:2025#ter2@relay.example.com", "'@' after the host"},
	}
	for _, tt := range tests {
		_, err := New(Options{URL: tt.raw, OutboxDir: t.TempDir()})
		if err == nil {
			t.Errorf("New(%q) succeeded", tt.raw)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "QUIRE_SMTP_URL") || !strings.Contains(msg, tt.wantErr) {
			t.Errorf("New(%q) error = %q, want QUIRE_SMTP_URL and %q", tt.raw, msg, tt.wantErr)
		}
		for _, piece := range []string{secret, "hun", "ter2", "2025"} {
			if strings.Contains(msg, piece) {
				t.Errorf("New(%q) error %q leaks %q", tt.raw, msg, piece)
			}
		}
	}
}

func TestNewRejectsBadFrom(t *testing.T) {
	_, err := New(Options{From: "quire at localhost", OutboxDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "QUIRE_MAIL_FROM") {
		t.Errorf("New error = %v, want one naming QUIRE_MAIL_FROM", err)
	}
}

func TestNewRejectsBadCAFile(t *testing.T) {
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{notPEM, filepath.Join(t.TempDir(), "missing.pem")} {
		_, err := New(Options{URL: "smtp://relay.example.com", CAFile: file})
		if err == nil || !strings.Contains(err.Error(), "QUIRE_SMTP_CA_FILE") {
			t.Errorf("New with CAFile %s: error = %v, want one naming QUIRE_SMTP_CA_FILE", file, err)
		}
	}
}
