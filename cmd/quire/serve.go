package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/convert"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/web"
)

// cleanupEvery is how often expired codes and rate-limit windows are swept.
const cleanupEvery = 10 * time.Minute

// runServe runs the HTTP service until SIGTERM or SIGINT, then lets the
// requests in flight finish (up to QUIRE_SHUTDOWN_TIMEOUT) and exits 0.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, pos, err := config.Parse(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire serve:", err)
		return 2
	}
	log := newLogger(stderr, cfg.LogLevel)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := serve(ctx, cfg, log); err != nil {
		log.Error("quire serve failed", "err", err)
		return 1
	}
	return 0
}

func serve(ctx context.Context, cfg *config.Config, log *slog.Logger) error {
	memory.LimitRuntime(int64(cfg.SignMemoryBudget))
	pool, err := startConversion(cfg, log)
	if err != nil {
		return err
	}
	browsers, err := startChromium(cfg, log)
	if err != nil {
		stopConversion(context.Background(), pool, log)
		return err
	}
	var conv signing.Converter
	if pool != nil {
		conv = pool
	}
	a, err := openApp(ctx, cfg, log, conv)
	if err != nil {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		stopConversion(sctx, pool, log)
		stopChromium(sctx, browsers, log)
		return err
	}
	// Stop in dependency order, under the shutdown deadline once it is set:
	// the HTTP server (below), then the conversion workers, then telemetry
	// still queued, then the database. The deadline is a time, not the
	// HTTP shutdown's context: that one is cancelled when serve returns,
	// and idle workers would then be killed as if late.
	var deadline time.Time
	defer func() {
		if deadline.IsZero() { // Serve failed: no deadline was set
			deadline = time.Now().Add(cfg.ShutdownTimeout)
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		stopConversion(ctx, pool, log)
		stopChromium(ctx, browsers, log)
		a.Close()
	}()
	queue, err := openJobs(a, jobWorkers(cfg, pool))
	if err != nil {
		return err
	}
	pages := web.New(web.Deps{Auth: a.auth, Telemetry: a.telemetry, Signing: a.signing, Convert: pool, Jobs: queue, Limiter: a.limiter,
		Limits: a.limits, APIUsage: a.db, Logger: log, Version: version},
		web.Options{PublicURL: cfg.PublicURL, AdminToken: cfg.AdminToken, SessionTTL: cfg.AdminSessionTTL, LoginRate: cfg.AdminLoginPerIP})
	api := httpapi.New(httpapi.Deps{Auth: a.auth, Telemetry: a.telemetry, Signing: a.signing, Convert: pool, Chromium: browsers, Annotate: a.annotate, DB: a.db, Jobs: queue,
		Limits: a.limits, Meter: a.meter, APIUsage: a.db,
		Logger: log, Metrics: a.metrics, Version: version, Pages: pages.Routes()},
		httpapi.Options{MaxBodyBytes: int64(cfg.MaxBodyBytes), TrustedProxies: cfg.TrustedProxies, AdminToken: cfg.AdminToken,
			ConvertMaxBytes: int64(cfg.ConvertMaxInputBytes), ConvertMaxFiles: cfg.ConvertMaxFiles, SignMemoryBudget: int64(cfg.SignMemoryBudget), MemoryKeyShare: cfg.MemoryKeyShare,
			ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout, CORSOrigins: cfg.CORSOrigins})
	srv := api.HTTPServer(slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	if srv.TLSConfig, err = tlsConfig(cfg); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	if err := queue.Start(ctx, api.RunJob); err != nil {
		return err
	}
	go sweep(ctx, a, log)
	log.Info("quire listening", "addr", ln.Addr().String(), "tls", srv.TLSConfig != nil, "version", version, "database", a.db.Backend(),
		"settings", publicSettings(cfg))
	errc := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			errc <- srv.ServeTLS(ln, "", "") // the certificate is in TLSConfig
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight", "timeout", cfg.ShutdownTimeout.String())
	deadline = time.Now().Add(cfg.ShutdownTimeout)
	sctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := queue.Stop(sctx); err != nil { // jobs not finished by then run again on the next start
		log.Warn("jobs still running at shutdown", "err", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// tlsConfig loads QUIRE_TLS_CERT and QUIRE_TLS_KEY, so that a bad file
// stops serve at start; nil when they are unset (plain HTTP).
func tlsConfig(cfg *config.Config) (*tls.Config, error) {
	if cfg.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("QUIRE_TLS_CERT, QUIRE_TLS_KEY: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// startConversion starts the warm LibreOffice workers, unless conversion
// is disabled. They warm up in the background; a machine without
// LibreOffice still serves everything else, while /v1/convert and the
// readiness check (/v1/health) say that conversion is down.
func startConversion(cfg *config.Config, log *slog.Logger) (*convert.Pool, error) {
	if cfg.ConvertWorkers < 0 {
		log.Info("conversion disabled (QUIRE_CONVERT_WORKERS < 0)")
		return nil, nil
	}
	return convert.NewPool(cfg.ConvertOptions(log))
}

// stopConversion stops the workers once the HTTP server has finished;
// past ctx's deadline they are killed.
func stopConversion(ctx context.Context, pool *convert.Pool, log *slog.Logger) {
	if pool == nil {
		return
	}
	if err := pool.Close(ctx); err != nil {
		log.Warn("conversion engine stop", "err", err)
	}
}

// startChromium starts the warm browsers that print HTML and Markdown,
// unless they are off. Like the LibreOffice workers, they start in the
// background, and a machine without Chromium serves the rest.
func startChromium(cfg *config.Config, log *slog.Logger) (*chromium.Pool, error) {
	if cfg.ChromiumWorkers < 0 {
		log.Info("Chromium off (QUIRE_CHROMIUM_WORKERS < 0): HTML and Markdown go to LibreOffice")
		return nil, nil
	}
	return chromium.NewPool(cfg.ChromiumOptions(log))
}

// stopChromium stops the browsers once the HTTP server has finished;
// past ctx's deadline they are killed.
func stopChromium(ctx context.Context, pool *chromium.Pool, log *slog.Logger) {
	if pool == nil {
		return
	}
	if err := pool.Close(ctx); err != nil {
		log.Warn("Chromium engine stop", "err", err)
	}
}

// sweep deletes expired codes, old rate-limit windows and raw telemetry
// events past their retention, now and then.
func sweep(ctx context.Context, a *app, log *slog.Logger) {
	t := time.NewTicker(cleanupEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := a.auth.Cleanup(ctx); err != nil {
				log.Warn("cleanup failed", "err", err)
			}
			if err := a.telemetry.Sweep(ctx); err != nil {
				log.Warn("cleanup failed", "err", err)
			}
		}
	}
}

// publicSettings are the settings logged at start: all but the secrets.
func publicSettings(cfg *config.Config) map[string]string {
	out := map[string]string{}
	for _, s := range cfg.Settings() {
		if !s.Secret {
			out[s.Env] = s.Value.String()
		}
	}
	return out
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level)) // checked by config.Check
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l}))
}
