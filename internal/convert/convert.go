// Package convert turns office documents into PDF with LibreOffice, fast
// and at LibreOffice fidelity, from a pool of warm engines.
//
// # Design
//
// Each engine is a worker process: the quire binary re-executed in its
// hidden worker mode (RunWorker), holding one LibreOffice instance started
// through LibreOfficeKit (package lok) with a profile directory of its own.
// LibreOffice runs in-process there, so a crash, a hang or a leak of
// LibreOffice takes down one worker and never the service. The Pool
// supervises the workers: it starts and warms them, hands them jobs from the
// fair scheduler of package engine (a bounded line per key), kills a worker whose job exceeds its time limit, replaces
// crashed workers, and recycles workers after a number of jobs or above a
// memory threshold.
//
// The supervisor and a worker talk over the worker's stdin and stdout with
// length-prefixed frames (see protocol.go): an init message, a ready message
// after warm-up, then one job and one result at a time. The result carries
// the time LibreOffice itself spent on the job, measured inside the worker,
// so that callers can tell the engine's time from the service's overhead.
//
// Untrusted documents are loaded with macros disabled and with every link
// to outside content blocked (see profile.go); input is sniffed before it
// reaches LibreOffice (see sniff.go).
package convert

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Errors of Convert. Each names the HTTP answer it stands for; wrapped
// errors carry the details (match them with errors.Is).
var (
	// ErrUnsupportedFormat: the requested source format is not one the
	// engine converts (400 VALIDATION_ERROR).
	ErrUnsupportedFormat = errors.New("unsupported source format")
	// ErrInvalidFormat: the input is not a document of the declared format
	// (400 INVALID_FILE_FORMAT).
	ErrInvalidFormat = errors.New("input is not a document of the declared format")
	// ErrTooLarge: the input exceeds Options.MaxInputBytes (413 PAYLOAD_TOO_LARGE).
	ErrTooLarge = errors.New("input is larger than the conversion limit")
	// ErrUnprocessable: the document is of the right type but cannot be
	// converted: damaged, password protected, rejected by LibreOffice, or
	// too slow (422 UNPROCESSABLE_DOCUMENT). ErrEncrypted, ErrTimeout and
	// ErrCrashed also match it.
	ErrUnprocessable = errors.New("document cannot be converted")
	// ErrEncrypted: the document is password protected.
	ErrEncrypted = fmt.Errorf("%w: it is password protected", ErrUnprocessable)
	// ErrTimeout: the conversion exceeded Options.JobTimeout; its worker was killed.
	ErrTimeout = fmt.Errorf("%w: the conversion exceeded its time limit", ErrUnprocessable)
	// ErrMemoryLimit: the conversion needed more memory than
	// Options.MaxWorkerMemory, or the document expands to more than
	// Options.MaxExpandedBytes; a worker past the limit was killed.
	ErrMemoryLimit = fmt.Errorf("%w: it needs more memory than the limit", ErrUnprocessable)
	// ErrCrashed: the engine died on the document twice, on two workers.
	ErrCrashed = fmt.Errorf("%w: the conversion engine crashed on it twice", ErrUnprocessable)
	// ErrBusy: the queue is full (503 ENGINE_UNAVAILABLE with Retry-After,
	// see Pool.RetryAfter).
	ErrBusy = errors.New("conversion queue is full")
	// ErrUnavailable: no engine can take the job: the pool is closed, or its
	// workers cannot start (503 ENGINE_UNAVAILABLE).
	ErrUnavailable = errors.New("conversion engine unavailable")
)

// Source formats accepted by Convert, as the `from` parameter spells them.
const (
	FromDOCX     = "docx"
	FromDOC      = "doc"
	FromODT      = "odt"
	FromRTF      = "rtf"
	FromHTML     = "html"
	FromMarkdown = "md"
	FromXLSX     = "xlsx" // spreadsheets, which open in Calc
	FromXLS      = "xls"
	FromODS      = "ods"
	FromCSV      = "csv"
	FromPPTX     = "pptx" // presentations, which open in Impress
	FromPPT      = "ppt"
	FromODP      = "odp"
)

// Formats lists the accepted source formats.
var Formats = []string{FromDOCX, FromDOC, FromODT, FromRTF, FromHTML, FromMarkdown,
	FromXLSX, FromXLS, FromODS, FromCSV, FromPPTX, FromPPT, FromODP}

