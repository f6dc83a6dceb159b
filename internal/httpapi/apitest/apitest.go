// Package apitest runs the whole HTTP API in-process for tests of any
// package: the real services over a real database (storetest) and a real
// SMTP server on loopback (mailtest), with a clock the test moves and the
// log lines captured.
package apitest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/libreoffice"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/mail/mailtest"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/telemetry"
)

// AdminToken is the operator token of every test server.
const AdminToken = "test-admin-token-0123456789"

// Config is what a test changes from the defaults.
type Config struct {
	Auth              auth.Options         // zero: Issuance(), no rate limits
	Mail              *mail.Options        // nil: a mailtest server
	Settings          func(*config.Config) // changes other settings, last
	AllowPrivateFetch bool                 // document URLs may reach loopback
	MaxBodyBytes      int64                // zero: 1 KiB, small enough to test 413
	CORSOrigins       []string             // nil: any origin
	ReadTimeout       time.Duration        // zero: none
	WriteTimeout      time.Duration        // zero: none
	MemoryBudget      int64                // zero: unbounded
	MemoryKeyShare    int                  // percent of it one key may hold; zero: 100
	SendBuffer        int                  // > 0: the socket send buffer of the server's connections, to test slow readers
	// ConvertWorkers > 0 starts a conversion pool of that many LibreOffice
	// workers, run by the test binary itself: the test package must call
	// RunWorkerIfAsked from an init function.
	ConvertWorkers int
	// ChromiumBrowsers > 0 starts a Chromium pool of that many browsers,
	// confined by the test binary (RunWorkerIfAsked); 0: HTML and Markdown
	// go to LibreOffice.
	ChromiumBrowsers int
	// Engines, when not nil, lends the server its shared pools instead of
	// starting new ones: its LibreOffice pool when ConvertWorkers > 0,
	// its Chromium pool when ChromiumBrowsers > 0 (one worker each,
	// whatever the count). Settings then do not reach those pools.
	Engines *Engines
	// OwnChromium keeps the Chromium pool of the server its own while
	// Engines lends the LibreOffice pool: its counters and metrics are
	// the server's.
	OwnChromium    bool
	AdminLoginRate ratelimit.Rate  // admin login attempts per address; zero: unlimited
	TrustedProxies config.Prefixes // whose X-Forwarded-* headers are believed

	Identity    *pdfsign.Identity   // the signing identity; nil: a new CA and certificate
	Timestamper pdfsign.Timestamper // nil: signatures without time-stamps
	KeyLimits   keylimit.Limits     // the default per-key limits; zero: none
	// JobWorkers > 0 runs jobs (Prefer: respond-async), that many at once;
	// webhooks obey AllowPrivateFetch. Zero: jobs are accepted, never run.
	JobWorkers int
}

