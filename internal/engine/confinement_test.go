package engine

import (
	"os"
	"os/exec"
	"testing"
)

// TestMemoryFile: the memory file, opened once, reads the process's
// memory as it is at each read, as a fresh statm does, and 0 once the
// process has ended or the file is closed.
func TestMemoryFile(t *testing.T) {
	self := OpenMemory(os.Getpid())
	defer self.Close()
	before := self.RSS()
	if before <= 0 || abs(before-RSS(os.Getpid())) > 16<<20 {
		t.Fatalf("resident memory read %d bytes, statm says %d", before, RSS(os.Getpid()))
	}
	grown := make([]byte, 64<<20)
	for i := 0; i < len(grown); i += 4096 {
		grown[i] = 1
	}
	if after := self.RSS(); after < before+48<<20 {
		t.Errorf("after touching 64 MiB, the same open file reads %d MiB, before %d MiB", after>>20, before>>20)
	}
	grown[len(grown)-1] = 2 // keep it alive until here

	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := OpenMemory(cmd.Process.Pid)
	defer m.Close()
	if m.RSS() <= 0 {
		t.Fatalf("a running process's memory reads %d", m.RSS())
	}
	cmd.Process.Kill()
	cmd.Wait()
	if n := m.RSS(); n != 0 {
		t.Errorf("an ended process's memory reads %d, want 0", n)
	}
	self.Close()
	if n := self.RSS(); n != 0 {
		t.Errorf("a closed file reads %d, want 0", n)
	}
	if n := OpenMemory(-1).RSS(); n != 0 {
		t.Errorf("no such process: %d, want 0", n)
	}
}

func abs(n int64) int64 { return max(n, -n) }
