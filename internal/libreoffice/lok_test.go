package libreoffice

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/libreoffice/convtest"
)

// These tests run the real engine: LibreOffice through LibreOfficeKit.

// sofficeExport converts the DOCX in into format ext with a cold soffice,
// to make inputs of the other formats.
func sofficeExport(t *testing.T, in []byte, ext string) []byte {
	t.Helper()
	return sofficeSaveAs(t, in, "docx", ext)
}

// sofficeSaveAs converts in, of format from, into format ext with a
// cold soffice.
func sofficeSaveAs(t *testing.T, in []byte, from, ext string) []byte {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "in."+from)
	os.WriteFile(src, in, 0o600)
	if out, err := soffice("--convert-to", ext, "--outdir", dir, src); err != nil {
		t.Fatalf("soffice --convert-to %s: %v\n%s", ext, err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "in."+ext))
	if err != nil {
		t.Fatalf("soffice --convert-to %s wrote nothing: %v", ext, err)
	}
	return b
}

// coldProfiles holds the profiles of the tests' cold soffice runs: made
// by the first run of each kind, kept for the others (a new profile costs
// seconds), and removed by TestMain. One soffice at a time uses them: a
// second one on the same profile would hand its work to the first and
// return at once.
var coldProfiles struct {
	sync.Mutex
	dir string
}

// soffice runs a cold `soffice --headless` with the default profile and
// args, and returns its output.
func soffice(args ...string) ([]byte, error) { return sofficeWith("default", nil, args...) }

// sofficeWith is soffice with the profile called name, which write, if
// not nil, prepares before its first use.
func sofficeWith(name string, write func(dir string) error, args ...string) ([]byte, error) {
	coldProfiles.Lock()
	defer coldProfiles.Unlock()
	if coldProfiles.dir == "" {
		dir, err := os.MkdirTemp("", "quire-soffice-profiles-")
		if err != nil {
			return nil, err
		}
		coldProfiles.dir = dir
	}
	profile := filepath.Join(coldProfiles.dir, name)
	if _, err := os.Stat(profile); err != nil && write != nil {
		if err := write(profile); err != nil {
			return nil, err
		}
	}
	return exec.Command("soffice", append([]string{"--headless", "-env:UserInstallation=" + fileURL(profile)}, args...)...).CombinedOutput()
}

func TestEveryFormatConverts(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	table := `<w:tbl><w:tblPr><w:tblBorders><w:top w:val="single" w:sz="4"/><w:bottom w:val="single" w:sz="4"/></w:tblBorders></w:tblPr>` +
		`<w:tr><w:tc><w:p><w:r><w:t>cell 1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>cell 2</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`
	src := convtest.DOCXBody(convtest.Paragraphs(3, "every format")+table+`<w:p/>`, "")
	for _, c := range []struct {
		from string
		in   []byte
	}{
		{"docx", src},
		{"doc", sofficeExport(t, src, "doc")},
		{"odt", sofficeExport(t, src, "odt")},
		{"rtf", sofficeExport(t, src, "rtf")},
		{"html", []byte("<!DOCTYPE html><html><body><h1>Title</h1><table border=1><tr><td>cell 1</td><td>cell 2</td></tr></table></body></html>")},
		{"md", []byte("# Title\n\n| a | b |\n|---|---|\n| cell 1 | cell 2 |\n")},
	} {
		r, err := p.ConvertTimed(context.Background(), c.in, c.from)
		if err != nil {
			t.Errorf("from=%s: %v", c.from, err)
			continue
		}
		if msg := qpdfCheck(t, r.Output); msg != "" {
			t.Errorf("from=%s: qpdf --check: %s", c.from, msg)
		}
		if n := pageCount(t, r.Output); n != 1 || r.Cold {
			t.Errorf("from=%s: %d pages, cold %v; want 1 page from the warm engine", c.from, n, r.Cold)
		}
		if r.Engine <= 0 || r.Engine > r.Total {
			t.Errorf("from=%s: engine time %v, total %v", c.from, r.Engine, r.Total)
		}
	}
}

// TestCommentedDocuments: LibreOfficeKit refuses documents with comments.
// A DOCX loses its comments (safeinput/comments.go) and converts warm; an RTF with
// a comment goes to the cold soffice.
func TestCommentedDocuments(t *testing.T) {
	p, counters := sharedSerial(t)
	rtf := []byte(`{\rtf1\ansi{\fonttbl\f0 Arial;}\f0 word {\*\atrfstart 1}commented{\*\atrfend 1}{\*\atnid A}{\*\atnauthor A}\chatn{\*\annotation{\*\atnref 1}\pard A remark.}\par}`)
	for _, c := range []struct {
		from string
		in   []byte
		cold bool
	}{{engine.FromDOCX, convtest.DOCXWith(convtest.Commented(convtest.Paragraphs(1, "x"), "")), false}, {engine.FromRTF, rtf, true}} {
		r, err := p.ConvertTimed(context.Background(), c.in, c.from)
		if err != nil {
			t.Fatalf("commented %s: %v", c.from, err)
		}
		if r.Cold != c.cold || pageCount(t, r.Output) != 1 {
			t.Errorf("commented %s: cold %v, %d pages; want cold %v and 1 page", c.from, r.Cold, pageCount(t, r.Output), c.cold)
		}
	}
	if c := counters(); c.Cold != 1 || c.Crashes != 0 {
		t.Errorf("counters %+v", c)
	}
}

