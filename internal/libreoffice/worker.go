package libreoffice

import (
	"archive/zip"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/lok"
	"github.com/quire-dev/quire/internal/pdf"
	"golang.org/x/sys/unix"
)

// How a worker keeps LibreOffice alive inside a Go process.
//
// One thread. LibreOffice is not thread-safe, and LibreOfficeKit expects
// every call to come from the thread that initialised it. The worker's
// main path calls runtime.LockOSThread before starting LibreOffice and
// never unlocks: initialisation, every job, and exit all run on that one
// OS thread, and the worker serves one job at a time.
//
// Signals. LibreOffice installs its own handlers for most signals (for
// crash reports and for SIGURG, SIGPIPE, ...), without SA_ONSTACK. Go's
// scheduler preempts long-running goroutines by sending SIGURG to their
// thread; when that signal lands in LibreOffice's handler on a goroutine
// stack and is chained to Go's, the runtime dies with "signal 23 received
// but handler not on signal stack". The supervisor therefore starts every
// worker with GODEBUG=asyncpreemptoff=1, which turns asynchronous
// preemption (and so those SIGURGs) off; RunWorker refuses to start
// without it. Nothing is lost: a worker has a single busy goroutine, and
// goroutines still yield at function calls and channel operations.
// Re-installing LibreOffice's handlers with SA_ONSTACK was the other
// option; it was rejected because its crash handler would then run on
// Go's 32 KiB signal stack, which it can overflow.
//
// Process. One LibreOffice per process, one profile directory per worker
// (LibreOffice locks and rewrites its profile), and one temporary
// directory per worker (TMPDIR points there, so LibreOffice's own scratch
// files are removed with it) with a subdirectory for the job in progress,
// emptied after each job.
//
// Answer first. Closing a document (its view, layout and model) and
// emptying the job's directory take a few milliseconds that the PDF does
// not need, so the worker does both after it has sent the result. A job
// sent to the same worker meanwhile waits in the pipe until they are done.

// RunWorker is the main function of a worker process (the hidden
// `quire convert-worker` command): it speaks the protocol of protocol.go
// on stdin and stdout, converting documents with LibreOffice, until stdin
// closes. It returns the process's exit code.
// The same mode runs the programs that engine.Confine confines (a
// browser, a cold soffice).
func RunWorker(stdin io.Reader, stdout io.Writer) int {
	if code, asked := engine.RunConfined(false); asked {
		return code
	}
	return serveWorker(stdin, stdout, startLibreOffice, engine.ConfineFilesystem)
}

// confineFunc confines a process's filesystem (engine.ConfineFilesystem);
// the tests' scripted workers, which use files all over the test's
// directories, pass nil.
type confineFunc func(root, programDir string, dirs []string) error

// officeEngine is LibreOffice as the worker sees it. The tests substitute a
// scripted engine to drive the supervisor through hangs and crashes.
type officeEngine interface {
	// convert converts the file inPath to outPath, in the format named by
	// outPath's extension (ToPDF or ToDOCX), with the export filter's
	// options filter, opening an encrypted input with password. It
	// returns a function, never nil, that releases what the conversion
	// still holds (the loaded document, LibreOffice's lock); the worker
	// calls it after answering.
	convert(inPath, outPath, filter, password string) (release func(), err error)
	version() string
}

// startEngine starts an engine with LibreOffice's program directory and
// the worker's profile directory.
type startEngine func(programDir, profileDir string) (officeEngine, error)

