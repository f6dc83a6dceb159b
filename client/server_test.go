package client_test

import (
	"testing"
	"time"

	"github.com/quire-dev/quire/client"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/mail/mailtest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// adminToken is the operator token of the servers the tests start.
const adminToken = apitest.AdminToken

// quireServer is the real quire API, in-process over a real SQLite
// database and a real SMTP server on loopback (apitest). The tests reach
// it only through the client (and, for telemetry intake, which the client
// does not wrap, plain HTTP).
type quireServer struct{ *apitest.Server }

// startQuire starts a server; tune, when not nil, changes the issuance
// rules (rate limits) before it starts.
func startQuire(t *testing.T, tune func(*auth.Options)) *quireServer {
	t.Helper()
	opt := apitest.Issuance()
	if tune != nil {
		tune(&opt)
	}
	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	return &quireServer{apitest.Start(t, db, apitest.Config{Auth: opt, MaxBodyBytes: 1 << 20})}
}

// client returns a client of the server with the given options.
func (s *quireServer) client(opts ...client.Option) *client.Client { return client.New(s.URL, opts...) }

// code waits for the one-time code e-mailed to email.
func (s *quireServer) code(t *testing.T, email string) string {
	t.Helper()
	m := s.SMTP.WaitFor(t, email, 10*time.Second)
	code := mailtest.Code(m.Text)
	if code == "" {
		t.Fatalf("no code in the message to %s: %q", email, m.Text)
	}
	return code
}
