// Package config holds quire's one configuration struct, read from
// command-line flags and QUIRE_* environment variables (a flag wins over
// its variable). It only reads settings: it imports no package of quire's
// services, and internal/app builds their options from it. The table of settings is the single source for the flags,
// the variables and the documentation test that keeps docs/configuration.md true.
package config

import (
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/quire-dev/quire/internal/units"
)

// Config is every setting of the program.
type Config struct {
	Addr            string
	DataDir         string
	DatabaseURL     string
	Secret          string
	AdminToken      string
	AdminSessionTTL time.Duration
	AdminLoginPerIP units.Rate
	PublicURL       string
	LogLevel        string
	ShutdownTimeout time.Duration
	ReadTimeout     time.Duration
	WriteTimeout    time.Duration
	MaxBodyBytes    Bytes
	TrustedProxies  Prefixes
	CORSOrigins     Origins
	// GotenbergAnonymous lets callers without an API key use Gotenberg's
	// routes: "loopback" from loopback addresses only; "" or "off": never.
	GotenbergAnonymous string
	TLSCert            string
	TLSKey             string

	SMTPURL     string
	SMTPCAFile  string
	MailFrom    string
	MailTimeout time.Duration

	KeyPrefix        string
	CodeTTL          time.Duration
	CodeMaxAttempts  int
	RegisterPerEmail units.Rate
	RegisterPerIP    units.Rate
	VerifyPerIP      units.Rate

	KeyMaxConcurrent int
	KeyRate          units.Rate
	KeyQuota         units.Quota

	CollectQueue         int
	CollectBatch         int
	CollectCommitTimeout time.Duration
	CollectGatherWait    time.Duration
	TelemetryRetention   time.Duration
	TelemetryMetadata    Bytes
	LicenseHostsRefresh  time.Duration

	SignMaxBytes       Bytes
	MemoryBudget       Bytes // QUIRE_SIGN_MEMORY_BUDGET: named when it bounded signing alone, it bounds every document operation
	MemoryKeyShare     int
	PDFMaxObjects      int
	PDFMaxDecodedBytes Bytes
	PDFMaxNesting      int
	PDFMaxBytes        Bytes
	PDFMaxFiles        int
	PDFRenderMaxPixels int
	SigningP12         string
	SigningP12Password string
	SigningCert        string
	SigningKey         string
	TSAURL             string
	TSATimeout         time.Duration
	PKCS11Module       string
	PKCS11Token        string
	PKCS11PIN          string
	PKCS11Key          string
	SigningOrg         string
	TSACAFile          string
	TrustRoots         string
	TrustTSA           string
	SignLevel          string
	FetchTimeout       time.Duration
	FetchMaxRedirects  int
	FetchAllowPrivate  bool

	JobWorkers      int
	JobMaxQueued    int
	JobTimeout      time.Duration
	JobRetention    time.Duration
	JobMaxWait      time.Duration
	JobLease        time.Duration
	WebhookSecret   string
	WebhookRetryFor time.Duration

	ConvertWorkers       int
	ConvertQueue         int
	ConvertJobTimeout    time.Duration
	ConvertStartTimeout  time.Duration
	ConvertMaxJobs       int
	ConvertMaxWorkerRSS  Bytes
	ConvertMaxInputBytes Bytes
	ConvertMaxMemory     Bytes
	ConvertMaxExpanded   Bytes
	ConvertMaxRatio      int
	ConvertMaxNesting    int
	ConvertMaxTableCells int
	ConvertMaxFiles      int
	ConvertDir           string
	LibreOfficeDir       string

	ChromiumWorkers       int
	ChromiumPath          string
	ChromiumMaxMemory     Bytes
	ChromiumMaxJobs       int
	ChromiumScriptTimeout time.Duration
	ChromiumMaxPages      int

	AnnotateMaxBytes         Bytes
	AnnotateMaxExpandedBytes Bytes
	AnnotateMaxPartBytes     Bytes
	AnnotateMaxXMLElements   int
	AnnotateMaxXMLDepth      int
	AnnotateMaxImageBytes    Bytes
	AnnotateMaxImagePixels   int
}

// Setting describes one configuration value.
type Setting struct {
	Flag, Env, Usage string
	Value            flag.Value
	Secret           bool // never printed
}

