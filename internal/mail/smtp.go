package mail

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// smtpTarget is a validated QUIRE_SMTP_URL.
type smtpTarget struct {
	host        string
	port        int
	implicitTLS bool             // smtps://
	starttls    gomail.TLSPolicy // smtp:// only
	user, pass  string           // authenticate when user != ""
	redacted    string           // the URL with the password masked, for logs
}

// String names the relay without any credentials, for error messages.
func (t smtpTarget) String() string {
	scheme := "smtp"
	if t.implicitTLS {
		scheme = "smtps"
	}
	return scheme + "://" + net.JoinHostPort(t.host, strconv.Itoa(t.port))
}

// urlError reports a problem with QUIRE_SMTP_URL. Callers must not pass the
// raw URL or any part of it that could hold the password.
func urlError(format string, args ...any) error {
	return fmt.Errorf("mail: QUIRE_SMTP_URL "+format, args...)
}

// parseSMTPURL validates raw and applies the per-scheme defaults.
func parseSMTPURL(raw string) (smtpTarget, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return smtpTarget{}, parseFailure(raw, err)
	}
	// A '/', '?' or '#' left unescaped in the password ends the authority
	// early, and the rest of the password, up to its '@', lands in the path,
	// query or fragment. Stop here, before anything from there is echoed.
	if strings.Contains(u.Path+u.RawQuery+u.Fragment, "@") {
		return smtpTarget{}, urlError("has an '@' after the host: percent-encode '/', '?' and '#' in the user and password")
	}
	var t smtpTarget
	switch u.Scheme {
	case "smtp":
		t.port = gomail.DefaultPortTLS
	case "smtps":
		t.port, t.implicitTLS = gomail.DefaultPortSSL, true
	default:
		return smtpTarget{}, urlError("scheme %q is not supported: use smtp:// (STARTTLS) or smtps:// (implicit TLS)", u.Scheme)
	}
	if t.host = u.Hostname(); t.host == "" {
		return smtpTarget{}, urlError("has no host: write it as %s://host:port", u.Scheme)
	}
	if p := u.Port(); p != "" {
		if t.port, err = strconv.Atoi(p); err != nil || t.port < 1 || t.port > 65535 {
			return smtpTarget{}, urlError("port %q is not between 1 and 65535", p)
		}
	}
	if (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return smtpTarget{}, urlError("must not have a path or fragment")
	}
	if t.starttls, err = parseQuery(u); err != nil {
		return smtpTarget{}, err
	}
	if u.User != nil {
		t.user = u.User.Username()
		t.pass, _ = u.User.Password()
		if t.user == "" && t.pass != "" {
			return smtpTarget{}, urlError("has a password but no user")
		}
	}
	t.redacted = u.Redacted()
	return t, nil
}

// parseFailure explains a url.Parse error without leaking the password: the
// parser's message quotes pieces of the input, so its detail is only shown
// when the input has no user information at all.
func parseFailure(raw string, err error) error {
	var uerr *url.Error
	if !strings.Contains(raw, "@") && errors.As(err, &uerr) {
		return urlError("is not a valid URL: %v", uerr.Err)
	}
	return urlError("is not a valid URL (detail withheld as it could quote the password): check the port and percent-encode special characters in the user and password")
}

// parseQuery reads the only query parameter, starttls, which selects the
// STARTTLS policy of smtp:// URLs.
func parseQuery(u *url.URL) (gomail.TLSPolicy, error) {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return 0, urlError("has a malformed query: %v", err)
	}
	for key := range q {
		if key != "starttls" {
			return 0, urlError("has unknown parameter %q (the only one is starttls)", key)
		}
	}
	values, ok := q["starttls"]
	switch {
	case !ok:
		return gomail.TLSMandatory, nil
	case u.Scheme == "smtps":
		return 0, urlError("parameter starttls applies only to smtp:// (smtps:// is TLS from the start)")
	case len(values) != 1:
		return 0, urlError("parameter starttls is given %d times", len(values))
	}
	switch values[0] {
	case "mandatory":
		return gomail.TLSMandatory, nil
	case "opportunistic":
		return gomail.TLSOpportunistic, nil
	case "none":
		return gomail.NoTLS, nil
	default:
		return 0, urlError("parameter starttls=%q is not one of mandatory, opportunistic, none", values[0])
	}
}

