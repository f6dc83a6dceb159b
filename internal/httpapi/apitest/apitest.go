// Package apitest runs the whole HTTP API in-process for tests of any
// package: the real services over a real database (storetest) and a real
// SMTP server on loopback (mailtest), with a clock the test moves and the
// log lines captured.
package apitest

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/convert"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/mail/mailtest"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/telemetry"
	"github.com/quire-dev/quire/internal/web"
)

// AdminToken is the operator token of every test server.
const AdminToken = "test-admin-token-0123456789"

// Config is what a test changes from the defaults.
type Config struct {
	Auth              auth.Options             // zero: Issuance(), no rate limits
	Mail              *mail.Options            // nil: a mailtest server
	Telemetry         func(*telemetry.Options) // changes the intake limits
	AllowPrivateFetch bool                     // document URLs may reach loopback
	MaxBodyBytes      int64                    // zero: 1 KiB, small enough to test 413
	CORSOrigins       []string                 // nil: any origin
	ReadTimeout       time.Duration            // zero: none
	WriteTimeout      time.Duration            // zero: none
	SignMemoryBudget  int64                    // zero: unbounded
	MemoryKeyShare    int                      // percent of it one key may hold; zero: 100
	SendBuffer        int                      // > 0: the socket send buffer of the server's connections, to test slow readers
	// ConvertWorkers > 0 starts a conversion pool of that many LibreOffice
	// workers, run by the test binary itself: the test package must call
	// RunWorkerIfAsked from an init function.
	ConvertWorkers int
	// ChromiumBrowsers > 0 starts a Chromium pool of that many browsers,
	// confined by the test binary (RunWorkerIfAsked); 0: HTML and Markdown
	// go to LibreOffice.
	ChromiumBrowsers int
	AdminLoginRate   ratelimit.Rate  // admin login attempts per address; zero: unlimited
	TrustedProxies   config.Prefixes // whose X-Forwarded-* headers are believed

	Identity    *pdfsign.Identity   // the signing identity; nil: a new CA and certificate
	Timestamper pdfsign.Timestamper // nil: signatures without time-stamps
	KeyLimits   keylimit.Limits     // the default per-key limits; zero: none
	// JobWorkers > 0 serves Prefer: respond-async with a jobs service
	// running that many jobs at once; webhooks obey AllowPrivateFetch.
	JobWorkers int
}

// RunWorkerIfAsked turns the test binary into a conversion worker when a
// pool started it as one ("convert-worker"); call it from init.
func RunWorkerIfAsked() {
	if len(os.Args) == 2 && os.Args[1] == "convert-worker" {
		os.Exit(convert.RunWorker(os.Stdin, os.Stdout))
	}
}

// Issuance are the code and key rules of tests: the defaults, unlimited.
func Issuance() auth.Options {
	return auth.Options{KeyPrefix: "sd", CodeTTL: 15 * time.Minute, MaxAttempts: 5}
}

// Server is a running API.
type Server struct {
	URL       string
	DB        *store.DB
	SMTP      *mailtest.Server // nil when Config.Mail was given
	API       *httpapi.Server
	Auth      *auth.Service
	Telemetry *telemetry.Service
	Signing   *signing.Service
	Annotate  *annotate.Service
	Convert   *convert.Pool // nil unless Config.ConvertWorkers > 0
	Limits    *keylimit.Enforcer
	Meter     *metering.Recorder
	Chromium  *chromium.Pool // nil unless Config.ChromiumBrowsers > 0
	Jobs      *jobs.Service  // nil unless Config.JobWorkers > 0
	Logs      *Buffer
	Clock     *Clock
}