// Settings returns the table of settings bound to the fields of c, with
// c's current values as defaults.
func (c *Config) Settings() []Setting {
	return []Setting{
		{"addr", "QUIRE_ADDR", "address the HTTP server listens on", (*stringValue)(&c.Addr), false},
		{"data-dir", "QUIRE_DATA_DIR", "directory for the SQLite database, the server secret and the dev mail outbox (created 0700)", (*stringValue)(&c.DataDir), false},
		{"database-url", "QUIRE_DATABASE_URL", "empty: SQLite file quire.db in the data dir; postgres://user:pass@host/db: PostgreSQL; sqlite:PATH: another SQLite file", (*secretValue)(&c.DatabaseURL), true},
		{"secret", "QUIRE_SECRET", "server secret for keyed hashes of codes (64 hex digits); empty: generated on first start into DATA_DIR/secret. Instances sharing a database must share it", (*secretValue)(&c.Secret), true},
		{"admin-token", "QUIRE_ADMIN_TOKEN", "bearer token for operator endpoints (usage reports); empty disables them", (*secretValue)(&c.AdminToken), true},
		{"admin-session-ttl", "QUIRE_ADMIN_SESSION_TTL", "how long a login to the /admin dashboard lasts", (*durationValue)(&c.AdminSessionTTL), false},
		{"rate-admin-login-ip", "QUIRE_RATE_ADMIN_LOGIN_IP", "/admin login attempts per client IP address, right or wrong", &c.AdminLoginPerIP, false},
		{"public-url", "QUIRE_PUBLIC_URL", "absolute base URL of the service as clients reach it (https://docs.example.com); printed on certificate pages and in links; empty: taken from each request", (*stringValue)(&c.PublicURL), false},
		{"log-level", "QUIRE_LOG_LEVEL", "debug, info, warn or error", (*stringValue)(&c.LogLevel), false},
		{"shutdown-timeout", "QUIRE_SHUTDOWN_TIMEOUT", "on SIGTERM, how long in-flight requests may take to finish", (*durationValue)(&c.ShutdownTimeout), false},
		{"read-timeout", "QUIRE_READ_TIMEOUT", "longest time to read a request, body included; a body that stops arriving gets 400", (*durationValue)(&c.ReadTimeout), false},
		{"write-timeout", "QUIRE_WRITE_TIMEOUT", "longest time to write an answer, from its first byte (the work before it does not count); a client that does not read it is cut off", (*durationValue)(&c.WriteTimeout), false},
		{"max-body-bytes", "QUIRE_MAX_BODY_BYTES", "largest request body of endpoints without a limit of their own (larger: 413)", &c.MaxBodyBytes, false},
		{"trusted-proxies", "QUIRE_TRUSTED_PROXIES", "comma-separated CIDRs of reverse proxies whose X-Forwarded-For is believed for the client address", &c.TrustedProxies, false},
		{"gotenberg-anonymous", "QUIRE_GOTENBERG_ANONYMOUS", "loopback: callers without an API key may use Gotenberg's routes (/forms/...) from loopback addresses, without per-key limits or metering; off: a key is required there as on /v1", (*stringValue)(&c.GotenbergAnonymous), false},
		{"cors-origins", "QUIRE_CORS_ORIGINS", "web origins whose pages may call the API (comma-separated, e.g. https://app.example.com); * is any origin. Credentials are never allowed", &c.CORSOrigins, false},
		{"tls-cert", "QUIRE_TLS_CERT", "PEM file of the HTTPS certificate and its chain (with QUIRE_TLS_KEY); empty: plain HTTP, e.g. behind a TLS-terminating proxy", (*stringValue)(&c.TLSCert), false},
		{"tls-key", "QUIRE_TLS_KEY", "PEM file of the HTTPS private key (with QUIRE_TLS_CERT)", (*stringValue)(&c.TLSKey), false},
		{"smtp-url", "QUIRE_SMTP_URL", "smtp://user:pass@host:587 (STARTTLS required; ?starttls=opportunistic|none), smtps://user:pass@host:465 (implicit TLS); empty: dev outbox in DATA_DIR/outbox", (*secretValue)(&c.SMTPURL), true},
		{"smtp-ca-file", "QUIRE_SMTP_CA_FILE", "PEM file of an extra CA to trust for the mail relay's certificate", (*stringValue)(&c.SMTPCAFile), false},
		{"mail-from", "QUIRE_MAIL_FROM", "From address of the mail quire sends", (*stringValue)(&c.MailFrom), false},
		{"mail-timeout", "QUIRE_MAIL_TIMEOUT", "longest time to hand one message to the mail relay", (*durationValue)(&c.MailTimeout), false},
		{"key-prefix", "QUIRE_KEY_PREFIX", "prefix of new API keys, before the underscore (keys issued under an earlier prefix keep working)", (*stringValue)(&c.KeyPrefix), false},
		{"code-ttl", "QUIRE_CODE_TTL", "how long an e-mailed code stays valid", (*durationValue)(&c.CodeTTL), false},
		{"code-max-attempts", "QUIRE_CODE_MAX_ATTEMPTS", "wrong attempts after which a code is dead and the caller must register again", (*intValue)(&c.CodeMaxAttempts), false},
		{"rate-register-email", "QUIRE_RATE_REGISTER_EMAIL", "register calls per e-mail address (N/DURATION, 0 = unlimited)", &c.RegisterPerEmail, false},
		{"rate-register-ip", "QUIRE_RATE_REGISTER_IP", "register calls per client IP address", &c.RegisterPerIP, false},
		{"rate-verify-ip", "QUIRE_RATE_VERIFY_IP", "verify calls per client IP address", &c.VerifyPerIP, false},
		{"collect-queue", "QUIRE_COLLECT_QUEUE", "telemetry requests waiting for a database commit; beyond it /v1/collect answers 503 with Retry-After", (*intValue)(&c.CollectQueue), false},
		{"collect-batch", "QUIRE_COLLECT_BATCH", "most telemetry events committed in one transaction (group commit)", (*intValue)(&c.CollectBatch), false},
		{"collect-commit-timeout", "QUIRE_COLLECT_COMMIT_TIMEOUT", "longest time one telemetry commit may take before its requests get 503", (*durationValue)(&c.CollectCommitTimeout), false},
		{"collect-gather-wait", "QUIRE_COLLECT_GATHER_WAIT", "how long a telemetry commit waits, at a time, for the clients the last one answered to send again (up to 4 times, while they keep arriving; 0: never waits)", (*durationValue)(&c.CollectGatherWait), false},
		{"telemetry-retention", "QUIRE_TELEMETRY_RETENTION", "how long raw telemetry events are kept for billing disputes; per-document counts are kept forever", (*durationValue)(&c.TelemetryRetention), false},
		{"pdf-max-bytes", "QUIRE_PDF_MAX_BYTES", "largest request of the PDF tools (POST /v1/pdf/*), all its files together (beyond: 413); each PDF is read within the QUIRE_PDF_MAX_* limits of signing", &c.PDFMaxBytes, false},
		{"pdf-max-files", "QUIRE_PDF_MAX_FILES", "most files in one request of the PDF tools (more: 400)", (*intValue)(&c.PDFMaxFiles), false},
		{"pdf-render-max-pixels", "QUIRE_PDF_RENDER_MAX_PIXELS", "most pixels of a page rendered by POST /v1/pdf/render (more: 400, naming the highest dpi that fits); the render also stops at QUIRE_CONVERT_JOB_TIMEOUT", (*intValue)(&c.PDFRenderMaxPixels), false},
		{"sign-max-bytes", "QUIRE_SIGN_MAX_BYTES", "largest document to sign, inline (before base64) or downloaded; the request body may be 4/3 of it plus 2 MiB", &c.SignMaxBytes, false},
		{"sign-memory-budget", "QUIRE_SIGN_MEMORY_BUDGET", "memory that the document operations (/v1/sign, /v1/verify, /v1/annotate, /v1/convert) may hold at once: each is charged 8 times its body before reading it, then what its input's shape will cost (docs/configuration.md, Memory); beyond it 503 ENGINE_UNAVAILABLE with Retry-After", &c.MemoryBudget, false},
		{"memory-key-share", "QUIRE_MEMORY_KEY_SHARE", "percent (1-100) of QUIRE_SIGN_MEMORY_BUDGET that the operations of one API key may hold at once, so that one key's flood leaves room for the others; beyond it 503 ENGINE_UNAVAILABLE with Retry-After", (*intValue)(&c.MemoryKeyShare), false},
		{"pdf-max-objects", "QUIRE_PDF_MAX_OBJECTS", "most objects (cross-reference entries, pages, form fields) read from a PDF to sign or verify; object numbers must stay below it (beyond: 422)", (*intValue)(&c.PDFMaxObjects), false},
		{"pdf-max-decoded-bytes", "QUIRE_PDF_MAX_DECODED_BYTES", "largest decompressed stream of a PDF to sign or verify; a document may decompress at most 4 times this, and 8 MiB plus 8 times its size (beyond: 422)", &c.PDFMaxDecodedBytes, false},
		{"pdf-max-nesting", "QUIRE_PDF_MAX_NESTING", "deepest nesting of arrays and dictionaries, of the page tree and of form fields in a PDF to sign or verify, and longest chain of references (deeper: 422)", (*intValue)(&c.PDFMaxNesting), false},
		{"signing-p12", "QUIRE_SIGNING_P12", "PKCS#12 file with the signing key and certificate chain; empty (and no PEM files): a CA and signing certificate generated on first start in DATA_DIR/signing", (*stringValue)(&c.SigningP12), false},
		{"signing-p12-password", "QUIRE_SIGNING_P12_PASSWORD", "password of QUIRE_SIGNING_P12", (*secretValue)(&c.SigningP12Password), true},
		{"signing-cert", "QUIRE_SIGNING_CERT", "PEM file with the signing certificate followed by its chain (with QUIRE_SIGNING_KEY)", (*stringValue)(&c.SigningCert), false},
		{"signing-key", "QUIRE_SIGNING_KEY", "PEM file with the signing private key (PKCS#8, EC or RSA)", (*stringValue)(&c.SigningKey), false},
		{"signing-org", "QUIRE_SIGNING_ORG", "organisation operating the service (at most 64 characters): the O= of the signing certificates generated on first start, and named on certificate pages; empty: quire in generated certificates, not named on pages", (*stringValue)(&c.SigningOrg), false},
		{"tsa-url", "QUIRE_TSA_URL", "RFC 3161 time-stamp authorities, separated by commas or spaces, asked in order until one answers (none answers: 503 ENGINE_UNAVAILABLE); set: signatures get a time-stamp and long-term validation data (PAdES B-LT, see QUIRE_SIGN_LEVEL)", (*stringValue)(&c.TSAURL), false},
		{"tsa-timeout", "QUIRE_TSA_TIMEOUT", "longest wait for one time-stamp authority before the next one is asked", (*durationValue)(&c.TSATimeout), false},
		{"signing-pkcs11-module", "QUIRE_SIGNING_PKCS11_MODULE", "PKCS#11 module (shared library) of the token holding the signing key, e.g. /usr/lib/softhsm/libsofthsm2.so; set: the key is used in the token and never leaves it", (*stringValue)(&c.PKCS11Module), false},
		{"signing-pkcs11-token", "QUIRE_SIGNING_PKCS11_TOKEN", "label of the PKCS#11 token holding the signing key", (*stringValue)(&c.PKCS11Token), false},
		{"signing-pkcs11-pin", "QUIRE_SIGNING_PKCS11_PIN", "user PIN of the PKCS#11 token", (*secretValue)(&c.PKCS11PIN), true},
		{"signing-pkcs11-key", "QUIRE_SIGNING_PKCS11_KEY", "label of the signing key pair in the token; its certificate is the token's (same label or CKA_ID) or QUIRE_SIGNING_CERT; with neither, the key pair and a CA (label KEY-ca) are generated in the token on first start and the certificates stored there", (*stringValue)(&c.PKCS11Key), false},
		{"trust-roots", "QUIRE_TRUST_ROOTS", "CA certificates whose signers /v1/verify trusts besides quire's own CA: PEM files or directories of them, separated by commas; empty: quire's CA only", (*stringValue)(&c.TrustRoots), false},
		{"trust-tsa", "QUIRE_TRUST_TSA", "roots of the time-stamp authorities whose time-stamps /v1/verify relies on besides those of QUIRE_TSA_URL (learned from their tokens): PEM files or directories, separated by commas; any other time-stamp is reported and proves nothing", (*stringValue)(&c.TrustTSA), false},
		{"tsa-ca-file", "QUIRE_TSA_CA_FILE", "deprecated: a PEM file read as one more entry of QUIRE_TRUST_TSA (the system's roots are no longer trusted for time-stamps)", (*stringValue)(&c.TSACAFile), false},
		{"sign-level", "QUIRE_SIGN_LEVEL", "PAdES level of signatures: B-B, B-T (time-stamp), B-LT (and a DSS with certificates and CRLs), B-LTA (and a document time-stamp); above B-B needs QUIRE_TSA_URL; empty: B-LT with a TSA, B-B without", (*stringValue)(&c.SignLevel), false},
		{"fetch-timeout", "QUIRE_FETCH_TIMEOUT", "longest download of a document.url, body included", (*durationValue)(&c.FetchTimeout), false},
		{"fetch-max-redirects", "QUIRE_FETCH_MAX_REDIRECTS", "redirects followed when downloading a document.url", (*intValue)(&c.FetchMaxRedirects), false},
		{"fetch-allow-private", "QUIRE_FETCH_ALLOW_PRIVATE", "development only: let document.url and webhook addresses reach loopback and private addresses", (*boolValue)(&c.FetchAllowPrivate), false},
		{"job-workers", "QUIRE_JOB_WORKERS", "jobs (Prefer: respond-async) of this instance on the engines at once (it runs four times as many, reading their requests and storing their answers meanwhile); 0: as many as conversion workers; negative: none (it still accepts and answers jobs)", (*intValue)(&c.JobWorkers), false},
		{"job-max-queued", "QUIRE_JOB_MAX_QUEUED", "jobs of one API key not yet ended (queued or running) at once, across instances, exactly (more: 429 RATE_LIMIT_ERROR); a key's first waiting jobs also run before another key's flood; 0: no limit", (*intValue)(&c.JobMaxQueued), false},
		{"job-timeout", "QUIRE_JOB_TIMEOUT", "longest any job may run; a job's own limit is its operation's (QUIRE_CONVERT_JOB_TIMEOUT for a conversion...) plus 1 m to read, wait for an engine and store, at most this", (*durationValue)(&c.JobTimeout), false},
		{"job-lease", "QUIRE_JOB_LEASE", "PostgreSQL: how long the jobs an instance runs stay its own without renewing its lease (renewed 3 times as often); another instance runs again the jobs of an expired lease within a third of it; also the lease under which requests in progress hold their keys' quotas, on SQLite too, and on PostgreSQL count against their keys' requests at once", (*durationValue)(&c.JobLease), false},
		{"job-retention", "QUIRE_JOB_RETENTION", "how long an ended job and its result are kept", (*durationValue)(&c.JobRetention), false},
		{"job-max-wait", "QUIRE_JOB_MAX_WAIT", "how long after its submission a job may still be sent back to wait by its key's limits or a full or disabled engine (429, 503); past it the job ends failed with that answer; 0: no limit", (*durationValue)(&c.JobMaxWait), false},
		{"webhook-secret", "QUIRE_WEBHOOK_SECRET", "key of the webhooks' signatures, whsec_ and base64 (at least 24 bytes); unset: generated into the data directory's webhook-secret (set it when several instances share a database)", (*secretValue)(&c.WebhookSecret), true},
		{"webhook-retry-for", "QUIRE_WEBHOOK_RETRY_FOR", "how long a webhook is retried, with exponential backoff and jitter, until its receiver answers 2xx", (*durationValue)(&c.WebhookRetryFor), false},
		{"convert-workers", "QUIRE_CONVERT_WORKERS", "LibreOffice worker processes of the conversion engine (about 200 MB each); 0: one per CPU core; negative: conversion disabled", (*intValue)(&c.ConvertWorkers), false},
		{"convert-queue", "QUIRE_CONVERT_QUEUE", "conversions of one API key waiting for a worker, LibreOffice's or a browser (keys are served in turn, and while more than one key is active, one that has a job waiting or running or ended one within the last second, each holds at most its share of the workers); beyond it 503 ENGINE_UNAVAILABLE with Retry-After; 0: 4 per worker", (*intValue)(&c.ConvertQueue), false},
		{"convert-job-timeout", "QUIRE_CONVERT_JOB_TIMEOUT", "longest conversion; past it the worker is killed and the request gets 422 (the soffice fallback for documents LibreOfficeKit refuses gets as long again)", (*durationValue)(&c.ConvertJobTimeout), false},
		{"convert-start-timeout", "QUIRE_CONVERT_START_TIMEOUT", "longest start and warm-up of a worker", (*durationValue)(&c.ConvertStartTimeout), false},
		{"convert-max-jobs-per-worker", "QUIRE_CONVERT_MAX_JOBS_PER_WORKER", "a worker is replaced after that many conversions (bounds LibreOffice's leaks); negative: never", (*intValue)(&c.ConvertMaxJobs), false},
		{"convert-max-worker-rss", "QUIRE_CONVERT_MAX_WORKER_RSS", "a worker whose memory exceeds it after a conversion is replaced", &c.ConvertMaxWorkerRSS, false},
		{"convert-max-input-bytes", "QUIRE_CONVERT_MAX_INPUT_BYTES", "largest document to convert (larger: 413)", &c.ConvertMaxInputBytes, false},
		{"convert-max-worker-memory", "QUIRE_CONVERT_MAX_WORKER_MEMORY", "a conversion that grows its worker's resident memory by more is stopped (the worker killed and replaced), and the request gets 422", &c.ConvertMaxMemory, false},
		{"convert-max-expanded-bytes", "QUIRE_CONVERT_MAX_EXPANDED_BYTES", "most a DOCX, XLSX, PPTX, ODT, ODS or ODP package, with the packages nested in it, may inflate to (more: 422)", &c.ConvertMaxExpanded, false},
		{"convert-max-compression-ratio", "QUIRE_CONVERT_MAX_COMPRESSION_RATIO", "highest ratio of inflated to compressed size of a part of such a package larger than 1 MiB (more: 422; real documents stay under 35); negative: no limit", (*intValue)(&c.ConvertMaxRatio), false},
		{"convert-max-nesting", "QUIRE_CONVERT_MAX_NESTING", "deepest nesting of block quotes and list items in Markdown, and of elements in HTML, to convert (deeper: 422, before any engine); negative: no limit", (*intValue)(&c.ConvertMaxNesting), false},
		{"convert-max-table-cells", "QUIRE_CONVERT_MAX_TABLE_CELLS", "most cells of one Markdown table to convert (more: 422, before any engine); negative: no limit", (*intValue)(&c.ConvertMaxTableCells), false},
		{"key-max-concurrent", "QUIRE_KEY_MAX_CONCURRENT", "requests of one API key in progress at once on sign, verify, convert and annotate (more: 429 RATE_LIMIT_ERROR), exact across the instances sharing a PostgreSQL database (SQLite: one instance, counted in memory); 0: no limit; quire keys limit overrides it per key", (*intValue)(&c.KeyMaxConcurrent), false},
		{"key-rate", "QUIRE_KEY_RATE", "requests of one API key per window on sign, verify, convert and annotate, N/DURATION (600/1m), shared exactly by the instances on one database; 0: no limit", &c.KeyRate, false},
		{"key-quota", "QUIRE_KEY_QUOTA", "documents one API key may process per calendar month (UTC), N/month (10000/month), counted by the metering, exact across the instances sharing a database; 0: no quota", &c.KeyQuota, false},
		{"convert-max-files", "QUIRE_CONVERT_MAX_FILES", "most files in one POST /v1/convert (more: 400); together they stay within the request's body limit (QUIRE_CONVERT_MAX_INPUT_BYTES plus 1 MiB)", (*intValue)(&c.ConvertMaxFiles), false},
		{"chromium-workers", "QUIRE_CHROMIUM_WORKERS", "headless Chromium browsers printing HTML and Markdown to PDF (about 200 MB each); 0: one per CPU core; negative: off, HTML and Markdown go to LibreOffice", (*intValue)(&c.ChromiumWorkers), false},
		{"chromium-path", "QUIRE_CHROMIUM_PATH", "the Chromium program; empty: Debian's chromium-headless-shell (/usr/bin/chromium-headless-shell) when it is installed, else /usr/bin/chromium", (*stringValue)(&c.ChromiumPath), false},
		{"chromium-max-memory", "QUIRE_CHROMIUM_MAX_MEMORY", "a page whose print grows its browser's processes' private resident memory by more is stopped (the browser killed and replaced), and the request gets 422; a browser that holds more than two thirds of it after a page is replaced", &c.ChromiumMaxMemory, false},
		{"chromium-max-jobs", "QUIRE_CHROMIUM_MAX_JOBS", "a browser is replaced after printing that many pages; negative: never", (*intValue)(&c.ChromiumMaxJobs), false},
		{"chromium-script-timeout", "QUIRE_CHROMIUM_SCRIPT_TIMEOUT", "how long a page with javascript=true may take to load (its load event) and, on Gotenberg's routes, to come to what it waits for (waitDelay must be shorter), apart from the job's timeout; then its scripts are stopped and it is printed; past it 422", (*durationValue)(&c.ChromiumScriptTimeout), false},
		{"chromium-max-pages", "QUIRE_CHROMIUM_MAX_PAGES", "the most pages of an HTML or Markdown print; more: 422 (the browser prints no page past it)", (*intValue)(&c.ChromiumMaxPages), false},
		{"convert-dir", "QUIRE_CONVERT_DIR", "directory of the workers' LibreOffice profiles and temporary files; empty: a new temporary directory, removed at exit", (*stringValue)(&c.ConvertDir), false},
		{"libreoffice-dir", "QUIRE_LIBREOFFICE_DIR", "LibreOffice's program directory (the one holding libmergedlo.so)", (*stringValue)(&c.LibreOfficeDir), false},
		{"annotate-max-bytes", "QUIRE_ANNOTATE_MAX_BYTES", "largest DOCX template to fill, inline (before base64) or downloaded", &c.AnnotateMaxBytes, false},
		{"annotate-max-expanded-bytes", "QUIRE_ANNOTATE_MAX_EXPANDED_BYTES", "most bytes a template's ZIP entries may inflate to, together (larger: 413)", &c.AnnotateMaxExpandedBytes, false},
		{"annotate-max-part-bytes", "QUIRE_ANNOTATE_MAX_PART_BYTES", "most bytes one part of a template read by annotate may inflate to (larger: 413)", &c.AnnotateMaxPartBytes, false},
		{"annotate-max-xml-elements", "QUIRE_ANNOTATE_MAX_XML_ELEMENTS", "most XML elements in one part of a template (more: 413)", (*intValue)(&c.AnnotateMaxXMLElements), false},
		{"annotate-max-xml-depth", "QUIRE_ANNOTATE_MAX_XML_DEPTH", "deepest nesting of XML elements in a part of a template (deeper: 413)", (*intValue)(&c.AnnotateMaxXMLDepth), false},
		{"annotate-max-image-bytes", "QUIRE_ANNOTATE_MAX_IMAGE_BYTES", "largest image or signature of an annotate field, inline or downloaded", &c.AnnotateMaxImageBytes, false},
		{"annotate-max-image-pixels", "QUIRE_ANNOTATE_MAX_IMAGE_PIXELS", "most pixels (width x height) of an image or signature of an annotate field", (*intValue)(&c.AnnotateMaxImagePixels), false},
		{"telemetry-metadata-bytes", "QUIRE_TELEMETRY_METADATA_BYTES", "largest telemetry metadata object stored as sent; larger ones are stored as {\"truncated\":true}", &c.TelemetryMetadata, false},
		{"telemetry-hosts-refresh", "QUIRE_TELEMETRY_HOSTS_REFRESH", "how often each instance reads the licences' host lists again: a list changed on another instance applies to opens received this long (and the read) after the change", (*durationValue)(&c.LicenseHostsRefresh), false},
	}
}