// newTLSConfig trusts the system roots plus the certificates in caFile, so a
// private relay (or a test server) can be verified instead of skipping
// verification.
func newTLSConfig(host, caFile string) (*tls.Config, error) {
	roots, err := x509.SystemCertPool()
	if err != nil {
		return nil, fmt.Errorf("mail: load system CA certificates: %w", err)
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("mail: QUIRE_SMTP_CA_FILE: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mail: QUIRE_SMTP_CA_FILE %s holds no PEM certificate", caFile)
		}
	}
	return &tls.Config{ServerName: host, RootCAs: roots, MinVersion: tls.VersionTLS12}, nil
}

// smtpSender delivers through a relay with go-mail, one connection per
// message: login codes are rare, and a fresh connection never trips over a
// relay's idle timeout.
type smtpSender struct {
	build   builder
	target  smtpTarget
	tls     *tls.Config
	timeout time.Duration
}

func newSMTP(o Options, b builder, logger *slog.Logger) (*smtpSender, error) {
	target, err := parseSMTPURL(o.URL)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := newTLSConfig(target.host, o.CAFile)
	if err != nil {
		return nil, err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	logger.Info("mail: delivering through SMTP", "url", target.redacted)
	return &smtpSender{build: b, target: target, tls: tlsConfig, timeout: timeout}, nil
}

// Send delivers m, giving up when ctx ends or the per-message timeout passes.
func (s *smtpSender) Send(ctx context.Context, m Message) error {
	msg, err := s.build.build(m, time.Now())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	client, err := gomail.NewClient(s.target.host, s.clientOptions(ctx)...)
	if err != nil {
		return sendError(s.target.String(), err)
	}
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		// When ctx ended, go-mail only sees a closed socket; name the real cause.
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w: %w", ctxErr, err)
		}
		return sendError(s.target.String(), err)
	}
	return nil
}

// clientOptions configures a go-mail client for one Send bounded by ctx.
func (s *smtpSender) clientOptions(ctx context.Context) []gomail.Option {
	opts := []gomail.Option{
		gomail.WithPort(s.target.port),
		gomail.WithTimeout(s.timeout),
		gomail.WithTLSConfig(s.tls),
		gomail.WithTLSPolicy(s.target.starttls),
		gomail.WithDialContextFunc(s.dialer(ctx)),
	}
	if s.target.implicitTLS {
		// With a custom dialer go-mail does not wrap the socket in TLS
		// itself; WithSSL only stops it from also attempting STARTTLS.
		opts = append(opts, gomail.WithSSL())
	}
	if s.target.user != "" {
		// PLAIN and LOGIN are what relays universally offer. go-mail refuses
		// both over an unencrypted link unless the relay is on loopback, and
		// falls back to its own discovery when the relay offers neither.
		opts = append(opts,
			gomail.WithUsername(s.target.user),
			gomail.WithPassword(s.target.pass),
			gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthPlain, gomail.SMTPAuthLogin),
		)
	}
	return opts
}

// dialer opens the connection of one Send. go-mail watches the context only
// while dialling; closing the socket when sendCtx ends also aborts a stalled
// greeting, AUTH or DATA, and frees the socket on the error paths where
// go-mail returns without closing it. It dials the address itself because
// go-mail joins host and port without the brackets an IPv6 host needs.
func (s *smtpSender) dialer(sendCtx context.Context) gomail.DialContextFunc {
	addr := net.JoinHostPort(s.target.host, strconv.Itoa(s.target.port))
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d interface {
			DialContext(ctx context.Context, network, addr string) (net.Conn, error)
		} = &net.Dialer{}
		if s.target.implicitTLS {
			d = &tls.Dialer{Config: s.tls}
		}
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		context.AfterFunc(sendCtx, func() { _ = conn.Close() })
		return conn, nil
	}
}