// serveWorker runs the worker's side of the protocol with the engine
// that start returns, confined by confineFS when the init message asks.
func serveWorker(stdin io.Reader, stdout io.Writer, start startEngine, confineFS confineFunc) int {
	runtime.LockOSThread() // for good: see the comment at the top of this file
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "quire convert-worker[%d]: %s\n", os.Getpid(), fmt.Sprintf(format, args...))
		return 1
	}
	if !asyncPreemptOff(os.Getenv("GODEBUG")) {
		return fail("refusing to start without GODEBUG=asyncpreemptoff=1 (LibreOffice's signal handlers would crash the Go runtime); workers are started by the conversion pool")
	}
	out, err := protectStdout(stdout)
	if err != nil {
		return fail("%v", err)
	}
	init, err := readFrame(stdin)
	if err != nil || init.Kind != kindInit {
		return fail("expected an init message on stdin: %v", err)
	}
	if init.CPU != nil {
		pinThread(*init.CPU) // this thread starts LibreOffice (affinity.go)
	}
	engine.LowPriority() // for LibreOffice's threads too (memory.go)
	var warning string
	if init.Confine && confineFS != nil {
		root := filepath.Join(filepath.Dir(init.TempDir), "root")
		if err := confineFS(root, init.ProgramDir, []string{init.ProfileDir, init.TempDir}); err != nil {
			warning = "cannot confine the filesystem: " + err.Error()
		}
	}
	eng, warm, err := startWarm(start, init)
	if err != nil {
		writeFrame(out, &message{Kind: kindReady, Error: err.Error()})
		return fail("%v", err)
	}
	if err := writeFrame(out, &message{Kind: kindReady, Version: eng.version(), Engine: warm, Warning: warning}); err != nil {
		return fail("write ready message: %v", err)
	}
	for {
		job, err := readFrame(stdin)
		if err == io.EOF {
			return 0
		}
		if err != nil || job.Kind != kindJob {
			return fail("read job: %v (kind %q)", err, kindOf(job))
		}
		res, cleanup := runJob(eng, jobDir(init.TempDir), job)
		err = writeFrame(out, res)
		if err != nil {
			return fail("write result of job %d: %v", job.ID, err)
		}
		if err := cleanup(); err != nil {
			return fail("empty the job directory after job %d: %v", job.ID, err)
		}
	}
}

// startWarm starts the engine and converts a small document once, so that
// LibreOffice has loaded its Writer and PDF export code before the first
// real job. It returns the time both took.
func startWarm(start startEngine, init *message) (officeEngine, time.Duration, error) {
	t0 := time.Now()
	eng, err := start(init.ProgramDir, init.ProfileDir)
	if err != nil {
		return nil, 0, err
	}
	dir := jobDir(init.TempDir)
	if err := emptyDir(dir); err != nil {
		return nil, 0, fmt.Errorf("create the job directory: %w", err)
	}
	res, cleanup := runJob(eng, dir, &message{Kind: kindJob, From: engine.FromDOCX, Filter: pdfExportOptions, Body: warmUpDocument()})
	if res.Error != "" {
		return nil, 0, fmt.Errorf("warm-up conversion failed: %s", res.Error)
	}
	if err := cleanup(); err != nil {
		return nil, 0, fmt.Errorf("empty the job directory: %w", err)
	}
	return eng, time.Since(t0), nil
}

// jobDir is the directory of a worker's jobs under its temporary
// directory tempDir. It is made before the first job and emptied after
// each (the cleanup that runJob returns), after the answer: making a
// directory per job was on every job's path.
func jobDir(tempDir string) string { return filepath.Join(tempDir, "job") }

// emptyDir makes dir an empty directory.
func emptyDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Mkdir(dir, 0o700)
}