// Default returns the embedded defaults.
func Default() Config {
	return Config{
		Addr:             ":8080",
		DataDir:          "./data",
		LogLevel:         "info",
		ShutdownTimeout:  30 * time.Second,
		ReadTimeout:      60 * time.Second,
		WriteTimeout:     2 * time.Minute,
		MaxBodyBytes:     1 << 20,
		CORSOrigins:      Origins{"*"},
		MailFrom:         "quire <no-reply@localhost>",
		MailTimeout:      30 * time.Second,
		KeyPrefix:        "sd",
		CodeTTL:          15 * time.Minute,
		CodeMaxAttempts:  5,
		RegisterPerEmail: units.Rate{N: 5, Per: time.Hour},
		RegisterPerIP:    units.Rate{N: 20, Per: time.Hour},
		AdminSessionTTL:  12 * time.Hour,
		AdminLoginPerIP:  units.Rate{N: 10, Per: 15 * time.Minute},
		VerifyPerIP:      units.Rate{N: 30, Per: 15 * time.Minute},
		KeyMaxConcurrent: 10,
		KeyRate:          units.Rate{N: 600, Per: time.Minute},

		CollectQueue:         4096,
		CollectBatch:         2000,
		CollectCommitTimeout: 10 * time.Second,
		CollectGatherWait:    0, // see docs/configuration.md: it pays only where fsync is slow
		TelemetryRetention:   90 * 24 * time.Hour,
		TelemetryMetadata:    2 << 10,
		LicenseHostsRefresh:  4 * time.Second,

		SignMaxBytes:       25 << 20,
		PDFMaxBytes:        50 << 20,
		PDFMaxFiles:        20,
		PDFRenderMaxPixels: 40_000_000,
		MemoryBudget:       1 << 30,
		MemoryKeyShare:     50,
		PDFMaxObjects:      1_000_000, // pdf.DefaultLimits (internal/app checks they agree)
		PDFMaxDecodedBytes: 64 << 20,
		PDFMaxNesting:      64,
		FetchTimeout:       30 * time.Second,
		TSATimeout:         10 * time.Second,
		PKCS11Key:          "quire-signing",
		FetchMaxRedirects:  5,

		JobMaxQueued:    1000,
		JobTimeout:      10 * time.Minute,
		JobRetention:    24 * time.Hour,
		JobMaxWait:      24 * time.Hour,
		JobLease:        10 * time.Second,
		WebhookRetryFor: 24 * time.Hour,

		ConvertJobTimeout:     60 * time.Second,
		ConvertStartTimeout:   60 * time.Second,
		ConvertMaxJobs:        200,
		ConvertMaxWorkerRSS:   1 << 30,
		ConvertMaxInputBytes:  25 << 20,
		ConvertMaxMemory:      1536 << 20,
		ConvertMaxExpanded:    256 << 20,
		ConvertMaxRatio:       200,
		ConvertMaxNesting:     200,     // safeinput.DefaultMaxNesting
		ConvertMaxTableCells:  100_000, // safeinput.DefaultMaxTableCells
		ConvertMaxFiles:       10,
		LibreOfficeDir:        "/usr/lib/libreoffice/program", // libreoffice.DefaultProgramDir
		ChromiumMaxMemory:     1 << 30,
		ChromiumMaxJobs:       200,
		ChromiumScriptTimeout: 10 * time.Second, // chromium.DefaultScriptTimeout
		ChromiumMaxPages:      2000,             // chromium.DefaultMaxPages

		AnnotateMaxBytes:         25 << 20,
		AnnotateMaxExpandedBytes: 256 << 20, // annotate.DefaultLimits
		AnnotateMaxPartBytes:     64 << 20,
		AnnotateMaxXMLElements:   2_000_000,
		AnnotateMaxXMLDepth:      256,
		AnnotateMaxImageBytes:    10 << 20,
		AnnotateMaxImagePixels:   40_000_000,
	}
}

