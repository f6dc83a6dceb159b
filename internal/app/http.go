package app

import (
	"context"

	"github.com/quire-dev/quire/internal/gotenberg"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/web"
)

// Handler is the HTTP API with the pages for people, over the services.
func (a *App) Handler(version string) *httpapi.Server {
	cfg := a.Config
	wd := web.Deps{Auth: a.Auth, Telemetry: a.Telemetry, Signing: a.Signing, Jobs: a.Jobs, Limiter: a.Limiter,
		Limits: a.Limits, APIUsage: a.DB, Logger: a.Log, Version: version}
	if a.Convert != nil { // a nil pool must stay a nil interface: the pages tell "off" by it
		wd.Convert = a.Convert
	}
	pages := web.New(wd, web.Options{PublicURL: cfg.PublicURL, AdminToken: cfg.AdminToken, SessionTTL: cfg.AdminSessionTTL, LoginRate: cfg.AdminLoginPerIP, Now: a.now})
	d := httpapi.Deps{Auth: a.Auth, Telemetry: a.Telemetry, Signing: a.Signing, Annotate: a.Annotate, PDFTools: a.PDFTools, Jobs: a.Jobs, DB: a.DB,
		Limits: a.Limits, Meter: a.Meter, APIUsage: a.DB, Logger: a.Log, Metrics: a.Metrics, Version: version, Pages: pages.Routes()}
	if cfg.MemoryBudget > 0 {
		d.Memory = memory.NewBudget(int64(cfg.MemoryBudget), cfg.MemoryKeyShare)
	}
	// A nil pool must stay a nil interface: the API tells "off" by it.
	if a.Convert != nil {
		d.Convert = a.Convert
	}
	if a.Chromium != nil {
		d.Chromium = a.Chromium
	}
	d.Conversion = a.Conversion
	d.Foreign = gotenberg.New(gotenberg.Deps{Conversion: a.Conversion, Convert: d.Convert, Chromium: d.Chromium, PDFTools: d.PDFTools,
		Fetch: a.fetcher(int64(cfg.ConvertMaxInputBytes)), Version: version},
		gotenberg.Options{Anonymous: cfg.GotenbergAnonymous, ConvertMaxBytes: int64(cfg.ConvertMaxInputBytes), ConvertMaxFiles: cfg.ConvertMaxFiles,
			MaxWait: min(cfg.ChromiumScriptTimeout, cfg.ConvertJobTimeout)}).Routes()
	return httpapi.New(d, httpapi.Options{MaxBodyBytes: int64(cfg.MaxBodyBytes), TrustedProxies: cfg.TrustedProxies, AdminToken: cfg.AdminToken,
		ConvertMaxBytes: int64(cfg.ConvertMaxInputBytes), ConvertMaxFiles: cfg.ConvertMaxFiles,
		ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout, CORSOrigins: cfg.CORSOrigins})
}

// StartJobs starts running the queued jobs through api, the server that
// answers them synchronously; Close stops them.
func (a *App) StartJobs(ctx context.Context, api *httpapi.Server) error {
	if err := a.Jobs.Start(ctx, api.RunJob); err != nil {
		return err
	}
	a.jobsOn = true
	return nil
}
