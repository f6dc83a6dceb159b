package libreoffice

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
)

// TestStaleWorkDirsAreRemoved kills a process that holds a pool with
// SIGKILL, as an out-of-memory killer or an operator would, and checks
// that the next pool removes the directory it left, but not the directory
// of a pool that still runs, nor a directory that is not a pool's.
func TestStaleWorkDirsAreRemoved(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	holder := func() (*exec.Cmd, string) {
		cmd := exec.Command(os.Args[0], "quire-test-worker", "pool")
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
		dir, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatalf("the pool holder printed no directory: %v", err)
		}
		return cmd, strings.TrimSpace(dir)
	}
	killed, stale := holder()
	_, alive := holder()
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	other := filepath.Join(tmp, "quire-converter-notes") // not a pool's
	os.Mkdir(other, 0o700)
	for _, d := range []string{stale, alive} {
		if !strings.HasPrefix(d, tmp) {
			t.Fatalf("the pool worked in %s, not under TMPDIR %s", d, tmp)
		}
	}
	if _, err := os.Stat(filepath.Join(stale, "worker-1", "profile")); err != nil {
		t.Fatalf("the killed pool left no profile behind, the test proves nothing: %v", err)
	}

	// A new pool in a directory of its own cleans up as it starts.
	p2, err := NewPool(Options{PoolOptions: engine.PoolOptions{Workers: 1, Executable: os.Args[0], WorkerArgs: []string{"quire-test-worker", "script"}}, hostNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close(t.Context())
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the directory of the killed pool is still there (%v)", err)
	}
	for _, d := range []string{alive, other, p2.dir} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