// Bind defines the settings on fs, with defaults from the environment
// (looked up with getenv) over the embedded defaults. It returns c, whose
// fields fs.Parse fills in.
func Bind(fs *flag.FlagSet, getenv func(string) string) (*Config, error) {
	c := Default()
	for _, s := range c.Settings() {
		if v := getenv(s.Env); v != "" {
			if err := s.Value.Set(v); err != nil {
				return nil, fmt.Errorf("%s: %w", s.Env, err)
			}
		}
		fs.Var(s.Value, s.Flag, s.Usage+" ($"+s.Env+")")
	}
	return &c, nil
}

// Parse binds the settings to fs, beside any flags of the command's own,
// parses args over the environment, checks the result, and returns the
// positional arguments. Flags may come before or after them
// (quire sign in.pdf -o out.pdf).
func Parse(fs *flag.FlagSet, args []string) (*Config, []string, error) {
	c, err := Bind(fs, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional, args = append(positional, fs.Arg(0)), fs.Args()[1:]
	}
	return c, positional, c.Check()
}

// Check reports settings that cannot work together or at all, as far as
// settings alone tell (app.Check asks the services about the others).
func (c *Config) Check() error {
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("QUIRE_LOG_LEVEL %q: want debug, info, warn or error", c.LogLevel)
	}
	switch c.GotenbergAnonymous {
	case "", "off", "loopback":
	default:
		return fmt.Errorf("QUIRE_GOTENBERG_ANONYMOUS %q: want off or loopback", c.GotenbergAnonymous)
	}
	if c.CodeMaxAttempts < 1 {
		return fmt.Errorf("QUIRE_CODE_MAX_ATTEMPTS must be at least 1")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"QUIRE_SHUTDOWN_TIMEOUT", c.ShutdownTimeout}, {"QUIRE_READ_TIMEOUT", c.ReadTimeout}, {"QUIRE_WRITE_TIMEOUT", c.WriteTimeout}, {"QUIRE_MAIL_TIMEOUT", c.MailTimeout},
		{"QUIRE_COLLECT_COMMIT_TIMEOUT", c.CollectCommitTimeout}, {"QUIRE_TELEMETRY_RETENTION", c.TelemetryRetention}, {"QUIRE_TELEMETRY_HOSTS_REFRESH", c.LicenseHostsRefresh},
		{"QUIRE_FETCH_TIMEOUT", c.FetchTimeout}, {"QUIRE_TSA_TIMEOUT", c.TSATimeout}, {"QUIRE_ADMIN_SESSION_TTL", c.AdminSessionTTL}, {"QUIRE_CONVERT_JOB_TIMEOUT", c.ConvertJobTimeout}, {"QUIRE_CONVERT_START_TIMEOUT", c.ConvertStartTimeout},
		{"QUIRE_JOB_TIMEOUT", c.JobTimeout}, {"QUIRE_JOB_RETENTION", c.JobRetention}, {"QUIRE_WEBHOOK_RETRY_FOR", c.WebhookRetryFor},
		{"QUIRE_CHROMIUM_SCRIPT_TIMEOUT", c.ChromiumScriptTimeout}} {
		if d.v <= 0 {
			return fmt.Errorf("%s must be longer than 0", d.name)
		}
	}
	if c.CodeTTL < time.Minute {
		return fmt.Errorf("QUIRE_CODE_TTL must be at least 1m")
	}
	if c.JobLease < time.Second {
		// Renewed three times per lease, each renewal given a third of it.
		return fmt.Errorf("QUIRE_JOB_LEASE must be at least 1s")
	}
	if c.MemoryKeyShare < 1 || c.MemoryKeyShare > 100 {
		return fmt.Errorf("QUIRE_MEMORY_KEY_SHARE must be a percentage from 1 to 100, not %d", c.MemoryKeyShare)
	}
	if c.CollectQueue < 1 || c.CollectBatch < 1 {
		return fmt.Errorf("QUIRE_COLLECT_QUEUE and QUIRE_COLLECT_BATCH must be at least 1")
	}
	if c.CollectGatherWait < 0 || c.CollectGatherWait > time.Second {
		return fmt.Errorf("QUIRE_COLLECT_GATHER_WAIT must be from 0 to 1s")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return fmt.Errorf("QUIRE_TLS_CERT and QUIRE_TLS_KEY go together")
	}
	if err := c.checkToken(); err != nil {
		return err
	}
	if (c.SigningCert == "") != (c.SigningKey == "") && c.PKCS11Module == "" {
		return fmt.Errorf("QUIRE_SIGNING_CERT and QUIRE_SIGNING_KEY go together")
	}
	if c.SigningP12 != "" && c.SigningCert != "" {
		return fmt.Errorf("QUIRE_SIGNING_P12 and QUIRE_SIGNING_CERT exclude each other")
	}
	if n := utf8.RuneCountInString(c.SigningOrg); n > 64 || strings.IndexFunc(c.SigningOrg, unicode.IsControl) >= 0 {
		return fmt.Errorf("QUIRE_SIGNING_ORG must be at most 64 characters without control characters (an X.509 organisation name), not %d characters", n)
	}
	if u, err := url.Parse(c.PublicURL); c.PublicURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "") {
		return fmt.Errorf("QUIRE_PUBLIC_URL must be an absolute http(s) URL such as https://docs.example.com, not %q", c.PublicURL)
	}
	if c.KeyMaxConcurrent < 0 {
		return fmt.Errorf("QUIRE_KEY_MAX_CONCURRENT must be 0 (no limit) or more")
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		return fmt.Errorf("QUIRE_ADMIN_TOKEN must be at least 16 characters")
	}
	for _, l := range []struct {
		name string
		v    int64
	}{{"QUIRE_ANNOTATE_MAX_BYTES", int64(c.AnnotateMaxBytes)}, {"QUIRE_ANNOTATE_MAX_EXPANDED_BYTES", int64(c.AnnotateMaxExpandedBytes)},
		{"QUIRE_ANNOTATE_MAX_PART_BYTES", int64(c.AnnotateMaxPartBytes)}, {"QUIRE_ANNOTATE_MAX_XML_ELEMENTS", int64(c.AnnotateMaxXMLElements)},
		{"QUIRE_ANNOTATE_MAX_XML_DEPTH", int64(c.AnnotateMaxXMLDepth)}, {"QUIRE_ANNOTATE_MAX_IMAGE_BYTES", int64(c.AnnotateMaxImageBytes)},
		{"QUIRE_ANNOTATE_MAX_IMAGE_PIXELS", int64(c.AnnotateMaxImagePixels)},
		{"QUIRE_PDF_MAX_OBJECTS", int64(c.PDFMaxObjects)}, {"QUIRE_PDF_MAX_DECODED_BYTES", int64(c.PDFMaxDecodedBytes)},
		{"QUIRE_PDF_MAX_NESTING", int64(c.PDFMaxNesting)}, {"QUIRE_CONVERT_MAX_FILES", int64(c.ConvertMaxFiles)},
		{"QUIRE_PDF_MAX_BYTES", int64(c.PDFMaxBytes)}, {"QUIRE_PDF_MAX_FILES", int64(c.PDFMaxFiles)}, {"QUIRE_PDF_RENDER_MAX_PIXELS", int64(c.PDFRenderMaxPixels)},
		{"QUIRE_CHROMIUM_MAX_PAGES", int64(c.ChromiumMaxPages)}} {
		if l.v < 1 {
			return fmt.Errorf("%s must be at least 1", l.name)
		}
	}
	return nil
}

