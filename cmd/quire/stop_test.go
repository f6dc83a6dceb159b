package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCleanStopSaysOnlyWhatHappened: SIGTERM to an idle server with warm
// conversion workers stops it with exit 0 and no warning.
func TestCleanStopSaysOnlyWhatHappened(t *testing.T) {
	in := start(t, t.TempDir(), "QUIRE_CONVERT_WORKERS=1")
	deadline := time.Now().Add(90 * time.Second)
	tick := time.Tick(100 * time.Millisecond)
	for st, b := in.get("/v1/health"); st != 200; st, b = in.get("/v1/health") {
		if time.Now().After(deadline) {
			t.Fatalf("not ready (apt-get install libreoffice-writer-nogui): %d %s", st, b)
		}
		<-tick
	}
	in.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-in.done; err != nil {
		t.Fatalf("exit: %v\n%s", err, in.logs)
	}
	logs := in.logs.String()
	if !strings.Contains(logs, `"msg":"stopped"`) {
		t.Errorf("no line says the server stopped:\n%s", logs)
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			t.Errorf("a clean stop logs: %s", line)
		}
	}
}
