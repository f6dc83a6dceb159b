package main

import (
	"os/exec"
	"testing"
)

// TestVersion: quire --version and quire version print the version the
// binary was built with (TestMain builds it with builtVersion).
func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "version"} {
		if out, err := exec.Command(binary, arg).Output(); err != nil || string(out) != builtVersion+"\n" {
			t.Errorf("quire %s = %q (%v), want %s", arg, out, err, builtVersion)
		}
	}
}