type stringValue string

func (s *stringValue) String() string     { return string(*s) }
func (s *stringValue) Set(v string) error { *s = stringValue(v); return nil }

// secretValue is a string setting whose value is never shown: not in the
// defaults of -h, not in usage messages after a bad flag.
type secretValue string

func (s *secretValue) String() string     { return "" }
func (s *secretValue) Set(v string) error { *s = secretValue(v); return nil }

type durationValue time.Duration

func (d *durationValue) String() string { return time.Duration(*d).String() }
func (d *durationValue) Set(v string) error {
	p, err := time.ParseDuration(v)
	if err != nil || p < 0 {
		return fmt.Errorf("%q is not a duration such as 30s or 15m", v)
	}
	*d = durationValue(p)
	return nil
}

type boolValue bool

func (b *boolValue) String() string { return strconv.FormatBool(bool(*b)) }
func (b *boolValue) Set(v string) error {
	p, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not true or false", v)
	}
	*b = boolValue(p)
	return nil
}

// IsBoolFlag lets --fetch-allow-private stand alone on the command line.
func (b *boolValue) IsBoolFlag() bool { return true }

type intValue int

func (i *intValue) String() string { return strconv.Itoa(int(*i)) }
func (i *intValue) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%q is not an integer", v)
	}
	*i = intValue(n)
	return nil
}

