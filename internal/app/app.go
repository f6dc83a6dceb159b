// Package app is quire's composition root: the one place where a Config
// becomes services, each given its collaborators (database, mail, fetcher,
// limiter, engines, clock). `quire serve`, the operator commands and the
// tests' in-process server (apitest) all build quire here; no other
// package calls the services' constructors.
package app

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/gotenberg"
	"github.com/quire-dev/quire/internal/jobs"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/libreoffice"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/telemetry"
)

// Options are the parts a caller brings instead of building them from the
// Config: the tests' database, clock, signing identity and time-stamp
// authority, or the operator commands' engines started on demand.
type Options struct {
	Logger      *slog.Logger        // required
	DB          *store.DB           // an open database; nil: the Config's, closed with the App
	Now         func() time.Time    // the clock of every service; nil: time.Now
	Identity    *pdfsign.Identity   // nil: the Config's signing key (file, token or generated)
	Timestamper pdfsign.Timestamper // nil: the Config's time-stamp authorities
	// OnDemand starts one LibreOffice worker at the first conversion and no
	// Chromium: for commands run by hand, most of which never convert. By
	// default the engines' pools are started as the Config says, warming up
	// in the background.
	OnDemand bool
	// Convert and Chromium are pools the caller started (NewConvertPool,
	// NewChromiumPool) and closes: the App uses them instead of starting
	// its Config's, and leaves them running at Close, so that several Apps
	// share them (the tests' servers, which would otherwise each warm up
	// their own).
	Convert  *libreoffice.Pool
	Chromium *chromium.Pool
}

// App is every service of quire, built from one Config.
type App struct {
	Config    *config.Config
	Log       *slog.Logger
	Metrics   *prometheus.Registry
	DB        *store.DB
	Auth      *auth.Service
	Telemetry *telemetry.Service
	Signing   *signing.Service
	Annotate  *annotate.Service
	PDFTools  *pdftools.Service // merge, split, stamp, protect... PDFs
	Jobs      *jobs.Service     // requests answered later (Prefer: respond-async), their webhooks
	Convert   *libreoffice.Pool // the LibreOffice workers; nil: off, or OnDemand
	Chromium  *chromium.Pool    // the browsers printing web pages; nil: off
	// Conversion converts documents over Convert and Chromium, for the
	// HTTP routes and their jobs (with OnDemand: no engine, every
	// conversion refused).
	Conversion *conversion.Service
	Limits     *keylimit.Enforcer // per-key limits of the API
	Meter      *metering.Recorder // metering of API operations
	Limiter    *ratelimit.Limiter // the shared counters: page rate limits, per-key rates

	converter converter // Convert, the on-demand worker, or nil
	onDemand  *OnDemand
	identity  *pdfsign.Identity
	fonts     *certpage.Lazy // the certificate page's, loaded at first use; text watermarks use them too
	ownDB     bool           // the database and the identity were opened here, and are closed with the app
	ownID     bool           // (the identity may hold a token's session)
	lent      Options        // the pools of Options.Convert and Options.Chromium, not closed here
	jobsOn    bool           // the jobs' workers were started (StartJobs)
	stopCheck func()         // ends the startup check of the time-stamp authority (Signing.CheckLongTerm)
	now       func() time.Time
}

// converter is what signing and annotate convert with: the LibreOffice
// pool, or the on-demand worker; each is the conversion service's Office
// too (signing's Converter is part of it).
type converter interface {
	conversion.Office
	annotate.Converter
}

// Open builds every service of cfg: it opens the database (applying
// migrations), loads the server secret and checks it against the
// database, loads the signing identity and starts the engines. Close
// releases all of it.
func Open(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	return open(ctx, cfg, o, (*App).openServices)
}

// OpenRecords opens what the commands that read and change records need
// (quire keys, license, usage, backup): the database, checked against the
// server secret, and the services that work on it alone (Auth, Telemetry,
// Limits, Meter, Limiter). It loads no signing key (a token is not
// opened), starts no engine and creates no jobs' client.
func OpenRecords(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	return open(ctx, cfg, o, nil)
}

// OpenJobs is OpenRecords with the jobs' service, which reads and
// cancels jobs but runs none (quire jobs).
func OpenJobs(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	return open(ctx, cfg, o, func(a *App, _ context.Context, _ Options) (err error) {
		a.Jobs, err = a.newJobs(true)
		return err
	})
}

