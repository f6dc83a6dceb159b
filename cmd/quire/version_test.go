package main

import (
	"os/exec"
	"testing"
)

// TestVersion: quire --version and quire version print the version the
// binary was built with.
func TestVersion(t *testing.T) {
	bin := t.TempDir() + "/quire"
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, arg := range []string{"--version", "version"} {
		if out, err := exec.Command(bin, arg).Output(); err != nil || string(out) != "v9.8.7-test\n" {
			t.Errorf("quire %s = %q (%v), want v9.8.7-test", arg, out, err)
		}
	}
}