// Start serves the API over db until the test ends; its log is printed
// when the test fails.
func Start(t testing.TB, db *store.DB, cfg Config) *Server {
	t.Helper()
	s := &Server{DB: db, Logs: &Buffer{}, Clock: &Clock{now: time.Now().UTC()}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", s.Logs)
		}
	})
	log := slog.New(slog.NewJSONHandler(s.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sender := s.mailer(t, cfg.Mail, log)
	opt := cfg.Auth
	if opt.KeyPrefix == "" {
		opt = Issuance()
	}
	opt.Now, opt.Logger = s.Clock.Now, log
	s.Auth = auth.New(db, sender, []byte("0123456789abcdef0123456789abcdef"), opt)
	reg := prometheus.NewRegistry()
	topt := telemetry.Options{QueueLength: 64, MaxBatch: 500, CommitTimeout: 10 * time.Second,
		Retention: 90 * 24 * time.Hour, MetadataBytes: 256, Logger: log, Registerer: reg, Now: s.Clock.Now}
	if cfg.Telemetry != nil {
		cfg.Telemetry(&topt)
	}
	s.Telemetry = telemetry.New(db, topt)
	t.Cleanup(s.Telemetry.Close)
	id := cfg.Identity
	if id == nil {
		var err error
		if id, err = pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: t.TempDir()}); err != nil {
			t.Fatal(err)
		}
	}
	var conv signing.Converter
	if cfg.ConvertWorkers > 0 {
		s.Convert = startPool(t, cfg.ConvertWorkers, log)
		conv = s.Convert
	}
	s.Signing = signing.New(id, db, conv, signing.Options{MaxDocumentBytes: 1 << 20, Logger: log, Now: s.Clock.Now, Timestamper: cfg.Timestamper,
		Fetch: fetch.Options{AllowPrivate: cfg.AllowPrivateFetch, Timeout: 5 * time.Second}})
	if err := s.Signing.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	fetcher := fetch.New(fetch.Options{AllowPrivate: cfg.AllowPrivateFetch, Timeout: 5 * time.Second, MaxBytes: 10 << 20})
	engine, err := annotate.NewEngine(annotate.DefaultLimits, fetcher.Get, certpage.DefaultFonts("")[0].Path)
	if err != nil {
		t.Fatalf("%v (apt-get install fonts-dejavu-core)", err)
	}
	s.Annotate = annotate.NewService(engine, conv, 10<<20, log)
	if cfg.ChromiumBrowsers > 0 {
		s.Chromium = startChromium(t, cfg.ChromiumBrowsers, log)
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 10
	}
	s.Limits = keylimit.New(cfg.KeyLimits, db, ratelimit.NewBlocks(ratelimit.New(db, []byte("key-rate-limits"), s.Clock.Now)), s.Clock.Now)
	s.Jobs = startJobs(t, db, cfg, log, reg)
	pages := web.New(web.Deps{Auth: s.Auth, Telemetry: s.Telemetry, Signing: s.Signing, Convert: s.Convert, Jobs: s.Jobs,
		Limiter: ratelimit.New(db, []byte("page-rate-limits"), s.Clock.Now), Limits: s.Limits, APIUsage: db, Logger: log, Version: "test"},
		web.Options{AdminToken: AdminToken, SessionTTL: time.Hour, LoginRate: cfg.AdminLoginRate, Now: s.Clock.Now})
	s.Meter = metering.NewRecorder(db, s.Clock.Now, reg)
	t.Cleanup(s.Meter.Close)
	s.API = httpapi.New(httpapi.Deps{Auth: s.Auth, Telemetry: s.Telemetry, Signing: s.Signing, Convert: s.Convert, Chromium: s.Chromium, Annotate: s.Annotate, DB: db,
		Jobs: s.Jobs, Limits: s.Limits, Meter: s.Meter, APIUsage: db,
		Logger: log, Metrics: reg, Version: "test", Pages: pages.Routes()},
		httpapi.Options{MaxBodyBytes: cfg.MaxBodyBytes, AdminToken: AdminToken, ConvertMaxBytes: 25 << 20, ConvertMaxFiles: 8, TrustedProxies: cfg.TrustedProxies,
			SignMemoryBudget: cfg.SignMemoryBudget, MemoryKeyShare: cfg.MemoryKeyShare, ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout,
			CORSOrigins: cfg.CORSOrigins})
	srv := httptest.NewUnstartedServer(s.API)
	srv.Config = s.API.HTTPServer(slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	if cfg.SendBuffer > 0 {
		srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
			c.(*net.TCPConn).SetWriteBuffer(cfg.SendBuffer)
			return ctx
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	if s.Jobs != nil {
		if err := s.Jobs.Start(context.Background(), s.API.RunJob); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s.Jobs.Stop(ctx)
		})
	}
	return s
}

// WebhookSecret is the webhook signing key of every test server.
var WebhookSecret = []byte("0123456789abcdef0123456789abcdef")

// startJobs returns the jobs service of cfg.JobWorkers, or nil.
func startJobs(t testing.TB, db *store.DB, cfg Config, log *slog.Logger, reg *prometheus.Registry) *jobs.Service {
	if cfg.JobWorkers <= 0 {
		return nil
	}
	svc, err := jobs.New(db, jobs.Options{Workers: cfg.JobWorkers, Timeout: 2 * time.Minute, Retention: time.Hour,
		WebhookRetryFor: time.Minute, WebhookSecret: WebhookSecret, PollInterval: 50 * time.Millisecond,
		Fetch: fetch.Options{AllowPrivate: cfg.AllowPrivateFetch, Timeout: 5 * time.Second}, Logger: log, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// startPool starts warm conversion workers (the test binary, see
// RunWorkerIfAsked) and waits until they are ready.
func startPool(t testing.TB, workers int, log *slog.Logger) *convert.Pool {
	t.Helper()
	pool, err := convert.NewPool(convert.Options{Workers: workers, Executable: os.Args[0], WorkerArgs: []string{"convert-worker"}, Logger: log})
	if err != nil {
		t.Fatalf("conversion engine (apt-get install libreoffice-writer-nogui libreofficekit-dev): %v", err)
	}
	t.Cleanup(func() { pool.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := pool.WaitReady(ctx); err != nil {
		t.Fatalf("conversion workers not ready (apt-get install libreoffice-writer-nogui): %v", err)
	}
	return pool
}

// startChromium starts browsers confined by the test binary and waits
// until they are ready.
func startChromium(t testing.TB, browsers int, log *slog.Logger) *chromium.Pool {
	t.Helper()
	if _, err := os.Stat(chromium.DefaultPath); err != nil {
		t.Fatalf("%s is missing: apt-get install chromium", chromium.DefaultPath)
	}
	pool, err := chromium.NewPool(chromium.Options{Browsers: browsers, JobTimeout: 2 * time.Minute, Executable: os.Args[0],
		WorkerArgs: []string{"convert-worker"}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := pool.WaitReady(ctx); err != nil {
		t.Fatalf("browsers not ready: %v", err)
	}
	return pool
}

func (s *Server) mailer(t testing.TB, mo *mail.Options, log *slog.Logger) mail.Sender {
	if mo == nil {
		s.SMTP = mailtest.Start(t)
		mo = &mail.Options{URL: s.SMTP.URL(), CAFile: s.SMTP.CAFile()}
	}
	mo.Logger, mo.Timeout = log, 10*time.Second
	sender, err := mail.New(*mo)
	if err != nil {
		t.Fatal(err)
	}
	return sender
}

// Clock is the time of the server's services, moved by the test.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the current time of the clock.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// Advance moves the clock by d.
func (c *Clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Buffer collects log lines; safe for concurrent writers.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) { b.mu.Lock(); defer b.mu.Unlock(); return b.b.Write(p) }
func (b *Buffer) String() string              { b.mu.Lock(); defer b.mu.Unlock(); return b.b.String() }