// OpenVerifier is OpenRecords with a signing service that only verifies,
// against the trust anchors: the roots recorded in the database (every
// instance's own) and those of QUIRE_TRUST_ROOTS and QUIRE_TRUST_TSA. It
// loads no signing key (quire verify).
func OpenVerifier(ctx context.Context, cfg *config.Config, o Options) (*App, error) {
	return open(ctx, cfg, o, (*App).openVerifier)
}

// open opens the records of cfg, then what more builds.
func open(ctx context.Context, cfg *config.Config, o Options, more func(*App, context.Context, Options) error) (*App, error) {
	a := &App{Config: cfg, Log: o.Logger, Metrics: prometheus.NewRegistry(), DB: o.DB, now: o.Now, identity: o.Identity,
		fonts: certpage.NewLazy(certpage.Options{})}
	if a.now == nil {
		a.now = time.Now
	}
	err := a.openRecords(ctx)
	if err == nil && more != nil {
		err = more(a, ctx, o)
	}
	if err != nil {
		a.Close(context.Background())
		return nil, err
	}
	return a, nil
}

// openRecords opens the database and builds the services over it alone,
// in order, each from those before it.
func (a *App) openRecords(ctx context.Context) (err error) {
	cfg := a.Config
	if a.DB == nil {
		if a.DB, err = store.Open(ctx, cfg.DatabaseURL, cfg.DataDir); err != nil {
			return err
		}
		a.ownDB = true
	}
	secret, err := auth.LoadSecret(cfg.Secret, cfg.DataDir)
	if err != nil {
		return err
	}
	if err := auth.CheckSecret(ctx, a.DB, secret); err != nil {
		return err
	}
	sender, err := mail.New(mail.Options{URL: cfg.SMTPURL, From: cfg.MailFrom, CAFile: cfg.SMTPCAFile,
		Timeout: cfg.MailTimeout, OutboxDir: filepath.Join(cfg.DataDir, "outbox"), Logger: a.Log})
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	a.Limiter = ratelimit.New(a.DB, secret, a.now)
	a.Limits = keylimit.New(keyLimits(cfg), a.DB, ratelimit.NewBlocks(a.Limiter), a.now,
		keylimit.Options{Lease: cfg.JobLease, Shared: a.DB.Backend() != "sqlite", Logger: a.Log}) // one instance serves a SQLite database
	a.Meter = metering.NewRecorder(a.DB, a.now, a.Metrics)
	a.Auth = auth.New(a.DB, sender, secret, a.Limiter, auth.Options{
		KeyPrefix: cfg.KeyPrefix, CodeTTL: cfg.CodeTTL, MaxAttempts: cfg.CodeMaxAttempts,
		RegisterPerEmail: cfg.RegisterPerEmail, RegisterPerIP: cfg.RegisterPerIP, VerifyPerIP: cfg.VerifyPerIP, Now: a.now, Logger: a.Log,
	})
	a.Telemetry = telemetry.New(a.DB, telemetry.Options{
		QueueLength: cfg.CollectQueue, MaxBatch: cfg.CollectBatch, CommitTimeout: cfg.CollectCommitTimeout, GatherWait: cfg.CollectGatherWait,
		Retention: cfg.TelemetryRetention, MetadataBytes: int(cfg.TelemetryMetadata), HostsRefresh: cfg.LicenseHostsRefresh,
		Logger: a.Log, Registerer: a.Metrics, Now: a.now,
	})
	return nil
}

// openServices builds, over the records, the engines and the services
// that use them, in order, each from those before it.
func (a *App) openServices(ctx context.Context, o Options) (err error) {
	if err := a.startEngines(o); err != nil {
		return err
	}
	if err := a.openSigning(ctx, o.Timestamper); err != nil {
		return err
	}
	if a.Annotate, err = a.newAnnotate(); err != nil {
		return err
	}
	a.PDFTools = NewPDFTools(a.Config, a.Log, a.Metrics, a.fonts)
	a.Jobs, err = a.newJobs(o.OnDemand)
	return err
}

// NewPDFTools returns the PDF tools of cfg, for the service or for
// quire pdf, which needs nothing else of it (reg and fonts may be nil).
func NewPDFTools(cfg *config.Config, log *slog.Logger, reg prometheus.Registerer, fonts *certpage.Lazy) *pdftools.Service {
	pdftools.DisableConfigDir()
	opt := pdfToolsOptions(cfg, log)
	opt.Fonts = fonts
	return pdftools.New(opt, reg)
}

