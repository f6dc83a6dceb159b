package main

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/certpage"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/telemetry"
)

// app is the set of services that commands share, built from one Config.
type app struct {
	cfg       *config.Config
	log       *slog.Logger
	metrics   *prometheus.Registry
	db        *store.DB
	auth      *auth.Service
	telemetry *telemetry.Service
	signing   *signing.Service
	identity  *pdfsign.Identity // closed with the app: it may hold a token's session
	annotate  *annotate.Service
	limiter   *ratelimit.Limiter // rate limits of the pages (admin login)
	limits    *keylimit.Enforcer // per-key limits of the API
	meter     *metering.Recorder // metering of API operations
}

// openApp opens the database (applying migrations), loads the server
// secret and checks it against the database, and builds the services.
// conv converts DOCX for signing; nil refuses DOCX.
func openApp(ctx context.Context, cfg *config.Config, log *slog.Logger, conv signing.Converter) (a *app, err error) {
	db, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	secret, err := auth.LoadSecret(cfg.Secret, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if err := auth.CheckSecret(ctx, db, secret); err != nil {
		return nil, err
	}
	sender, err := mail.New(mail.Options{URL: cfg.SMTPURL, From: cfg.MailFrom, CAFile: cfg.SMTPCAFile,
		Timeout: cfg.MailTimeout, OutboxDir: filepath.Join(cfg.DataDir, "outbox"), Logger: log})
	if err != nil {
		return nil, fmt.Errorf("mail: %w", err)
	}
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: cfg.DataDir, PKCS12File: cfg.SigningP12,
		PKCS12Password: cfg.SigningP12Password, CertFile: cfg.SigningCert, KeyFile: cfg.SigningKey, Organization: cfg.SigningOrg, PublicURL: cfg.PublicURL,
		Token: signingToken(ctx, cfg, db)})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			id.Close()
		}
	}()
	level, err := cfg.Level()
	if err != nil {
		return nil, err
	}
	tsaRoots, err := loadRoots(cfg.TSACAFile)
	if err != nil {
		return nil, err
	}
	sign := signing.New(id, db, conv, signing.Options{MaxDocumentBytes: int64(cfg.SignMaxBytes), PDFLimits: cfg.PDFLimits(), Logger: log,
		Timestamper: timestamper(cfg), Level: level, TSARoots: tsaRoots, PublicURL: cfg.PublicURL, Organization: cfg.SigningOrg,
		Fetch: fetch.Options{Timeout: cfg.FetchTimeout, MaxRedirects: cfg.FetchMaxRedirects, AllowPrivate: cfg.FetchAllowPrivate}})
	if err := sign.Publish(ctx); err != nil {
		return nil, err
	}
	fill, err := newAnnotate(cfg, log, conv)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	limiter := ratelimit.New(db, secret, time.Now)
	return &app{cfg: cfg, log: log, metrics: reg, db: db, signing: sign, identity: id, annotate: fill, limiter: limiter,
		limits: keylimit.New(cfg.KeyLimits(), db, ratelimit.NewBlocks(limiter), time.Now),
		meter:  metering.NewRecorder(db, time.Now, reg),
		auth: auth.New(db, sender, secret, auth.Options{
			KeyPrefix: cfg.KeyPrefix, CodeTTL: cfg.CodeTTL, MaxAttempts: cfg.CodeMaxAttempts,
			RegisterPerEmail: cfg.RegisterPerEmail, RegisterPerIP: cfg.RegisterPerIP, VerifyPerIP: cfg.VerifyPerIP, Logger: log,
		}),
		telemetry: telemetry.New(db, telemetry.Options{
			QueueLength: cfg.CollectQueue, MaxBatch: cfg.CollectBatch, CommitTimeout: cfg.CollectCommitTimeout, GatherWait: cfg.CollectGatherWait,
			Retention: cfg.TelemetryRetention, MetadataBytes: int(cfg.TelemetryMetadata), HostsRefresh: cfg.LicenseHostsRefresh,
			Logger: log, Registerer: reg,
		}),
	}, nil
}

// newAnnotate builds the template filler. Its downloads (templates and
// images) go through the same SSRF-safe fetcher settings as signing's.
func newAnnotate(cfg *config.Config, log *slog.Logger, conv signing.Converter) (*annotate.Service, error) {
	limits := cfg.AnnotateLimits()
	fetcher := fetch.New(fetch.Options{Timeout: cfg.FetchTimeout, MaxRedirects: cfg.FetchMaxRedirects, AllowPrivate: cfg.FetchAllowPrivate,
		MaxBytes: max(int64(cfg.AnnotateMaxBytes), limits.MaxImageBytes)})
	engine, err := annotate.NewEngine(limits, fetcher.Get, certpage.DefaultFonts("")[0].Path)
	if err != nil {
		return nil, err
	}
	fillConv, _ := conv.(annotate.Converter) // the pool, or nil
	return annotate.NewService(engine, fillConv, int64(cfg.AnnotateMaxBytes), log), nil
}

// signingToken is the PKCS#11 token of QUIRE_SIGNING_PKCS11_*, or nil.
// Instances sharing the database set up the key in the token one at a time.
func signingToken(ctx context.Context, cfg *config.Config, db *store.DB) *pdfsign.Token {
	if cfg.PKCS11Module == "" {
		return nil
	}
	return &pdfsign.Token{Module: cfg.PKCS11Module, Label: cfg.PKCS11Token, PIN: cfg.PKCS11PIN, Key: cfg.PKCS11Key,
		Exclusive: func(fn func() error) error { return db.Exclusive(ctx, fn) }}
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

// loadRoots reads the PEM certificates of file (QUIRE_TSA_CA_FILE), or
// returns the system's roots when file is empty.
func loadRoots(file string) (*x509.CertPool, error) {
	if file == "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			return nil, fmt.Errorf("system roots for time-stamps: %w", err)
		}
		return pool, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("QUIRE_TSA_CA_FILE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("QUIRE_TSA_CA_FILE %s holds no PEM certificate", file)
	}
	return pool, nil
}

// Close commits the telemetry still queued, then closes the database and
// the signing key's token.
func (a *app) Close() error {
	a.telemetry.Close()
	a.meter.Close()
	a.identity.Close()
	return a.db.Close()
}

// errUsage makes withApp print the command's usage and exit 2.
var errUsage = errors.New("usage")

// withApp opens the services of cfg, runs fn, and turns its error into an
// exit status: 2 and the usage for errUsage, 1 for other failures. The
// data directory must have been set up by serve or init.
func withApp(cfg *config.Config, stderr io.Writer, name, usage string, fn func(context.Context, *app) error) int {
	if err := requireDataDir(cfg); err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
	ctx := context.Background()
	log := newLogger(stderr, "warn")
	conv := &lazyPool{opt: cfg.ConvertOptions(log)} // started only if a command converts
	defer conv.Close()
	a, err := openApp(ctx, cfg, log, conv)
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
	defer a.Close()
	switch err := fn(ctx, a); {
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, usage)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, name+":", describe(err))
		return 1
	}
	return 0
}

// describe is err for an operator: an error of the API's contract with
// its message and every bad field, one to a line.
func describe(err error) string {
	var qe *quire.Error
	if !errors.As(err, &qe) {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(qe.Message)
	for _, d := range qe.Details {
		fmt.Fprintf(&b, "\n  %s %s", d.Field, d.Issue)
	}
	return b.String()
}
