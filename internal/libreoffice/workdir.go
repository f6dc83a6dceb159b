package libreoffice

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// A pool without a configured directory works in a new directory under
// the system's temporary directory, which Close removes. A process killed
// with SIGKILL never runs Close, and its directory (LibreOffice profiles
// of some megabytes each, the files of the jobs it was running) would stay
// for good. So each such directory holds a lock file, flock(2)-locked by
// its pool for as long as the pool is open: the kernel releases the lock
// when the process dies, however it dies. A new pool removes the
// directories whose lock nobody holds any more, and leaves the directories
// of running instances alone.

const (
	workDirPattern = "quire-convert-*"
	lockName       = "owner.lock"
	// legacyAge: a directory without a lock file is either being created
	// at this instant (the lock follows within microseconds) or left by a
	// version that did not lock; past this age it is the latter.
	legacyAge = time.Hour
)

// newWorkDir creates and locks a work directory under parent (the
// system's temporary directory when empty). The lock lasts until the
// returned file is closed.
func newWorkDir(parent string) (string, *os.File, error) {
	dir, err := os.MkdirTemp(parent, workDirPattern)
	if err != nil {
		return "", nil, fmt.Errorf("convert: create work directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("convert: lock work directory %s: %w", dir, err)
	}
	return dir, lock, nil
}

// removeStaleWorkDirs removes the work directories under parent (the
// system's temporary directory when empty) that no running pool holds.
func removeStaleWorkDirs(parent string, log *slog.Logger) {
	if parent == "" {
		parent = os.TempDir()
	}
	dirs, _ := filepath.Glob(filepath.Join(parent, workDirPattern))
	for _, dir := range dirs {
		if stale, why := isStale(dir); stale {
			if err := os.RemoveAll(dir); err != nil {
				log.Warn("convert: cannot remove a stale work directory", "dir", dir, "err", err)
				continue
			}
			log.Info("convert: removed a stale work directory", "dir", dir, "reason", why)
		}
	}
}

// isStale reports whether the work directory dir has no living owner.
func isStale(dir string) (bool, string) {
	info, err := os.Lstat(dir)
	if err != nil || !info.IsDir() || info.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
		return false, "" // not ours to judge
	}
	lock, err := os.Open(filepath.Join(dir, lockName))
	if errors.Is(err, os.ErrNotExist) {
		return time.Since(info.ModTime()) > legacyAge, "no owner lock, older than " + legacyAge.String()
	}
	if err != nil {
		return false, ""
	}
	defer lock.Close()
	err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		return false, "" // locked: its pool runs
	}
	// Ours now; removing the directory ends the lock with the file.
	return true, "its owner process is gone"
}
