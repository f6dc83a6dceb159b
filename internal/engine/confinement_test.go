package engine

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
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

// TestMemoryFileResetPeak: a process that grew by 64 MiB and gave it
// back shows that peak until ResetPeak, and its memory as it is now
// after. The process is this test's binary, run again as peakHelper.
func TestMemoryFileResetPeak(t *testing.T) {
	if os.Getenv(peakHelperEnv) == "1" {
		peakHelper()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryFileResetPeak$")
	cmd.Env = append(os.Environ(), peakHelperEnv+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close() // the helper exits when its stdin closes
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "given back\n" {
		t.Fatalf("the helper said %q (%v)", line, err)
	}
	m := OpenMemory(cmd.Process.Pid)
	defer m.Close()
	peak, now := statusPeak(t, cmd.Process.Pid)
	if peak < now+48<<20 {
		t.Fatalf("before the reset the peak is %d MiB and the memory %d MiB: the helper's 64 MiB did not show", peak>>20, now>>20)
	}
	m.ResetPeak()
	if peak, now := statusPeak(t, cmd.Process.Pid); peak > now+16<<20 {
		t.Errorf("after the reset the peak is %d MiB and the memory %d MiB, want the peak reset to the memory", peak>>20, now>>20)
	}
	m.Close()
	m.ResetPeak() // closed: does nothing, and does not fail
}

const peakHelperEnv = "QUIRE_TEST_PEAK_HELPER"

// peakHelper grows by 64 MiB, gives it back to the system, says so, and
// waits for its stdin to close.
func peakHelper() {
	grown := make([]byte, 64<<20)
	for i := 0; i < len(grown); i += 4096 {
		grown[i] = 1
	}
	runtime.KeepAlive(grown)
	grown = nil
	debug.FreeOSMemory()
	fmt.Println("given back")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// statusPeak returns process pid's peak resident memory (VmHWM) and its
// resident memory now (VmRSS), in bytes.
func statusPeak(t *testing.T, pid int) (peak, now int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		kib, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch name {
		case "VmHWM":
			peak = kib << 10
		case "VmRSS":
			now = kib << 10
		}
	}
	return peak, now
}
