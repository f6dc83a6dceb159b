package libreoffice

import (
	"bytes"
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
