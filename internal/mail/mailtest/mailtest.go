// Package mailtest runs a real SMTP server on loopback for tests of any
// package that sends mail. It speaks STARTTLS or implicit TLS with a
// certificate made for the test, requires AUTH PLAIN by default, and keeps what it
// receives so that a test can wait for a message and read the login code in it.
//
//	srv := mailtest.Start(t)
//	sender, _ := mail.New(mail.Options{URL: srv.URL(), CAFile: srv.CAFile()})
//	... trigger a login for a@example.com ...
//	code := mailtest.Code(srv.WaitFor(t, "a@example.com", 5*time.Second).Text)
package mailtest

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Default credentials, used unless WithAuth or WithoutAuth is given.
const (
	DefaultUser     = "quire"
	DefaultPassword = "mailtest-password"
)

// Received is one message as the server got it.
type Received struct {
	From    string   // envelope sender (MAIL FROM)
	To      []string // envelope recipients (RCPT TO)
	Subject string   // decoded Subject header
	// Text is the body decoded from its transfer encoding, with CRLF line
	// ends turned into LF so it compares equal to the text that was sent.
	// SMTP carries a body as whole lines, so a text sent without a final
	// line break arrives with one.
	Text string
	// TLS tells whether the message came over an encrypted connection,
	// so a test can prove that STARTTLS really happened.
	TLS bool
	Raw []byte // the message exactly as received
}

type tlsMode int

const (
	startTLS tlsMode = iota
	implicitTLS
	noTLS
)

type config struct {
	mode       tlsMode
	auth       bool
	user, pass string
}

// Option changes how Start sets up the server.
type Option func(*config)

// WithAuth sets the only user and password that AUTH PLAIN accepts.
func WithAuth(user, password string) Option {
	return func(c *config) { c.auth, c.user, c.pass = true, user, password }
}

// WithoutAuth lets clients send without authenticating; AUTH is not offered.
func WithoutAuth() Option {
	return func(c *config) { c.auth = false }
}

// WithImplicitTLS makes the server speak TLS from the first byte (smtps).
func WithImplicitTLS() Option {
	return func(c *config) { c.mode = implicitTLS }
}

// WithoutTLS makes a plain-text server that does not offer STARTTLS; AUTH is
// then allowed in clear, as a relay on loopback would.
func WithoutTLS() Option {
	return func(c *config) { c.mode = noTLS }
}

// Server is a running test SMTP server.
type Server struct {
	cfg    config
	addr   string
	caFile string

	mu       sync.Mutex
	messages []Received
	claimed  []bool        // claimed[i]: messages[i] was returned by WaitFor
	arrived  chan struct{} // closed, and replaced, when a message arrives
	stopped  bool          // the test is over: drop the server's log lines
	t        testing.TB
}

// Start runs a server on 127.0.0.1 on a free port until the test ends.
// By default it offers STARTTLS and requires AUTH PLAIN as DefaultUser and
// DefaultPassword.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{mode: startTLS, auth: true, user: DefaultUser, pass: DefaultPassword}
	for _, opt := range opts {
		opt(&cfg)
	}
	tlsConfig, caFile := newCertificates(t)
	s := &Server{cfg: cfg, caFile: caFile, arrived: make(chan struct{}), t: t}

	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = "localhost"
	srv.ErrorLog = (*testLogger)(s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	switch cfg.mode {
	case startTLS:
		srv.TLSConfig = tlsConfig
	case implicitTLS:
		ln = tls.NewListener(ln, tlsConfig)
	case noTLS:
		srv.AllowInsecureAuth = true
	}
	s.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
		_ = srv.Close()
		// Close only knows the listener once Serve has registered it; a
		// test that ends at once must not leave Serve accepting forever.
		_ = ln.Close()
	})
	return s
}

// URL returns the QUIRE_SMTP_URL that reaches this server with its
// credentials, e.g. smtp://quire:mailtest-password@127.0.0.1:40123.
func (s *Server) URL() string {
	u := url.URL{Scheme: "smtp", Host: s.addr}
	switch s.cfg.mode {
	case implicitTLS:
		u.Scheme = "smtps"
	case noTLS:
		u.RawQuery = "starttls=none"
	}
	if s.cfg.auth {
		u.User = url.UserPassword(s.cfg.user, s.cfg.pass)
	}
	return u.String()
}

// CAFile returns the path of the PEM file of the CA that signed the server's
// certificate; pass it as QUIRE_SMTP_CA_FILE.
func (s *Server) CAFile() string { return s.caFile }

// Messages returns a copy of everything received so far, oldest first.
func (s *Server) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.messages...)
}

// WaitFor returns the oldest message to the envelope recipient to that no
// earlier WaitFor returned, waiting up to timeout for it. Claiming messages
// lets a test that triggers two codes for one address read them in order.
// It fails the test when no such message arrives in time.
func (s *Server) WaitFor(t testing.TB, to string, timeout time.Duration) Received {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		msg, ok, arrived := s.claim(to)
		if ok {
			return msg
		}
		select {
		case <-arrived:
		case <-deadline.C:
			t.Fatalf("mailtest: no new message to %s within %v; received: %s", to, timeout, s.summary())
		}
	}
}

// claim takes the oldest unclaimed message to the recipient, or returns the
// channel that will be closed when the next message arrives.
func (s *Server) claim(to string) (Received, bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, m := range s.messages {
		if !s.claimed[i] && m.sentTo(to) {
			s.claimed[i] = true
			return m, true, nil
		}
	}
	return Received{}, false, s.arrived
}

// summary lists the recipients of everything received, for failure messages.
func (s *Server) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.messages) == 0 {
		return "nothing"
	}
	var rcpts []string
	for _, m := range s.messages {
		rcpts = append(rcpts, strings.Join(m.To, ","))
	}
	return fmt.Sprintf("%d message(s) to %s", len(s.messages), strings.Join(rcpts, "; "))
}

// deliver stores a message and wakes every WaitFor.
func (s *Server) deliver(m Received) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = append(s.messages, m)
	s.claimed = append(s.claimed, false)
	close(s.arrived)
	s.arrived = make(chan struct{})
}

func (m Received) sentTo(addr string) bool {
	for _, rcpt := range m.To {
		if strings.EqualFold(rcpt, addr) {
			return true
		}
	}
	return false
}

var codePattern = regexp.MustCompile(`\b\d{6}\b`)

// Code returns the first stand-alone 6-digit number in text (the one-time
// login code), or "" when there is none.
func Code(text string) string {
	return codePattern.FindString(text)
}

// testLogger sends go-smtp's connection errors (a client that rejected the
// certificate, say) to the test log while the test runs; after it, testing.T
// must not be used, so they are dropped.
type testLogger Server

func (l *testLogger) Printf(format string, v ...any) { l.log(fmt.Sprintf(format, v...)) }
func (l *testLogger) Println(v ...any)               { l.log(fmt.Sprintln(v...)) }

func (l *testLogger) log(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Logf("mailtest: %s", strings.TrimSpace(line))
	}
}
