package mailtest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

func TestCode(t *testing.T) {
	tests := map[string]string{
		"Your code is 123456.":          "123456",
		"123456":                        "123456",
		"code:\n004213\nvalid 15 min":   "004213",
		"order 1234567, code 654321":    "654321",
		"no code here, only 12345":      "",
		"first 111111 then 222222 wins": "111111",
	}
	for text, want := range tests {
		if got := Code(text); got != want {
			t.Errorf("Code(%q) = %q, want %q", text, got, want)
		}
	}
}

func TestParseMessage(t *testing.T) {
	const head = "From: a@example.com\r\nTo: b@example.com\r\nSubject: =?UTF-8?q?Gr=C3=BC=C3=9Fe?=\r\n"
	tests := []struct {
		name, raw, wantText, wantErr string
	}{
		{"quoted-printable", head + "Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nZo=C3=AB 123456=\r\n!\r\n", "Zoë 123456!\n", ""},
		{"base64", head + "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\nWm/DqyAxMjM0NTYK\r\n", "Zoë 123456\n", ""},
		{"plain 7bit", head + "\r\nline one\r\nline two\r\n", "line one\nline two\n", ""},
		{"html", head + "Content-Type: text/html\r\n\r\n<p>hi</p>\r\n", "", "text/html is not text/plain"},
		{"latin-1", head + "Content-Type: text/plain; charset=iso-8859-1\r\n\r\nhi\r\n", "", "charset iso-8859-1"},
		{"unknown encoding", head + "Content-Transfer-Encoding: x-uuencode\r\n\r\nhi\r\n", "", "x-uuencode"},
		{"invalid utf-8", head + "Content-Transfer-Encoding: base64\r\n\r\n/w==\r\n", "", "not valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMessage([]byte(tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Subject != "Grüße" || got.Text != tt.wantText {
				t.Errorf("got subject %q text %q, want Grüße and %q", got.Subject, got.Text, tt.wantText)
			}
		})
	}
}

// dial connects with go-smtp's own client, upgrading with STARTTLS against
// the server's CA file: a second, independent client for the server.
func dial(t *testing.T, s *Server) *smtp.Client {
	t.Helper()
	pem, err := os.ReadFile(s.CAFile())
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("CA file holds no certificate")
	}
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	c, err := smtp.DialStartTLS(u.Host, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func send(c *smtp.Client, to, body string) error {
	msg := fmt.Sprintf("To: %s\r\nSubject: test\r\n\r\n%s\r\n", to, body)
	return c.SendMail("sender@example.com", []string{to}, strings.NewReader(msg))
}

func TestWaitForClaimsMessagesInOrder(t *testing.T) {
	s := Start(t)
	c := dial(t, s)
	if err := c.Auth(sasl.NewPlainClient("", DefaultUser, DefaultPassword)); err != nil {
		t.Fatalf("auth: %v", err)
	}
	for _, body := range []string{"first 111111", "second 222222"} {
		if err := send(c, "ana@example.com", body); err != nil {
			t.Fatalf("send: %v", err)
		}
	}

	for _, want := range []string{"111111", "222222"} {
		got := s.WaitFor(t, "ANA@example.com", time.Second)
		if Code(got.Text) != want || !got.TLS || got.From != "sender@example.com" {
			t.Errorf("got code %q TLS %v from %q, want %s over TLS from sender@example.com", Code(got.Text), got.TLS, got.From, want)
		}
	}
	if n := len(s.Messages()); n != 2 {
		t.Errorf("Messages() has %d, want 2", n)
	}
}

func TestServerRefusesWhatItShould(t *testing.T) {
	s := Start(t)
	c := dial(t, s)
	if err := send(c, "bo@example.com", "before auth"); err == nil {
		t.Error("server accepted mail before AUTH")
	}
	if err := c.Auth(sasl.NewPlainClient("", DefaultUser, "wrong")); err == nil {
		t.Error("server accepted a wrong password")
	}
	if err := c.Auth(sasl.NewPlainClient("", DefaultUser, DefaultPassword)); err != nil {
		t.Fatalf("auth: %v", err)
	}
	html := "To: bo@example.com\r\nContent-Type: text/html\r\n\r\n<p>hi</p>\r\n"
	if err := c.SendMail("sender@example.com", []string{"bo@example.com"}, strings.NewReader(html)); err == nil {
		t.Error("server accepted a message it cannot decode")
	}
	if n := len(s.Messages()); n != 0 {
		t.Errorf("server stored %d message(s), want none", n)
	}
}

// fatalRecorder records Fatalf and stops the goroutine, as testing.T does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestWaitForFailsWhenNothingArrives(t *testing.T) {
	s := Start(t)
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.WaitFor(rec, "cy@example.com", 50*time.Millisecond)
	}()
	<-done
	if !strings.Contains(rec.msg, "no new message to cy@example.com") {
		t.Errorf("WaitFor failure = %q, want it to name the recipient", rec.msg)
	}
}