// TestDamagedAndProtectedDocumentsAreUnprocessable: LibreOffice 25.2
// stays on one of the damaged packages until the job's time limit (a
// timeout is unprocessable too), so the limit is short: the default
// minute is no part of what is tested.
func TestDamagedAndProtectedDocumentsAreUnprocessable(t *testing.T) {
	requireLibreOffice(t)
	p := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 1, JobTimeout: 10 * time.Second}})
	good := convtest.DOCXBody(convtest.Paragraphs(1, "fine"), "")
	garbage := convtest.Zip(map[string]string{"[Content_Types].xml": "<Types/>", "word/document.xml": "\x00\x01 not XML at all <<<"})
	for name, c := range map[string]struct {
		in   []byte
		want error
	}{
		"truncated ZIP":          {good[:len(good)-40], engine.ErrUnprocessable},
		"garbage document part":  {garbage, engine.ErrUnprocessable},
		"password-protected":     {convtest.CFB([]string{"EncryptionInfo", "EncryptedPackage"}, nil), engine.ErrEncrypted},
		"PDF declared as a DOCX": {[]byte("%PDF-1.7\n%%EOF\n"), engine.ErrInvalidFormat},
	} {
		if _, err := p.Convert(context.Background(), c.in, "docx"); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	if _, err := p.Convert(context.Background(), good, "docx"); err != nil {
		t.Errorf("a good document after the bad ones: %v", err)
	}
}

func TestLibreOfficeWorkerKilledMidJob(t *testing.T) {
	requireLibreOffice(t)
	p := testPool(t, "lok", Options{PoolOptions: engine.PoolOptions{Workers: 1}})
	// Seconds of LibreOffice's work, against the tenth of a second of it
	// after which the worker is killed.
	big := convtest.DOCXBody(convtest.Paragraphs(2000, strings.Repeat("a long line of text to lay out ", 4)), "")
	done := make(chan error, 1)
	go func() {
		r, err := p.ConvertTimed(context.Background(), big, "docx")
		if err == nil && r.Attempts != 2 {
			t.Errorf("attempts %d, want 2", r.Attempts)
		}
		done <- err
	}()
	pid := waitFor(t, p, "the job reaches the worker", func(s engine.Status) bool { return s.Busy == 1 }).Details[0].PID
	// Inside LibreOffice's work on the document: the worker has spent a
	// tenth of a second of CPU on it.
	start := cpuTicks(t, pid)
	waitFor(t, p, "the worker works on the document", func(engine.Status) bool { return cpuTicks(t, pid) >= start+10 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("job whose worker was killed: %v, want success on the retry", err)
	}
	if _, err := p.Convert(context.Background(), convtest.DOCXBody(convtest.Paragraphs(1, "next"), ""), "docx"); err != nil {
		t.Errorf("next job: %v", err)
	}
	if c := p.Status().Counters; c.Crashes != 1 || c.Retried != 1 || c.Restarts != 1 {
		t.Errorf("counters %+v, want 1 crash, 1 retry, 1 restart", c)
	}
}

// TestStatusNamesTheEngineVersion: the pool reports the version that
// LibreOfficeKit names, the one `soffice --version` prints.
func TestStatusNamesTheEngineVersion(t *testing.T) {
	p := sharedPool(t)
	t.Parallel()
	out, err := exec.Command("soffice", "--version").Output()
	if err != nil {
		t.Fatalf("soffice --version: %v", err)
	}
	fields := strings.Fields(string(out)) // LibreOffice 25.2.3.2 520(Build:2)
	if len(fields) < 2 {
		t.Fatalf("soffice --version printed %q", out)
	}
	if got := p.Status().Version; got != fields[1] {
		t.Errorf("Status().Version = %q, want %q (soffice --version: %s)", got, fields[1], bytes.TrimSpace(out))
	}
}

func TestProductVersion(t *testing.T) {
	for info, want := range map[string]string{
		`{"ProductName": "LibreOffice", "ProductVersion": "25.2", "ProductExtension": ".3.2", "BuildId": "520(Build:2)"}`: "25.2.3.2",
		`{"ProductName": "LibreOffice"}`: `{"ProductName": "LibreOffice"}`,
		"script":                         "script",
	} {
		if got := productVersion(info); got != want {
			t.Errorf("productVersion(%s) = %q, want %q", info, got, want)
		}
	}
}

// cpuTicks is the CPU time, user and system, that process pid has used,
// in clock ticks (a hundredth of a second on Linux).
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("the worker's CPU time: %v", err)
	}
	// The fields after the command's name, which ends with the last ')':
	// state is the first, utime and stime the 12th and 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	user, _ := strconv.Atoi(f[11])
	system, _ := strconv.Atoi(f[12])
	return user + system
}
