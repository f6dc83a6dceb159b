package libreoffice

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestJobDirectoryEmptiedAfterEachJob: a worker's jobs share one
// directory, which the cleanup after each answer leaves empty and in
// place, whatever the engine wrote in it, and a failed job's cleanup too.
func TestJobDirectoryEmptiedAfterEachJob(t *testing.T) {
	dir := jobDir(t.TempDir())
	if err := emptyDir(dir); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(dir, ".~lock.input.docx#") // as LibreOffice leaves beside a document
	for i, script := range []string{"touch " + stray, "refuse", "touch " + stray} {
		res, cleanup := runJob(scriptEngine{}, dir, &message{Kind: kindJob, ID: uint64(i), From: "docx", Body: []byte(script)})
		switch {
		case script == "refuse" && res.Class != classDocument:
			t.Errorf("job %d: class %q (%s), want %q", i, res.Class, res.Error, classDocument)
		case script != "refuse" && (res.Error != "" || !bytes.HasPrefix(res.Body, []byte("%PDF-"))):
			t.Errorf("job %d: error %q, output %.10q", i, res.Error, res.Body)
		}
		if entries, _ := os.ReadDir(dir); len(entries) == 0 {
			t.Errorf("job %d: its directory is empty before the cleanup", i)
		}
		if err := cleanup(); err != nil {
			t.Fatalf("job %d: cleanup: %v", i, err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 0 {
			t.Fatalf("job %d: after the cleanup the directory holds %v (%v), want it empty", i, entries, err)
		}
	}
}

// TestJobFiles: what writeJobFile writes, readJobFile reads back whole,
// whatever its size (the read that finds the end may fall on the
// buffer's edge), over a longer file's old content, and a missing file or
// directory is an error that says so.
func TestJobFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "output.pdf")
	for _, size := range []int{0, 1, 511, 512, 513, 64 << 10, 1<<20 + 3, 5} {
		b := bytes.Repeat([]byte("%PDF-1.7 "), size/9+1)[:size]
		if err := writeJobFile(path, b); err != nil {
			t.Fatalf("%d bytes: %v", size, err)
		}
		got, err := readJobFile(path)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes written, %d read back (%v)", size, len(got), err)
		}
		if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
			t.Errorf("%d bytes: mode %v, want 0600", size, info.Mode().Perm())
		}
	}
	if _, err := readJobFile(filepath.Join(dir, "none.pdf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading a missing file: %v, want it not to exist", err)
	}
	if err := writeJobFile(filepath.Join(dir, "none", "input.docx"), []byte("x")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("writing in a missing directory: %v, want it not to exist", err)
	}
}
