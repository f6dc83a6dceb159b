package mail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	netmail "net/mail"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/mail/mailtest"
)

const waitTimeout = 5 * time.Second

// newSender builds a sender for o and fails the test if New refuses it.
// Logs go to the returned buffer so tests can check what would be logged.
func newSender(t *testing.T, o Options) (Sender, *bytes.Buffer) {
	t.Helper()
	var logs bytes.Buffer
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if o.Timeout == 0 {
		o.Timeout = waitTimeout
	}
	s, err := New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s, &logs
}

// withQuery returns rawURL with its query replaced.
func withQuery(t *testing.T, rawURL, query string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = query
	return u.String()
}

func TestSMTPStartTLSDeliversUTF8Message(t *testing.T) {
	srv := mailtest.Start(t)
	sender, logs := newSender(t, Options{URL: srv.URL(), CAFile: srv.CAFile(), From: "quire <login@quire.test>"})

	want := Message{
		To:      "ana@example.com",
		Subject: "Votre code de connexion – quire",
		Text:    "Bonjour Zoë,\n\nvotre code est 482913.\nIl expire dans 15 minutes.\n",
	}
	if err := sender.Send(context.Background(), want); err != nil {
		t.Fatalf("Send: %v", err)
	}

	got := srv.WaitFor(t, want.To, waitTimeout)
	if !got.TLS {
		t.Error("message arrived over a clear connection; want STARTTLS")
	}
	if got.From != "login@quire.test" {
		t.Errorf("envelope from = %q, want login@quire.test", got.From)
	}
	if got.Subject != want.Subject {
		t.Errorf("subject = %q, want %q", got.Subject, want.Subject)
	}
	if got.Text != want.Text {
		t.Errorf("text = %q, want %q", got.Text, want.Text)
	}
	if code := mailtest.Code(got.Text); code != "482913" {
		t.Errorf("code = %q, want 482913", code)
	}
	parsed, err := netmail.ReadMessage(bytes.NewReader(got.Raw))
	if err != nil {
		t.Fatalf("received message does not parse: %v", err)
	}
	if to := parsed.Header.Get("To"); to != "<ana@example.com>" {
		t.Errorf("To header = %q, want <ana@example.com>", to)
	}
	if ct := parsed.Header.Get("Content-Type"); !strings.EqualFold(ct, "text/plain; charset=utf-8") {
		t.Errorf("Content-Type = %q, want text/plain; charset=utf-8", ct)
	}
	if _, err := parsed.Header.Date(); err != nil {
		t.Errorf("Date header: %v", err)
	}
	if id := parsed.Header.Get("Message-ID"); !strings.HasSuffix(id, "@quire.test>") {
		t.Errorf("Message-ID = %q, want one in the From domain", id)
	}
	if strings.Contains(logs.String(), mailtest.DefaultPassword) {
		t.Errorf("log contains the password: %s", logs)
	}
}