// newJobs builds the jobs' service. It runs jobs once StartJobs gives it
// the API to run them through, as many at once as QUIRE_JOB_WORKERS says
// (default: the conversion workers); the commands only read and cancel.
func (a *App) newJobs(onDemand bool) (*jobs.Service, error) {
	cfg := a.Config
	secret, err := jobs.LoadSecret(cfg.WebhookSecret, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	workers := 0
	if !onDemand {
		workers = a.jobWorkers()
	}
	return jobs.New(a.DB, jobs.Options{Workers: workers, MaxQueued: cfg.JobMaxQueued, Timeout: cfg.JobTimeout, OperationTimeouts: operationTimeouts(cfg),
		Lease: cfg.JobLease, Retention: cfg.JobRetention, MaxWait: cfg.JobMaxWait,
		WebhookRetryFor: cfg.WebhookRetryFor, WebhookSecret: secret, Callback: gotenberg.Callback, Logger: a.Log, Registerer: a.Metrics,
		Webhooks: fetch.New(fetch.Options{Timeout: cfg.FetchTimeout, AllowPrivate: cfg.FetchAllowPrivate})})
}

// jobWorkers is how many jobs the instance runs at once: as many as it
// has conversion workers unless QUIRE_JOB_WORKERS says otherwise.
func (a *App) jobWorkers() int {
	switch n := a.Config.JobWorkers; {
	case n < 0:
		return 0
	case n > 0:
		return n
	case a.Convert != nil:
		return a.Convert.Slots()
	}
	return runtime.NumCPU()
}

// fetcher downloads what requests point at (documents, templates, images)
// under the network rules of QUIRE_FETCH_*, up to maxBytes.
func (a *App) fetcher(maxBytes int64) *fetch.Fetcher {
	cfg := a.Config
	return fetch.New(fetch.Options{Timeout: cfg.FetchTimeout, MaxRedirects: cfg.FetchMaxRedirects, AllowPrivate: cfg.FetchAllowPrivate, MaxBytes: maxBytes})
}

// openSigning loads the signing identity (unless given) and builds the
// signing service, recording this instance's root in the database.
func (a *App) openSigning(ctx context.Context, ts pdfsign.Timestamper) error {
	cfg := a.Config
	if a.identity == nil {
		id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: cfg.DataDir, PKCS12File: cfg.SigningP12,
			PKCS12Password: cfg.SigningP12Password, CertFile: cfg.SigningCert, KeyFile: cfg.SigningKey, Organization: cfg.SigningOrg, PublicURL: cfg.PublicURL,
			Token: a.signingToken(ctx)})
		if err != nil {
			return err
		}
		a.identity, a.ownID = id, true
	}
	level, err := signLevel(cfg)
	if err != nil {
		return err
	}
	if cfg.SignLevel == "" && ts != nil { // authorities given, not configured: the default of QUIRE_TSA_URL
		level = pdfsign.LevelLT
	}
	opt, err := a.signingOptions()
	if err != nil {
		return err
	}
	if ts == nil {
		ts = timestamper(cfg)
	}
	opt.Timestamper, opt.Level = ts, level
	a.Signing = signing.New(a.identity, a.DB, a.converter, a.fetcher(int64(cfg.SignMaxBytes)), opt)
	// The check asks the authority for a token: it runs beside the
	// startup, which a slow authority must not hold up; Close ends it.
	check, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.Signing.CheckLongTerm(check)
	}()
	a.stopCheck = func() { cancel(); <-done }
	return a.Signing.Publish(ctx)
}

// openVerifier builds a signing service without a signing key, which
// verifies only.
func (a *App) openVerifier(context.Context, Options) error {
	opt, err := a.signingOptions()
	if err != nil {
		return err
	}
	a.Signing = signing.New(nil, a.DB, nil, a.fetcher(int64(a.Config.SignMaxBytes)), opt)
	return nil
}