// writeJobFile and readJobFile are os.WriteFile and os.ReadFile in
// fewer system calls: os registers every file it opens with Go's poller,
// which Linux refuses for a regular file, four fcntl and an epoll_ctl
// more per file, and a worker's first system calls after LibreOffice's
// run are slow (bench/RESULTS.md). The worker's one thread blocks in
// them, as it does in LibreOffice.
func writeJobFile(path string, b []byte) error {
	fd, err := openJobFile(path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		n, werr := unix.Write(fd, b)
		if werr == unix.EINTR {
			continue
		}
		if werr != nil {
			err = werr
			break
		}
		b = b[n:]
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

func readJobFile(path string) ([]byte, error) {
	fd, err := openJobFile(path, unix.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	b := make([]byte, 0, st.Size+1) // one more byte: the read that finds the end needs room
	for {
		n, err := unix.Read(fd, b[len(b):cap(b)])
		switch {
		case err == unix.EINTR:
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		case n == 0:
			return b, nil
		default:
			if b = b[:len(b)+n]; len(b) == cap(b) {
				b = slices.Grow(b, 512)
			}
		}
	}
}

func openJobFile(path string, mode int) (int, error) {
	for {
		fd, err := unix.Open(path, mode|unix.O_CLOEXEC, 0o600)
		if err != unix.EINTR {
			if err != nil {
				return -1, &os.PathError{Op: "open", Path: path, Err: err}
			}
			return fd, nil
		}
	}
}

// runJob converts one job's input in the empty directory dir. It returns
// the result message, and the cleanup (release the document, empty the
// directory) that the caller runs once it has sent the result. The
// result's engine time covers the conversion, not the cleanup.
func runJob(eng officeEngine, dir string, job *message) (*message, func() error) {
	res := &message{Kind: kindResult, ID: job.ID}
	empty := func() error { return emptyDir(dir) }
	to := cmp.Or(job.To, engine.ToPDF)
	in := filepath.Join(dir, "input."+job.From)
	out := filepath.Join(dir, "output."+to) // the engine exports to the format the extension names
	if err := writeJobFile(in, job.Body); err != nil {
		res.Class, res.Error = classEngine, fmt.Sprintf("write input: %v", err)
		return res, empty
	}
	t0 := time.Now()
	release, err := eng.convert(in, out, job.Filter, job.Password)
	res.Engine = time.Since(t0)
	cleanup := func() error {
		release() // first: LibreOffice may still hold the files
		return empty()
	}
	var lokErr *lok.Error
	switch {
	case errors.As(err, &lokErr) && lokErr.WrongPassword:
		res.Class, res.Error = classDocument, "the password does not open the document"
	case errors.As(err, &lokErr) && lokErr.Op == "load":
		res.Class, res.Error, res.Detail = classLoad, "LibreOffice could not load the document", lokErr.Detail
	case errors.As(err, &lokErr):
		res.Class, res.Error, res.Detail = classDocument, "LibreOffice could not "+lokErr.Op+" the document", lokErr.Detail
	case err != nil:
		res.Class, res.Error = classEngine, err.Error()
	default:
		res.Body, err = readJobFile(out)
		if err != nil || !looksLike(res.Body, to) {
			res.Body = nil
			res.Class, res.Error = classEngine, fmt.Sprintf("LibreOffice reported success but wrote no %s (%v)", strings.ToUpper(to), err)
		}
		res.Pages = outputPages(res.Body, to)
	}
	return res, cleanup
}

// outputPages counts the pages of an output of format to: a PDF's, as
// its page tree's root declares them (pdf.PageCount, the metering's
// figure), 0 for a DOCX. The PDF is counted where it was written, in the
// worker (or, for a cold soffice, by the supervisor that read it), so
// that nothing parses it again for its pages. LibreOfficeKit's parts
// would not do: they are a spreadsheet's sheets, not its printed pages,
// and ignore pageRanges.
func outputPages(out []byte, to string) int64 {
	if to != engine.ToPDF {
		return 0
	}
	return pdf.PageCount(out)
}

func kindOf(m *message) string {
	if m == nil {
		return ""
	}
	return m.Kind
}

// asyncPreemptOff reports whether a GODEBUG value turns asynchronous
// preemption off (the last asyncpreemptoff setting wins, as in the runtime).
func asyncPreemptOff(godebug string) bool {
	off := false
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(kv), "asyncpreemptoff="); ok {
			off = v == "1"
		}
	}
	return off
}

// protectStdout moves the protocol off file descriptor 1 when out is the
// process's standard output: LibreOffice and the libraries it loads print
// diagnostics to stdout now and then, and one stray byte there would
// corrupt a frame. The protocol keeps a duplicate of the descriptor, and
// descriptor 1 becomes a copy of stderr.
func protectStdout(out io.Writer) (io.Writer, error) {
	if f, ok := out.(*os.File); !ok || f.Fd() != 1 {
		return out, nil
	}
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("duplicate stdout: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Dup3(2, 1, 0); err != nil {
		return nil, fmt.Errorf("redirect stdout to stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "protocol"), nil
}

// startLibreOffice starts LibreOffice through LibreOfficeKit.
func startLibreOffice(programDir, profileDir string) (officeEngine, error) {
	office, err := lok.New(programDir, fileURL(profileDir))
	if err != nil {
		return nil, err
	}
	return libreOffice{office}, nil
}

// libreOffice is the real engine.
type libreOffice struct{ office *lok.Office }

// loadOptions: no macros, whatever the document or the profile says.
const loadOptions = "EnableMacrosExecution=false"

// csvLoadOptions are loadOptions for CSV. Batch=true keeps Calc's import
// from waiting for its options dialog (LibreOfficeKit 7.4 waited until
// the job's time limit; 25.2 converts), and the rest is the CSV filter's
// options: fields separated by commas (44) and quoted by double quotes
// (34), in the character set charset, from the first line, standard
// column formats, default language, quoted fields as usual, special
// numbers (dates) detected, and formulas not evaluated: a CSV holds data,
// and =WEBSERVICE() in it stays text.
func csvLoadOptions(charset string) string {
	return loadOptions + ",Batch=true,44,34," + charset + ",1,,0,false,true,false,false,false,0,false"
}

// csvCharset names, in the CSV filter's numbers (rtl_TextEncoding), the
// character set of the CSV in: UTF-8 where it is valid UTF-8 (ASCII
// too), and otherwise Windows-1252, the usual encoding of spreadsheets
// saved as CSV (text with NUL bytes, UTF-16, is not taken: safeinput/sniff.go).
func csvCharset(in []byte) string {
	if utf8.Valid(in) {
		return "76"
	}
	return "1"
}

// saveOptions: NoFileSync, because the worker reads the output back at
// once and deletes it; the fsync LibreOffice would do otherwise buys
// nothing and waits for the disk (0.4 ms per document on the corpus on a
// quiet disk, about 1 ms while another process writes synchronously).
// Then the export filter's own options (filterOptions).
func saveOptions(filter string) string {
	if filter == "" {
		return "NoFileSync"
	}
	return "NoFileSync," + filter
}

// convert holds LibreOffice's lock from before loading until the
// document is closed, after the worker has answered, so that LibreOffice's
// main loop never runs the document's idle tasks: none of them changes
// the PDF, but Writer's background word count alone took 2.6% of a
// worker's CPU time over the corpus, and closing the document waited for
// them (4.1 ms per document on average, of which 1.6 ms was its own CPU
// time). With two clients on two cores, where the workers compete for the
// processors, this gave 3.5% more documents per second (35.1 and 35.2
// against 34.2 and 33.7 in runs of the conversion benchmark taken in
// turn); one client converts as fast as before.
func (l libreOffice) convert(in, out, filter, password string) (func(), error) {
	options := loadOptions
	if filepath.Ext(in) == "."+engine.FromCSV {
		b, err := os.ReadFile(in)
		if err != nil {
			return func() {}, err
		}
		options = csvLoadOptions(csvCharset(b))
	}
	unlock := l.office.Lock()
	doc, err := l.office.Load(fileURL(in), options, password)
	if err != nil {
		unlock()
		return func() {}, err
	}
	format := strings.TrimPrefix(filepath.Ext(out), ".")
	return func() { doc.Close(); unlock() }, doc.SaveAs(fileURL(out), format, saveOptions(filter))
}

func (l libreOffice) version() string { return productVersion(l.office.Version()) }

// productVersion returns the version that LibreOffice's version
// information (JSON: ProductVersion "25.2", ProductExtension ".3.2", ...)
// names, "25.2.3.2", or the information as it is if it names none.
func productVersion(info string) string {
	var v struct{ ProductVersion, ProductExtension string }
	if err := json.Unmarshal([]byte(info), &v); err != nil || v.ProductVersion == "" {
		return info
	}
	return v.ProductVersion + v.ProductExtension
}

// warmUpDocument returns a minimal one-paragraph DOCX.
func warmUpDocument() []byte {
	parts := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>warm-up</w:t></w:r></w:p></w:body></w:document>`},
	}
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, p := range parts {
		w, _ := z.Create(p.name) // writes to memory: cannot fail
		io.WriteString(w, p.body)
	}
	z.Close()
	return b.Bytes()
}
