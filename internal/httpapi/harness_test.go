package httpapi_test

import (
	"bytes"
	"encoding/json"
	"github.com/prometheus/client_golang/prometheus"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/mail/mailtest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/telemetry"
)

// env is one API server over a real database and a real SMTP server on
// loopback, with a clock the test can move and the log lines captured.
type env struct {
	t         *testing.T
	db        *store.DB
	smtp      *mailtest.Server
	api       *httpapi.Server
	auth      *auth.Service
	telemetry *telemetry.Service
	signing   *signing.Service
	srv       *httptest.Server
	logs      *syncBuffer
	now       time.Time
	mu        sync.Mutex
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

const adminToken = "test-admin-token-0123456789"

func unlimited() auth.Options {
	return auth.Options{KeyPrefix: "sd", CodeTTL: 15 * time.Minute, MaxAttempts: 5}
}

// envConfig holds what tests change from the defaults of newEnv.
type envConfig struct {
	mail         *mail.Options // nil: a mailtest server
	telemetry    func(*telemetry.Options)
	allowPrivate bool // document URLs may reach loopback
}

type envOption func(*envConfig)

func withMail(mo mail.Options) envOption { return func(c *envConfig) { c.mail = &mo } }
func withTelemetry(f func(*telemetry.Options)) envOption {
	return func(c *envConfig) { c.telemetry = f }
}
func withPrivateFetch() envOption { return func(c *envConfig) { c.allowPrivate = true } }

func newEnv(t *testing.T, db *store.DB, opt auth.Options, options ...envOption) *env {
	t.Helper()
	var cfg envConfig
	for _, o := range options {
		o(&cfg)
	}
	var smtp *mailtest.Server
	mo := cfg.mail
	if mo == nil {
		smtp = mailtest.Start(t)
		mo = &mail.Options{URL: smtp.URL(), CAFile: smtp.CAFile()}
	}
	e := &env{t: t, db: db, smtp: smtp, logs: &syncBuffer{}, now: time.Now().UTC()}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	mo.Logger, mo.Timeout = log, 10*time.Second
	sender, err := mail.New(*mo)
	if err != nil {
		t.Fatal(err)
	}
	opt.Now = e.clock
	e.auth = auth.New(db, sender, []byte("0123456789abcdef0123456789abcdef"), opt)
	reg := prometheus.NewRegistry()
	topt := telemetry.Options{QueueLength: 64, MaxBatch: 500, CommitTimeout: 10 * time.Second,
		Retention: 90 * 24 * time.Hour, MetadataBytes: 256, Logger: log, Registerer: reg, Now: e.clock}
	if cfg.telemetry != nil {
		cfg.telemetry(&topt)
	}
	e.telemetry = telemetry.New(db, topt)
	t.Cleanup(e.telemetry.Close)
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e.signing = signing.New(id, db, nil, signing.Options{MaxDocumentBytes: 1 << 20, Logger: log, Now: e.clock,
		Fetch: fetch.Options{AllowPrivate: cfg.allowPrivate, Timeout: 5 * time.Second}})
	e.api = httpapi.New(httpapi.Deps{Auth: e.auth, Telemetry: e.telemetry, Signing: e.signing, DB: db, Logger: log, Metrics: reg, Version: "test"},
		httpapi.Options{MaxBodyBytes: 1 << 10, TrustedProxies: config.Prefixes{}, AdminToken: adminToken})
	e.srv = httptest.NewServer(e.api)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) clock() time.Time { e.mu.Lock(); defer e.mu.Unlock(); return e.now }
func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// errorBody decodes and checks the error body of the contract.
func (r response) errorBody(t *testing.T, status int, code string) httpapi.ErrorBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	var b httpapi.ErrorBody
	r.json(t, &b)
	if b.Code != code || b.Error != http.StatusText(status) || b.Message == "" || b.RequestID == "" || b.RequestID != r.header.Get("X-Request-Id") {
		t.Fatalf("error body %+v (X-Request-Id %q), want code %s", b, r.header.Get("X-Request-Id"), code)
	}
	return b
}

func (e *env) do(method, path string, body io.Reader, header map[string]string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

func (e *env) get(path string) response { return e.do("GET", path, nil, nil) }

func (e *env) register(email string) response {
	return e.get("/v1/auth/register?email=" + url.QueryEscape(email))
}

func (e *env) verify(email, code string) response {
	return e.get("/v1/auth/verify?email=" + url.QueryEscape(email) + "&code=" + url.QueryEscape(code))
}

// codeFor registers email and reads the code out of the message that the
// SMTP server received.
func (e *env) codeFor(email string) string {
	e.t.Helper()
	if r := e.register(email); r.status != 200 {
		e.t.Fatalf("register: %d %s", r.status, r.body)
	}
	m := e.smtp.WaitFor(e.t, email, 10*time.Second)
	code := mailtest.Code(m.Text)
	if code == "" {
		e.t.Fatalf("no code in %q", m.Text)
	}
	return code
}

// key goes through register, mail and verify, and returns the API key.
func (e *env) key(email string) string {
	e.t.Helper()
	r := e.verify(email, e.codeFor(email))
	if r.status != 200 {
		e.t.Fatalf("verify: %d %s", r.status, r.body)
	}
	var key string
	r.json(e.t, &key)
	return key
}
