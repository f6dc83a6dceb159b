package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestDispatchWithoutACommand: quire without a command, or with one it
// does not know, shows its usage on stderr and exits 2; asked for help it
// shows the same usage on stdout and exits 0; asked for its version it
// prints it. In-process: the paths that need no data directory.
func TestDispatchWithoutACommand(t *testing.T) {
	t.Parallel()
	call := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, stdout, usage := call()
	if code != 2 || stdout != "" || !strings.HasPrefix(usage, "usage: quire COMMAND") {
		t.Fatalf("quire: exit %d, stdout %q, stderr %.80q; want 2 and the usage on stderr", code, stdout, usage)
	}
	for _, c := range commands() {
		if !strings.Contains(usage, "\n  "+c.name+" ") || !strings.Contains(usage, c.summary) {
			t.Errorf("the usage does not list %s with its summary:\n%s", c.name, usage)
		}
	}
	code, stdout, stderr := call("frobnicate")
	if want := "quire: unknown command \"frobnicate\"\n" + usage; code != 2 || stdout != "" || stderr != want {
		t.Errorf("quire frobnicate: exit %d, stdout %q, stderr %q; want 2 and %q", code, stdout, stderr, want)
	}
	for _, h := range []string{"help", "-h", "--help"} {
		if code, stdout, stderr := call(h); code != 0 || stdout != usage || stderr != "" {
			t.Errorf("quire %s: exit %d, stdout %.80q, stderr %q; want 0 and the usage on stdout", h, code, stdout, stderr)
		}
	}
	for _, v := range []string{"version", "--version", "-version"} {
		if code, stdout, stderr := call(v); code != 0 || stdout != version+"\n" || stderr != "" {
			t.Errorf("quire %s: exit %d, stdout %q, stderr %q; want 0 and %q", v, code, stdout, stderr, version)
		}
	}
}
