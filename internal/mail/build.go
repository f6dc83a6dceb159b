package mail

import (
	"crypto/rand"
	"fmt"
	netmail "net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// builder turns a Message into a go-mail Msg. It is the one place where the
// headers and encoding are decided, so the SMTP sender and the dev outbox emit
// the same bytes.
type builder struct {
	from *netmail.Address
	// idDomain is the right-hand side of Message-IDs. The From domain is used
	// rather than the host name because in a container the host name is a
	// meaningless random string.
	idDomain string
}

// newBuilder validates the sender address once, at start-up.
func newBuilder(from string) (builder, error) {
	addr, err := netmail.ParseAddress(from)
	if err != nil {
		return builder{}, fmt.Errorf("mail: QUIRE_MAIL_FROM %q is not an e-mail address: %w", from, err)
	}
	_, domain, _ := strings.Cut(addr.Address, "@")
	return builder{from: addr, idDomain: domain}, nil
}

// build returns m as a single-part text/plain UTF-8 message dated now.
// Quoted-printable keeps the ASCII login code readable in the raw source while
// still carrying any non-ASCII text safely through 7-bit relays.
func (b builder) build(m Message, now time.Time) (*gomail.Msg, error) {
	// A single parsed address: this also rejects CR/LF, so the recipient
	// cannot smuggle extra headers or recipients into the message.
	to, err := netmail.ParseAddress(m.To)
	if err != nil {
		return nil, fmt.Errorf("mail: invalid recipient %q: %w", m.To, err)
	}
	msg := gomail.NewMsg(
		gomail.WithCharset(gomail.CharsetUTF8),
		gomail.WithEncoding(gomail.EncodingQP),
		gomail.WithNoDefaultUserAgent(),
	)
	msg.FromMailAddress(b.from)
	msg.ToMailAddress(to)
	msg.Subject(m.Subject)
	msg.SetDateWithValue(now)
	msg.SetMessageIDWithValue(rand.Text() + "@" + b.idDomain)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	return msg, nil
}
