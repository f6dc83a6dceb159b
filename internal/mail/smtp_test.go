package mail

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	netmail "net/mail"
	"net/url"
	"os"
	"strings"
	"syscall"
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

// stallingServer accepts TCP connections, says greeting (nothing when it
// is empty), then never answers, like a relay behind a broken firewall or
// one that hangs in the middle of an exchange. It returns its address, a
// channel that receives the client's first command after the greeting
// (proof that the client waits for an answer), and one that receives the
// error of reading from a connection once the client has closed it.
func stallingServer(t *testing.T, greeting string) (addr string, waiting <-chan string, closed <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	commands, ends := make(chan string, 8), make(chan error, 8)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				ends <- stall(conn, greeting, commands)
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String(), commands, ends
}

// stall plays one connection of stallingServer and returns the error that
// ended it: the server never closes a connection, only the client can.
func stall(conn net.Conn, greeting string, commands chan<- string) error {
	defer conn.Close()
	r := bufio.NewReader(conn)
	if greeting != "" {
		if _, err := io.WriteString(conn, greeting+"\r\n"); err != nil {
			return err
		}
		command, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		commands <- command
	}
	_, err := r.ReadByte() // nothing comes before an answer: only the end
	return err
}

// errGuard ends a test whose code under test would otherwise hang.
var errGuard = errors.New("the test's guard ended the call: the code under test did not")

// guarded returns a context cancelled with errGuard after 10 s: less than
// go-mail's own 15 s default, so that only Options.Timeout can end a silent
// exchange before it; it does not time the code under test, whose bounds
// are far shorter.
func guarded(t *testing.T) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	timer := time.AfterFunc(10*time.Second, func() { cancel(errGuard) })
	t.Cleanup(func() {
		timer.Stop()
		cancel(nil)
	})
	return ctx
}

// awaitClose fails t unless the client closed its connection to a
// stalling server, which proves the socket was freed.
func awaitClose(t *testing.T, closed <-chan error) {
	t.Helper()
	select {
	case err := <-closed:
		if err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("reading the connection after Send: %v, want the end the client's close gives", err)
		}
	case <-time.After(waitTimeout):
		t.Error("Send returned and left its connection open")
	}
}

// The error is the proof, not a stopwatch: only a deadline, and Send sets no
// other than Options.Timeout, gives a deadline error (go-mail's read
// deadline and Send's context have the same length, and either may report
// it first). Without them the call would end at the guard, with its error.
func TestSMTPSilentServerTimesOut(t *testing.T) {
	addr, _, closed := stallingServer(t, "")
	sender, _ := newSender(t, Options{URL: "smtp://" + addr, Timeout: 300 * time.Millisecond})

	err := sender.Send(guarded(t), Message{To: "ha@example.com", Subject: "s", Text: "t"})
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("Send to a silent server: %v, want a deadline error", err)
	}
	if !strings.Contains(err.Error(), "smtp://"+addr) {
		t.Errorf("error %q does not name the relay", err)
	}
	awaitClose(t, closed)
}

// A cancel in the middle of the exchange (the client waits for the answer
// to its EHLO) ends it by closing the socket: had the exchange gone on
// until a deadline, the error would wrap the deadline's.
func TestSMTPCancelAbortsExchange(t *testing.T) {
	addr, waiting, closed := stallingServer(t, "220 relay.test ESMTP")
	sender, _ := newSender(t, Options{URL: "smtp://" + addr, Timeout: 10 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-waiting
		cancel()
	}()

	err := sender.Send(ctx, Message{To: "io@example.com", Subject: "s", Text: "t"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Send error = %v, want context.Canceled", err)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send error = %v: the exchange ran on to a deadline after the cancel", err)
	}
	awaitClose(t, closed)
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
