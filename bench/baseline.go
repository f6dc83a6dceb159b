package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Earlier mains that benchmarks compare the tree with, in the same run.
const (
	// mainBeforeLimits is main before the per-key limits and the metering
	// of API operations were merged (a6b2b53): the signing path without
	// either.
	mainBeforeLimits = "bad231b"
	// mainBeforeFair is main before the fair conversion queue was merged
	// (347075a): one FIFO for every key, no cap on a key's workers.
	mainBeforeFair = "841be51"
	// mainGroupCommit is main before the quota was made exact (a1306e2):
	// a signing's count committed by the metering's group commit, a
	// second commit after the signing's record.
	mainGroupCommit = "a1306e2"
	// mainBeforeEngines is main before the engine layer (issue #41): the
	// fair queue for LibreOffice only, Chromium's first come first served.
	mainBeforeEngines = "5ab760d"
)

// baselineBinary builds bin/quire-COMMIT from commit of this repository
// (once: later runs reuse it), so that a benchmark can run an earlier
// main beside the tree on the same machine in the same run.
func baselineBinary(commit string) (string, error) {
	bin, err := filepath.Abs("bin/quire-" + commit)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	dir, err := os.MkdirTemp("", "quire-baseline-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	// An archive of the commit rather than a worktree: the repository's
	// list of worktrees is left alone.
	archive := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", commit, dir)
	if out, err := archive.CombinedOutput(); err != nil {
		return "", fmt.Errorf("git archive %s: %v: %s", commit, err, out)
	}
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/quire")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %v: %s", commit, err, out)
	}
	return bin, nil
}
