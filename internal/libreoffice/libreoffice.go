// Package libreoffice turns office documents into PDF with LibreOffice, fast
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
// reaches LibreOffice (package safeinput).
package libreoffice

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/safeinput"
)

// Spreadsheets and Presentations are the formats that open in Calc and
// in Impress; the others open in Writer.
var (
	Spreadsheets  = []string{engine.FromXLSX, engine.FromXLS, engine.FromODS, engine.FromCSV}
	Presentations = []string{engine.FromPPTX, engine.FromPPT, engine.FromODP}
)

// looksLike reports whether out starts as a file of format does: what a
// worker checks before it answers with LibreOffice's output.
func looksLike(out []byte, format string) bool {
	if format == engine.ToDOCX {
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
	engine.PoolOptions
	// MaxInputBytes is the largest accepted input (default 25 MiB). A ZIP
	// package nested in a document counts as an input too.
	MaxInputBytes int64
	// MaxExpandedBytes bounds what a ZIP-based document (OOXML, ODF) and the
	// packages nested in it inflate to, measured by inflating them before
	// the job (default 256 MiB; negative: no limit). See package safeinput.
	MaxExpandedBytes int64
	// MaxCompressionRatio bounds the ratio of inflated to compressed size of
	// each part larger than 1 MiB of such a package (default 200; real
	// documents stay under 35; negative: no limit).
	MaxCompressionRatio int
	// MaxNesting bounds how deep Markdown nests block quotes and list
	// items, and HTML its elements (default safeinput.DefaultMaxNesting; deeper:
	// ErrUnprocessable; negative: no limit). See package safeinput.
	MaxNesting int
	// MaxTableCells bounds the cells of a Markdown table (default
	// safeinput.DefaultMaxTableCells; more: ErrUnprocessable; negative: no limit).
	// See package safeinput.
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
const DefaultProgramDir = engine.LibreOfficeProgramDir

// withDefaults returns o with every zero field set to its default.
func (o Options) withDefaults() (Options, error) {
	var err error
	if o.PoolOptions, err = o.PoolOptions.WithDefaults(engine.DefaultPoolOptions); err != nil {
		return o, fmt.Errorf("convert: %w", err)
	}
	if o.MaxInputBytes <= 0 {
		o.MaxInputBytes = safeinput.DefaultMaxInputBytes
	}
	if o.MaxExpandedBytes == 0 {
		o.MaxExpandedBytes = safeinput.DefaultMaxExpandedBytes
	}
	if o.MaxCompressionRatio == 0 {
		o.MaxCompressionRatio = safeinput.DefaultMaxCompressionRatio
	}
	if o.MaxNesting == 0 {
		o.MaxNesting = safeinput.DefaultMaxNesting
	}
	if o.Dir != "" {
		dir, err := filepath.Abs(o.Dir) // a confined worker sees its directories at their absolute paths (engine.ConfineFilesystem)
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

// inputLimits are the bounds o sets on a document before it reaches a
// worker (package safeinput).
func (o *Options) inputLimits() safeinput.Limits {
	return safeinput.Limits{MaxInputBytes: o.MaxInputBytes, MaxExpandedBytes: o.MaxExpandedBytes, MaxCompressionRatio: o.MaxCompressionRatio,
		Text: safeinput.TextLimits{MaxNesting: o.MaxNesting, MaxTableCells: o.MaxTableCells}}
}