// signingOptions are the options of signing and verifying: limits, trust
// anchors and what certificate pages name.
func (a *App) signingOptions() (signing.Options, error) {
	cfg := a.Config
	trustRoots, err := loadCertificates("QUIRE_TRUST_ROOTS", cfg.TrustRoots)
	if err != nil {
		return signing.Options{}, err
	}
	trustTSA, err := loadCertificates("QUIRE_TRUST_TSA", strings.Join([]string{cfg.TrustTSA, cfg.TSACAFile}, ","))
	if err != nil {
		return signing.Options{}, err
	}
	return signing.Options{MaxDocumentBytes: int64(cfg.SignMaxBytes), PDFLimits: pdfLimits(cfg), Logger: a.Log, Now: a.now,
		TrustRoots: trustRoots, TrustTSA: trustTSA, PublicURL: cfg.PublicURL, Organization: cfg.SigningOrg,
		Certificates: a.fonts}, nil
}

// newAnnotate builds the template filler. Its downloads (templates and
// images) go through the same network rules as signing's.
func (a *App) newAnnotate() (*annotate.Service, error) {
	cfg := a.Config
	limits := annotateLimits(cfg)
	fetcher := a.fetcher(max(int64(cfg.AnnotateMaxBytes), limits.MaxImageBytes))
	engine, err := annotate.NewEngine(limits, fetcher.Get, certpage.DefaultFonts("")[0].Path)
	if err != nil {
		return nil, fmt.Errorf("%w (apt-get install fonts-dejavu-core)", err)
	}
	return annotate.NewService(engine, a.converter, int64(cfg.AnnotateMaxBytes), a.Log), nil
}

// signingToken is the PKCS#11 token of QUIRE_SIGNING_PKCS11_*, or nil.
// Instances sharing the database set up the key in the token one at a time.
func (a *App) signingToken(ctx context.Context) *pdfsign.Token {
	cfg := a.Config
	if cfg.PKCS11Module == "" {
		return nil
	}
	return &pdfsign.Token{Module: cfg.PKCS11Module, Label: cfg.PKCS11Token, PIN: cfg.PKCS11PIN, Key: cfg.PKCS11Key,
		Exclusive: func(fn func() error) error { return a.DB.Exclusive(ctx, fn) }}
}

// timestamper asks the time-stamp authorities of QUIRE_TSA_URL in order;
// nil when there are none.
func timestamper(cfg *config.Config) pdfsign.Timestamper {
	urls := pdfsign.SplitTSAURLs(cfg.TSAURL)
	if len(urls) == 0 {
		return nil
	}
	return pdfsign.NewTSAList(urls, cfg.TSATimeout)
}

// loadCertificates reads the certificates of a trust setting: PEM files
// or directories of them (each file in a directory that holds one),
// separated by commas. Empty entries are skipped; a file without a
// certificate is an error naming it.
func loadCertificates(setting, spec string) ([]*x509.Certificate, error) {
	var out []*x509.Certificate
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		files := []string{p}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", setting, err)
			}
			files = files[:0]
			for _, e := range entries {
				if !e.IsDir() {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
		}
		for _, f := range files {
			certs, err := pemCertificates(f)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", setting, err)
			}
			out = append(out, certs...)
		}
	}
	return out, nil
}

// pemCertificates reads the CERTIFICATE blocks of a PEM file.
func pemCertificates(file string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return out, nil
}

// Sweep deletes expired codes, old rate-limit windows and raw telemetry
// events past their retention.
func (a *App) Sweep(ctx context.Context) error {
	return errors.Join(a.Auth.Cleanup(ctx), a.Telemetry.Sweep(ctx))
}

// Close stops the engines (killing workers still busy when ctx ends),
// commits the job submissions, telemetry and metering still queued, then closes the
// signing key's token and the database it opened. Call it after the
// HTTP server has finished.
func (a *App) Close(ctx context.Context) error {
	var errs []error
	if a.stopCheck != nil {
		a.stopCheck()
	}
	if a.jobsOn { // jobs not finished by ctx's end run again (jobs/lease.go)
		errs = append(errs, a.Jobs.Stop(ctx))
	}
	if a.Jobs != nil {
		a.Jobs.Close()
	}
	errs = append(errs, a.stopEngines(ctx))
	if a.Telemetry != nil {
		a.Telemetry.Close()
	}
	if a.Meter != nil {
		a.Meter.Close()
	}
	if a.Limits != nil {
		a.Limits.Close()
	}
	if a.ownID {
		a.identity.Close()
	}
	if a.ownDB && a.DB != nil {
		errs = append(errs, a.DB.Close())
	}
	return errors.Join(errs...)
}