func TestSMTPImplicitTLSDelivers(t *testing.T) {
	srv := mailtest.Start(t, mailtest.WithImplicitTLS())
	if !strings.HasPrefix(srv.URL(), "smtps://") {
		t.Fatalf("URL = %s, want smtps://", srv.URL())
	}
	sender, _ := newSender(t, Options{URL: srv.URL(), CAFile: srv.CAFile()})

	if err := sender.Send(context.Background(), Message{To: "bo@example.com", Subject: "code", Text: "123456"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := srv.WaitFor(t, "bo@example.com", waitTimeout); !got.TLS || mailtest.Code(got.Text) != "123456" {
		t.Errorf("got TLS=%v text=%q, want TLS and code 123456", got.TLS, got.Text)
	}
}

func TestSMTPCredentialsArePercentDecoded(t *testing.T) {
	srv := mailtest.Start(t, mailtest.WithAuth("ops@quire.test", "p@ss:w/rd?#%"))
	if strings.Contains(srv.URL(), "p@ss") {
		t.Fatalf("URL %s does not escape the password; the test would prove nothing", srv.URL())
	}
	sender, _ := newSender(t, Options{URL: srv.URL(), CAFile: srv.CAFile()})

	if err := sender.Send(context.Background(), Message{To: "cy@example.com", Subject: "s", Text: "t"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	srv.WaitFor(t, "cy@example.com", waitTimeout)
}

func TestSMTPConcurrentSends(t *testing.T) {
	srv := mailtest.Start(t)
	sender, _ := newSender(t, Options{URL: srv.URL(), CAFile: srv.CAFile()})
	const n = 5
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- sender.Send(context.Background(), Message{To: fmt.Sprintf("user%d@example.com", i), Subject: "s", Text: "t"})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Send: %v", err)
		}
	}
	for i := range n {
		srv.WaitFor(t, fmt.Sprintf("user%d@example.com", i), waitTimeout)
	}
}

func TestSMTPWithoutUserSkipsAuth(t *testing.T) {
	srv := mailtest.Start(t, mailtest.WithoutAuth())
	if strings.Contains(srv.URL(), "@") {
		t.Fatalf("URL %s has credentials", srv.URL())
	}
	sender, _ := newSender(t, Options{URL: srv.URL(), CAFile: srv.CAFile()})

	if err := sender.Send(context.Background(), Message{To: "di@example.com", Subject: "s", Text: "t"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	srv.WaitFor(t, "di@example.com", waitTimeout)
}

func TestSMTPWrongPasswordFailsWithoutLeakingIt(t *testing.T) {
	srv := mailtest.Start(t)
	const wrong = "not-the-password-7f3a"
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(mailtest.DefaultUser, wrong)
	sender, logs := newSender(t, Options{URL: u.String(), CAFile: srv.CAFile()})

	err = sender.Send(context.Background(), Message{To: "ed@example.com", Subject: "s", Text: "t"})
	if err == nil {
		t.Fatal("Send with a wrong password succeeded")
	}
	if want := "mail: send to smtp://" + u.Host + ": "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q does not start with %q", err, want)
	}
	if !strings.Contains(err.Error(), "535") {
		t.Errorf("error %q does not carry the relay's 535 answer", err)
	}
	for _, text := range []string{err.Error(), logs.String()} {
		if strings.Contains(text, wrong) {
			t.Errorf("password leaked in %q", text)
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server accepted %d message(s)", n)
	}
}

func TestSMTPUntrustedCertificateFails(t *testing.T) {
	for name, opts := range map[string][]mailtest.Option{
		"starttls": nil,
		"implicit": {mailtest.WithImplicitTLS()},
	} {
		t.Run(name, func(t *testing.T) {
			srv := mailtest.Start(t, opts...)
			sender, _ := newSender(t, Options{URL: srv.URL()}) // no CAFile: only system roots

			err := sender.Send(context.Background(), Message{To: "fi@example.com", Subject: "s", Text: "t"})
			if err == nil {
				t.Fatal("Send to a server with an untrusted certificate succeeded")
			}
			if !strings.Contains(err.Error(), "certificate") {
				t.Errorf("error %q does not mention the certificate", err)
			}
			if n := len(srv.Messages()); n != 0 {
				t.Errorf("server accepted %d message(s)", n)
			}
		})
	}
}

func TestSMTPStartTLSPolicy(t *testing.T) {
	tests := []struct {
		name    string
		server  []mailtest.Option
		query   string
		wantErr string // "" means delivered
		wantTLS bool
	}{
		{"mandatory refuses a relay without STARTTLS", []mailtest.Option{mailtest.WithoutTLS()}, "", "STARTTLS", false},
		{"explicit mandatory refuses too", []mailtest.Option{mailtest.WithoutTLS()}, "starttls=mandatory", "STARTTLS", false},
		{"opportunistic goes on in clear", []mailtest.Option{mailtest.WithoutTLS()}, "starttls=opportunistic", "", false},
		{"opportunistic upgrades when offered", nil, "starttls=opportunistic", "", true},
		{"none never upgrades", []mailtest.Option{mailtest.WithoutAuth()}, "starttls=none", "", false},
		{"none authenticates on loopback", []mailtest.Option{mailtest.WithoutTLS()}, "starttls=none", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := mailtest.Start(t, tt.server...)
			sender, _ := newSender(t, Options{URL: withQuery(t, srv.URL(), tt.query), CAFile: srv.CAFile()})

			err := sender.Send(context.Background(), Message{To: "gu@example.com", Subject: "s", Text: "t"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Send error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			if got := srv.WaitFor(t, "gu@example.com", waitTimeout); got.TLS != tt.wantTLS {
				t.Errorf("TLS = %v, want %v", got.TLS, tt.wantTLS)
			}
		})
	}
}

// silentServer accepts TCP connections and never says a word, like a relay
// behind a broken firewall. It returns its address.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				<-done
				_ = conn.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		close(done)
		_ = ln.Close()
	})
	return ln.Addr().String()
}

func TestSMTPSilentServerTimesOut(t *testing.T) {
	addr := silentServer(t)
	const timeout = 300 * time.Millisecond
	sender, _ := newSender(t, Options{URL: "smtp://" + addr, Timeout: timeout})

	start := time.Now()
	err := sender.Send(context.Background(), Message{To: "ha@example.com", Subject: "s", Text: "t"})
	elapsed := time.Since(start)
	if err == nil {
		t.Fatal("Send to a silent server succeeded")
	}
	if elapsed > timeout+3*time.Second {
		t.Errorf("Send took %v, want about %v", elapsed, timeout)
	}
	if !strings.Contains(err.Error(), "smtp://"+addr) {
		t.Errorf("error %q does not name the relay", err)
	}
}

func TestSMTPCancelAbortsExchange(t *testing.T) {
	addr := silentServer(t)
	sender, _ := newSender(t, Options{URL: "smtp://" + addr, Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)

	start := time.Now()
	err := sender.Send(ctx, Message{To: "io@example.com", Subject: "s", Text: "t"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Send error = %v, want context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Send took %v after cancellation at 100ms", elapsed)
	}
}

func TestSMTPRejectsInvalidRecipient(t *testing.T) {
	srv := mailtest.Start(t)
	sender, _ := newSender(t, Options{URL: srv.URL(), CAFile: srv.CAFile()})

	for _, to := range []string{"", "not an address", "a@example.com, b@example.com", "a@example.com\r\nBcc: eve@example.com"} {
		if err := sender.Send(context.Background(), Message{To: to, Subject: "s", Text: "t"}); err == nil {
			t.Errorf("Send to %q succeeded", to)
		}
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("server accepted %d message(s)", n)
	}
}