// Spreadsheets and Presentations are the formats that open in Calc and
// in Impress; the others open in Writer.
var (
	Spreadsheets  = []string{FromXLSX, FromXLS, FromODS, FromCSV}
	Presentations = []string{FromPPTX, FromPPT, FromODP}
)

// Output formats of ConvertTo, as the `to` parameter spells them.
const (
	ToPDF  = "pdf"
	ToDOCX = "docx" // Writer's "MS Word 2007 XML" export
)

// DOCXSources are the formats that convert to DOCX: those the hosted API
// converts (a DOCX to DOCX would be a copy; the rest are not asked for).
var DOCXSources = []string{FromHTML, FromMarkdown}

// CanConvert reports whether documents of format from convert to format to.
func CanConvert(from, to string) bool {
	switch to {
	case ToPDF:
		return slices.Contains(Formats, from)
	case ToDOCX:
		return slices.Contains(DOCXSources, from)
	}
	return false
}

// looksLike reports whether out starts as a file of format does: what a
// worker checks before it answers with LibreOffice's output.
func looksLike(out []byte, format string) bool {
	if format == ToDOCX {
		return bytes.HasPrefix(out, []byte("PK\x03\x04"))
	}
	return bytes.HasPrefix(out, []byte("%PDF-"))
}

// Options configure a Pool. The zero value of a field selects its default.
type Options struct {
	// PoolOptions are the workers' count, queue, time and memory limits
	// and program, with DefaultPoolOptions. Each worker holds about
	// 150-300 MB when warm. QueueLength is per tenant (API key): tenants
	// are served in turn (engine.Scheduler).
	PoolOptions
	// MaxInputBytes is the largest accepted input (default 25 MiB). A ZIP
	// package nested in a document counts as an input too.
	MaxInputBytes int64
	// MaxExpandedBytes bounds what a ZIP-based document (OOXML, ODF) and the
	// packages nested in it inflate to, measured by inflating them before
	// the job (default 256 MiB; negative: no limit). See expand.go.
	MaxExpandedBytes int64
	// MaxCompressionRatio bounds the ratio of inflated to compressed size of
	// each part larger than 1 MiB of such a package (default 200; real
	// documents stay under 35; negative: no limit).
	MaxCompressionRatio int
	// MaxNesting bounds how deep Markdown nests block quotes and list
	// items, and HTML its elements (default DefaultMaxNesting; deeper:
	// ErrUnprocessable; negative: no limit). See nesting.go.
	MaxNesting int
	// MaxTableCells bounds the cells of a Markdown table (default
	// DefaultMaxTableCells; more: ErrUnprocessable; negative: no limit).
	// See tables.go.
	MaxTableCells int
	// Dir holds each worker's profile and temporary files (default: a new
	// directory under os.TempDir(), removed by Close, or by a later pool's
	// start if this process was killed: see workdir.go).
	Dir string
	// ProgramDir is LibreOffice's program directory, the one that holds
	// libmergedlo.so (default /usr/lib/libreoffice/program).
	ProgramDir string
	// Registerer is where the engine's metrics go (metrics.go); nil:
	// nowhere.
	Registerer prometheus.Registerer

	// hostNamespaces runs the workers without namespaces of their own
	// (sandbox.go), for the tests' scripted workers, which crash by killing
	// themselves: the first process of a PID namespace cannot.
	hostNamespaces bool
}

// DefaultProgramDir is where Debian's LibreOffice packages install it.
const DefaultProgramDir = "/usr/lib/libreoffice/program"

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() (Options, error) {
	var err error
	if o.PoolOptions, err = o.PoolOptions.WithDefaults(DefaultPoolOptions); err != nil {
		return o, fmt.Errorf("convert: %w", err)
	}
	if o.MaxInputBytes <= 0 {
		o.MaxInputBytes = 25 << 20
	}
	if o.MaxExpandedBytes == 0 {
		o.MaxExpandedBytes = 256 << 20
	}
	if o.MaxCompressionRatio == 0 {
		o.MaxCompressionRatio = 200
	}
	if o.MaxNesting == 0 {
		o.MaxNesting = DefaultMaxNesting
	}
	if o.Dir != "" {
		dir, err := filepath.Abs(o.Dir) // a confined worker sees its directories at their absolute paths (confine.go)
		if err != nil {
			return o, fmt.Errorf("convert: work directory %s: %w", o.Dir, err)
		}
		o.Dir = dir
	}
	if o.ProgramDir == "" {
		o.ProgramDir = DefaultProgramDir
	}
	return o, nil
}
