package app

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/chromium"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/libreoffice"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/safeinput"
)

// The services' options, built from the settings: config only reads them.

// Check reports the settings that the services refuse (config.Check has
// refused those that settings alone tell), so that every command refuses
// them before it opens anything.
func Check(cfg *config.Config) error {
	if _, err := signLevel(cfg); err != nil {
		return err
	}
	if !auth.ValidKeyPrefix(cfg.KeyPrefix) {
		return fmt.Errorf("QUIRE_KEY_PREFIX %q: want 1 to 16 lowercase letters or digits", cfg.KeyPrefix)
	}
	return nil
}

// convertOptions are the options of the conversion engine.
func convertOptions(cfg *config.Config, log *slog.Logger) libreoffice.Options {
	return libreoffice.Options{PoolOptions: enginePool(cfg, log, cfg.ConvertWorkers, cfg.ConvertMaxJobs, int64(cfg.ConvertMaxMemory), int64(cfg.ConvertMaxWorkerRSS)),
		MaxInputBytes: int64(cfg.ConvertMaxInputBytes), MaxExpandedBytes: int64(cfg.ConvertMaxExpanded),
		MaxCompressionRatio: cfg.ConvertMaxRatio, MaxNesting: cfg.ConvertMaxNesting, MaxTableCells: cfg.ConvertMaxTableCells, Dir: cfg.ConvertDir, ProgramDir: cfg.LibreOfficeDir}
}

// chromiumOptions are the options of the Chromium engine; its jobs
// have the conversion's timeout and queue.
func chromiumOptions(cfg *config.Config, log *slog.Logger) chromium.Options {
	return chromium.Options{PoolOptions: enginePool(cfg, log, cfg.ChromiumWorkers, cfg.ChromiumMaxJobs, int64(cfg.ChromiumMaxMemory), int64(cfg.ChromiumMaxMemory)*2/3),
		Path: cfg.ChromiumPath, Text: safeinput.TextLimits{MaxNesting: cfg.ConvertMaxNesting, MaxTableCells: cfg.ConvertMaxTableCells},
		Page: chromium.PageLimits{ScriptTimeout: cfg.ChromiumScriptTimeout, MaxPages: cfg.ChromiumMaxPages}}
}

// enginePool is the pool settings of an engine: its own count, jobs and
// memory limits (during a job, and after one), and the queue and time
// limits that both engines share.
func enginePool(cfg *config.Config, log *slog.Logger, workers, maxJobs int, maxMemory, maxRSS int64) engine.PoolOptions {
	return engine.PoolOptions{Workers: workers, QueueLength: cfg.ConvertQueue, JobTimeout: cfg.ConvertJobTimeout, StartTimeout: cfg.ConvertStartTimeout,
		MaxJobsPerWorker: maxJobs, MaxWorkerMemory: maxMemory, MaxWorkerRSS: maxRSS, Logger: log}
}

// annotateLimits are the limits of filling a template.
func annotateLimits(cfg *config.Config) annotate.Limits {
	l := annotate.DefaultLimits
	l.Package.MaxTotalSize, l.Package.MaxPartSize = int64(cfg.AnnotateMaxExpandedBytes), int64(cfg.AnnotateMaxPartBytes)
	l.XML.MaxElements, l.XML.MaxDepth = cfg.AnnotateMaxXMLElements, cfg.AnnotateMaxXMLDepth
	l.MaxImageBytes, l.MaxImagePixels = int64(cfg.AnnotateMaxImageBytes), int64(cfg.AnnotateMaxImagePixels)
	return l
}

// signLevel is the PAdES level of signatures (QUIRE_SIGN_LEVEL): as set,
// or B-LT with a time-stamp authority and B-B without.
func signLevel(cfg *config.Config) (pdfsign.Level, error) {
	switch {
	case cfg.SignLevel != "":
		l, err := pdfsign.ParseLevel(cfg.SignLevel)
		if err != nil {
			return 0, fmt.Errorf("QUIRE_SIGN_LEVEL: %w", err)
		}
		if l > pdfsign.LevelB && cfg.TSAURL == "" {
			return 0, fmt.Errorf("QUIRE_SIGN_LEVEL %s needs a time-stamp authority: set QUIRE_TSA_URL", l)
		}
		return l, nil
	case cfg.TSAURL != "":
		return pdfsign.LevelLT, nil
	}
	return pdfsign.LevelB, nil
}

// keyLimits are the default per-key limits.
func keyLimits(cfg *config.Config) keylimit.Limits {
	return keylimit.Limits{Concurrent: cfg.KeyMaxConcurrent, Rate: cfg.KeyRate, Quota: int64(cfg.KeyQuota)}
}

// pdfToolsOptions are the limits of the PDF tools: each PDF within the
// reader's limits of signing, the job timeout of conversion.
func pdfToolsOptions(cfg *config.Config, log *slog.Logger) pdftools.Options {
	return pdftools.Options{Limits: pdfLimits(cfg), MaxBytes: int64(cfg.PDFMaxBytes), MaxFiles: cfg.PDFMaxFiles,
		RenderMaxPixels: int64(cfg.PDFRenderMaxPixels), Timeout: cfg.ConvertJobTimeout, Logger: log}
}

// operationTimeouts are the operations' own limits, which bound their
// jobs (plus the time to read and store them, at most QUIRE_JOB_TIMEOUT):
// a conversion gets QUIRE_CONVERT_JOB_TIMEOUT twice (the soffice fallback
// gets as long again), and so do the PDF tools (a render stops at it);
// signing downloads a document, may convert a DOCX to PDF/A, asks each
// time-stamp authority in turn for up to two time-stamps (B-LTA) and
// downloads revocation data; annotate downloads a template and images
// and converts the filled document.
func operationTimeouts(cfg *config.Config) map[string]time.Duration {
	convert := 2 * cfg.ConvertJobTimeout
	tsas := time.Duration(len(strings.FieldsFunc(cfg.TSAURL, func(r rune) bool { return r == ',' || r == ' ' })))
	return map[string]time.Duration{
		quire.OpConvert:  convert,
		quire.OpPDF:      convert,
		quire.OpSign:     2*cfg.FetchTimeout + convert + 2*tsas*cfg.TSATimeout,
		quire.OpAnnotate: 2*cfg.FetchTimeout + convert,
	}
}

// pdfLimits are the bounds of reading a PDF to sign or verify; the input
// size follows from QUIRE_SIGN_MAX_BYTES.
func pdfLimits(cfg *config.Config) pdf.Limits {
	return pdf.Limits{MaxObjects: cfg.PDFMaxObjects, MaxDecodedSize: int64(cfg.PDFMaxDecodedBytes), MaxNesting: cfg.PDFMaxNesting}
}
