package mailtest

import (
	"io"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// session is one SMTP conversation. go-smtp creates a new one after STARTTLS,
// so authentication done in clear never carries over to the encrypted link.
type session struct {
	srv    *Server
	conn   *smtp.Conn
	authed bool
	from   string
	rcpts  []string
}

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{srv: s, conn: c}, nil
}

// AuthMechanisms offers PLAIN, or nothing when the server runs WithoutAuth.
func (s *session) AuthMechanisms() []string {
	if !s.srv.cfg.auth {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	if !s.srv.cfg.auth || mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if (identity != "" && identity != user) || user != s.srv.cfg.user || pass != s.srv.cfg.pass {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.srv.cfg.auth && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.rcpts = append(s.rcpts, to)
	return nil
}

// Data stores the message. A message this package cannot decode is refused
// with a 554, so the sending test fails with the reason instead of passing
// with a message nobody checked.
func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	msg, err := parseMessage(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "mailtest: " + err.Error()}
	}
	msg.From = s.from
	msg.To = append([]string(nil), s.rcpts...)
	_, msg.TLS = s.conn.TLSConnectionState()
	s.srv.deliver(msg)
	return nil
}

// Reset forgets the envelope, as RSET and the end of DATA require.
func (s *session) Reset() {
	s.from, s.rcpts = "", nil
}

func (s *session) Logout() error { return nil }