// Bytes is a size, written as a number of bytes with an optional KiB, MiB
// or GiB suffix.
type Bytes int64

func (b *Bytes) String() string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(*b) >= u.size && int64(*b)%u.size == 0 {
			return strconv.FormatInt(int64(*b)/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *Bytes) Set(v string) error {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(v, suffix) {
			v, mult = strings.TrimSuffix(v, suffix), m
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return fmt.Errorf("%q is not a size such as 1048576 or 1MiB", v)
	}
	*b = Bytes(n * mult)
	return nil
}

// Prefixes is a comma-separated list of CIDR prefixes.
type Prefixes []netip.Prefix

func (p *Prefixes) String() string {
	s := make([]string, len(*p))
	for i, x := range *p {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (p *Prefixes) Set(v string) error {
	*p = nil
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		x, err := netip.ParsePrefix(f)
		if err != nil {
			return fmt.Errorf("%q is not a CIDR prefix such as 10.0.0.0/8", f)
		}
		*p = append(*p, x.Masked())
	}
	return nil
}

// Origins are web origins (scheme://host[:port]); "*" stands for any.
type Origins []string

func (o *Origins) String() string { return strings.Join(*o, ",") }

func (o *Origins) Set(v string) error {
	*o = nil
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if f != "*" {
			u, err := url.Parse(f)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
				return fmt.Errorf("%q is not an origin such as https://app.example.com (or *)", f)
			}
			f = strings.ToLower(f)
		}
		*o = append(*o, f)
	}
	if len(*o) == 0 {
		return fmt.Errorf("no origin given (* allows any)")
	}
	return nil
}

// checkToken checks the settings of a PKCS#11 token: the token takes the
// place of the key files, and its certificate may come from
// QUIRE_SIGNING_CERT.
func (c *Config) checkToken() error {
	switch {
	case c.PKCS11Module == "":
		return nil
	case c.PKCS11Token == "" || c.PKCS11Key == "":
		return fmt.Errorf("QUIRE_SIGNING_PKCS11_MODULE needs QUIRE_SIGNING_PKCS11_TOKEN and QUIRE_SIGNING_PKCS11_KEY (labels)")
	case c.SigningP12 != "" || c.SigningKey != "":
		return fmt.Errorf("QUIRE_SIGNING_PKCS11_MODULE excludes QUIRE_SIGNING_P12 and QUIRE_SIGNING_KEY: the key is the token's")
	}
	return nil
}