// RunWorkerIfAsked turns the test binary into a conversion worker when a
// pool started it as one ("convert-worker"), or into a PDF tools' worker;
// call it first in TestMain.
func RunWorkerIfAsked() {
	pdftools.RunWorkerIfAsked()
	if len(os.Args) == 2 && os.Args[1] == "convert-worker" {
		os.Exit(app.RunWorker(os.Stdin, os.Stdout))
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
	Convert   *libreoffice.Pool // nil unless Config.ConvertWorkers > 0
	Limits    *keylimit.Enforcer
	Meter     *metering.Recorder
	Chromium  *chromium.Pool // nil unless Config.ChromiumBrowsers > 0
	Jobs      *jobs.Service
	Logs      *Buffer
	Clock     *Clock
}

// Start serves the API over db until the test ends; its log is printed
// when the test fails. The services are built by the composition root
// (internal/app), from a Config of the test's values.
func Start(t testing.TB, db *store.DB, cfg Config) *Server {
	t.Helper()
	s := &Server{DB: db, Logs: &Buffer{}, Clock: &Clock{now: time.Now().UTC()}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", s.Logs)
		}
	})
	log := slog.New(slog.NewJSONHandler(s.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := app.Options{Logger: log, DB: db, Now: s.Clock.Now, Identity: cfg.Identity, Timestamper: cfg.Timestamper}
	if cfg.Engines != nil {
		o.Convert, o.Chromium = cfg.Engines.pools(t, cfg.ConvertWorkers > 0, cfg.ChromiumBrowsers > 0 && !cfg.OwnChromium)
	}
	a, err := app.Open(context.Background(), s.settings(t, cfg), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatalf("%v (apt-get install libreoffice-writer-nogui libreofficekit-dev chromium)", err)
	}
	s.Auth, s.Telemetry, s.Signing, s.Annotate, s.Convert, s.Chromium = a.Auth, a.Telemetry, a.Signing, a.Annotate, a.Convert, a.Chromium
	s.Limits, s.Meter, s.Jobs = a.Limits, a.Meter, a.Jobs
	s.API = a.Handler("test")
	if err := a.StartJobs(context.Background(), s.API); err != nil {
		t.Fatal(err)
	}
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
	return s
}

// WebhookSecret is the webhook signing key of every test server.
var WebhookSecret = []byte("0123456789abcdef0123456789abcdef")

// settings are the test's values over the defaults.
func (s *Server) settings(t testing.TB, tc Config) *config.Config {
	cfg := config.Default()
	cfg.DataDir = t.TempDir()
	cfg.Secret = "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
	cfg.AdminToken, cfg.AdminSessionTTL, cfg.AdminLoginPerIP = AdminToken, time.Hour, tc.AdminLoginRate
	auth := tc.Auth
	if auth.KeyPrefix == "" {
		auth = Issuance()
	}
	cfg.KeyPrefix, cfg.CodeTTL, cfg.CodeMaxAttempts = auth.KeyPrefix, auth.CodeTTL, auth.MaxAttempts
	cfg.RegisterPerEmail, cfg.RegisterPerIP, cfg.VerifyPerIP = auth.RegisterPerEmail, auth.RegisterPerIP, auth.VerifyPerIP
	mo := tc.Mail
	if mo == nil {
		s.SMTP = mailtest.Start(t)
		mo = &mail.Options{URL: s.SMTP.URL(), CAFile: s.SMTP.CAFile()}
	}
	cfg.SMTPURL, cfg.SMTPCAFile, cfg.MailTimeout = mo.URL, mo.CAFile, 10*time.Second
	cfg.CollectQueue, cfg.CollectBatch, cfg.TelemetryMetadata = 64, 500, 256
	cfg.FetchAllowPrivate, cfg.FetchTimeout = tc.AllowPrivateFetch, 5*time.Second
	cfg.SignMaxBytes, cfg.AnnotateMaxBytes = 1<<20, 10<<20
	cfg.MaxBodyBytes = cmp.Or(config.Bytes(tc.MaxBodyBytes), 1<<10)
	cfg.CORSOrigins, cfg.TrustedProxies = tc.CORSOrigins, tc.TrustedProxies
	cfg.ReadTimeout, cfg.WriteTimeout = tc.ReadTimeout, tc.WriteTimeout
	cfg.MemoryBudget, cfg.MemoryKeyShare = config.Bytes(tc.MemoryBudget), cmp.Or(tc.MemoryKeyShare, 100)
	cfg.KeyMaxConcurrent, cfg.KeyRate, cfg.KeyQuota = tc.KeyLimits.Concurrent, tc.KeyLimits.Rate, keylimit.Quota(tc.KeyLimits.Quota)
	cfg.ConvertMaxFiles = 8
	engineSettings(&cfg, tc.ConvertWorkers, tc.ChromiumBrowsers)
	cfg.JobWorkers, cfg.JobTimeout, cfg.JobRetention, cfg.WebhookRetryFor = engineCount(tc.JobWorkers), 2*time.Minute, time.Hour, time.Minute
	cfg.WebhookSecret = "whsec_" + base64.StdEncoding.EncodeToString(WebhookSecret)
	if tc.Settings != nil {
		tc.Settings(&cfg)
	}
	return &cfg
}

// engineSettings set the engines' counts; with browsers, the longer job
// timeout of a loaded machine's first pages.
func engineSettings(cfg *config.Config, workers, browsers int) {
	cfg.ConvertWorkers, cfg.ChromiumWorkers = engineCount(workers), engineCount(browsers)
	if browsers > 0 {
		cfg.ConvertJobTimeout = 2 * time.Minute
	}
}

// engineCount is the setting that starts n engine processes: none is off.
func engineCount(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

// Engines are a LibreOffice pool and a Chromium pool that the servers of
// a test package share (Config.Engines), so that each test does not warm
// up its own: each is started at its first use, with one worker, and
// serves its tests one after another. A shared pool's counters, metrics
// and log lines are not those of any one server: a test that asserts
// them, or that needs other engine settings or a fresh pool, starts its
// own. Close them when the tests have run (TestMain).
type Engines struct {
	Logs     Buffer // the pools' log lines
	mu       sync.Mutex
	convert  *libreoffice.Pool
	chromium *chromium.Pool
}

// pools are the shared pools asked for, started if not yet.
func (e *Engines) pools(t testing.TB, convert, browse bool) (*libreoffice.Pool, *chromium.Pool) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	cfg := config.Default()
	engineSettings(&cfg, 1, 1)
	log := slog.New(slog.NewJSONHandler(&e.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var err error
	if convert && e.convert == nil {
		if e.convert, err = app.NewConvertPool(&cfg, log, nil); err != nil {
			t.Fatal(err)
		}
	}
	if browse && e.chromium == nil {
		if e.chromium, err = app.NewChromiumPool(&cfg, log, nil); err != nil {
			t.Fatal(err)
		}
	}
	var c *libreoffice.Pool
	var b *chromium.Pool
	if convert {
		c = e.convert
	}
	if browse {
		b = e.chromium
	}
	return c, b
}

// Close stops the pools started.
func (e *Engines) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []error
	if e.convert != nil {
		errs = append(errs, e.convert.Close(ctx))
	}
	if e.chromium != nil {
		errs = append(errs, e.chromium.Close(ctx))
	}
	return errors.Join(errs...)
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
