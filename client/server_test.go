package client_test

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire/client"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/mail/mailtest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
	"github.com/quire-dev/quire/internal/telemetry"
)

// adminToken is the operator token of the servers the tests start.
const adminToken = "client-test-admin-token-0123456789"

// quireServer is the real quire API, in-process over a real SQLite
// database and a real SMTP server on loopback, as the service runs in
// production but for the listener. The tests reach it only through the
// client (and, for telemetry intake, which the client does not wrap,
// plain HTTP).
type quireServer struct {
	URL  string
	SMTP *mailtest.Server
	DB   *store.DB
}

// startQuire starts a server; tune, when not nil, changes the issuance
// rules (rate limits) before it starts. The server's log is printed when
// the test fails.
func startQuire(t *testing.T, tune func(*auth.Options)) *quireServer {
	t.Helper()
	logs := &lockedBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	db := storetest.Open(t, storetest.URL(t, "sqlite"))
	smtp := mailtest.Start(t)
	sender, err := mail.New(mail.Options{URL: smtp.URL(), CAFile: smtp.CAFile(), Logger: log, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	opt := auth.Options{KeyPrefix: "sd", CodeTTL: 15 * time.Minute, MaxAttempts: 5}
	if tune != nil {
		tune(&opt)
	}
	authSvc := auth.New(db, sender, []byte("0123456789abcdef0123456789abcdef"), opt)
	reg := prometheus.NewRegistry()
	tel := telemetry.New(db, telemetry.Options{QueueLength: 64, MaxBatch: 500, CommitTimeout: 10 * time.Second,
		Retention: 90 * 24 * time.Hour, MetadataBytes: 2 << 10, Logger: log, Registerer: reg})
	t.Cleanup(tel.Close)
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()}) // a new signing CA and certificate
	if err != nil {
		t.Fatal(err)
	}
	sign := signing.New(id, db, nil, signing.Options{MaxDocumentBytes: 1 << 20, Logger: log,
		Fetch: fetch.Options{Timeout: 5 * time.Second}})
	api := httpapi.New(httpapi.Deps{Auth: authSvc, Telemetry: tel, Signing: sign, DB: db, Logger: log, Metrics: reg,
		Version: "client-test"},
		httpapi.Options{MaxBodyBytes: 1 << 20, TrustedProxies: config.Prefixes{}, AdminToken: adminToken})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &quireServer{URL: srv.URL, SMTP: smtp, DB: db}
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

// lockedBuffer is a buffer that the server's goroutines may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
