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

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/libc"
	"github.com/quire-dev/quire/internal/memory"
)

// cleanupEvery is how often expired codes and rate-limit windows are swept.
const cleanupEvery = 10 * time.Minute

// runServe runs the HTTP service until SIGTERM or SIGINT, then lets the
// requests in flight finish (up to QUIRE_SHUTDOWN_TIMEOUT) and exits 0.
func runServe(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, pos, err := parseArgs(fs, "usage: quire serve   (runs the HTTP service)", args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
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
	memory.LimitRuntime(int64(cfg.MemoryBudget))
	if err := libc.KeepFreed(); err != nil {
		return err
	}
	a, err := app.Open(ctx, cfg, app.Options{Logger: log})
	if err != nil {
		return err
	}
	// Stop in dependency order, under the shutdown deadline once it is set:
	// the HTTP server (below), then the engines, telemetry still queued and
	// the database (App.Close). The deadline is a time, not the HTTP
	// shutdown's context: that one is cancelled when serve returns, and
	// idle workers would then be killed as if late.
	var deadline time.Time
	defer func() {
		if deadline.IsZero() { // Serve failed: no deadline was set
			deadline = time.Now().Add(cfg.ShutdownTimeout)
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			log.Warn("stop", "err", err)
		}
	}()
	api := a.Handler(version)
	srv := api.HTTPServer(slog.NewLogLogger(log.Handler(), slog.LevelWarn))
	if srv.TLSConfig, err = tlsConfig(cfg); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return err
	}
	if err := a.StartJobs(ctx, api); err != nil {
		return err
	}
	go sweep(ctx, a, log)
	log.Info("quire listening", "addr", ln.Addr().String(), "tls", srv.TLSConfig != nil, "version", version, "database", a.DB.Backend(),
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

// sweep deletes expired codes, old rate-limit windows and raw telemetry
// events past their retention, now and then.
func sweep(ctx context.Context, a *app.App, log *slog.Logger) {
	t := time.NewTicker(cleanupEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := a.Sweep(ctx); err != nil {
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
