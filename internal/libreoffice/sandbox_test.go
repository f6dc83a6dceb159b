package libreoffice

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// hostOnly are entries of this machine's root directory that a confined
// process must not see.
func hostOnly(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, n := range []string{"home", "root", "srv", "var/lib", "etc/hostname", "etc/shadow"} {
		if _, err := os.Stat("/" + n); err == nil {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Fatal("none of /home, /root, /srv, /var/lib, /etc/hostname, /etc/shadow exists here: nothing to prove confinement with")
	}
	return names
}

// TestWorkerIsConfined looks into a warm worker from outside: it has a
// network namespace of its own, and its root directory holds none of the
// host's private places, while LibreOffice's program directory is there.
func TestWorkerIsConfined(t *testing.T) {
	p, _ := sharedSerial(t) // serial: no job recycles the worker while the test looks at it
	pid := strconv.Itoa(p.Status().Details[0].PID)
	ours, _ := os.Readlink("/proc/self/ns/net")
	theirs, err := os.Readlink("/proc/" + pid + "/ns/net")
	if err != nil || theirs == ours {
		t.Errorf("the worker's network namespace is %q (%v), ours %q: want one of its own", theirs, err, ours)
	}
	root := "/proc/" + pid + "/root/"
	for _, n := range hostOnly(t) {
		if _, err := os.Stat(root + n); err == nil {
			out, _ := exec.Command("find", root+n).CombinedOutput()
			t.Errorf("the worker sees /%s: %s", n, out)
		}
	}
	if _, err := os.Stat(root + DefaultProgramDir + "/libmergedlo.so"); err != nil {
		t.Errorf("the worker does not see LibreOffice: %v", err)
	}
}

// TestColdSofficeIsConfined runs a stand-in soffice through the cold
// path, with the real worker program as its launcher: it writes what it
// sees into its "PDF".
func TestColdSofficeIsConfined(t *testing.T) {
	canaryDir, err := os.MkdirTemp("", "quire-canary-") // not beside the stand-in's directory, which the confinement shows
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(canaryDir)
	canary := filepath.Join(canaryDir, "secret.txt")
	os.WriteFile(canary, []byte("secret"), 0o644)
	script := `while [ "$1" != "--outdir" ]; do shift; done
{ echo '%PDF-1.4'; for f in '` + canary + `' /home /root /srv /var/lib /etc/hostname /etc/shadow; do [ -e "$f" ] && echo "VISIBLE $f"; done; echo done; } > "$2/input.pdf"`
	o := &Options{PoolOptions: engine.PoolOptions{Executable: os.Args[0], WorkerArgs: []string{"quire-test-worker", "lok"}}, ProgramDir: fakeProgramDir(t, script)}
	pdf, _, _, err := coldConvert(context.Background(), o, t.TempDir(), []byte("{\\rtf1 x}"), engine.FromRTF, engine.ToPDF, pdfExportOptions, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(pdf, []byte("done")) || bytes.Contains(pdf, []byte("VISIBLE")) {
		t.Errorf("the cold soffice saw the host:\n%s", pdf)
	}
	hostOnly(t) // the check above could see something
}
