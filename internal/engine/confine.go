package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// An engine's process started in namespaces of its own (SandboxAttr): a
// LibreOffice worker, a cold soffice, a browser, also gets a filesystem of
// its own before the engine starts: a root holding only what the engines
// need to run (the system's programs and
// libraries under /usr, fonts, its configuration, a few files of /etc and
// devices of /dev, a /proc of its own processes) and, writable, the
// directories of its profile and of its jobs. The server's data
// directory, keys, home directories and every other file of the host are
// not there to be linked to, whatever a document names.

// readOnlyPaths are bound read-only into the confined root when they
// exist; a symbolic link (such as /lib -> usr/lib) is copied as a link.
var readOnlyPaths = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/fonts", "/etc/libreoffice", "/etc/alternatives", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/localtime", "/etc/papersize", "/etc/mime.types",
	"/var/cache/fontconfig",
	"/etc/chromium", "/etc/chromium.d", // the browser engine's (package chromium) settings: flags, no secrets
}

// devices are bound from the host's /dev.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// ConfineFilesystem replaces the filesystem of this process, which must
// be the first of a new PID namespace (and so of the new mount namespace
// that came with it), by the confined root built under root, with dirs
// (and programDir, if outside /usr) visible at their own paths; dirs are
// writable.
func ConfineFilesystem(root, programDir string, dirs []string) error {
	if os.Getpid() != 1 {
		return errors.New("not in a PID namespace of its own; refusing to change mounts")
	}
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	if err := syscall.Mount("tmpfs", root, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("mount the confined root: %w", err)
	}
	// First the file systems of its own, then the binds, which may lie
	// under them (the worker's directories are under /tmp, usually).
	for _, m := range []struct{ path, fstype, opts string }{{"/proc", "proc", ""}, {"/tmp", "tmpfs", "mode=1777,size=64m"}, {"/dev/shm", "tmpfs", "mode=1777,size=64m"}} {
		dst := filepath.Join(root, m.path)
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
		if err := syscall.Mount(m.fstype, dst, m.fstype, syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, m.opts); err != nil {
			return fmt.Errorf("mount %s: %w", m.path, err)
		}
	}
	ro := append([]string(nil), readOnlyPaths...)
	if abs, err := filepath.Abs(programDir); err == nil && !within(abs, "/usr") {
		ro = append(ro, installRoot(abs))
	}
	for _, p := range ro {
		if err := bind(root, p, true); err != nil {
			return err
		}
	}
	for _, d := range append(devices, dirs...) {
		if err := bind(root, d, false); err != nil {
			return err
		}
	}
	old := filepath.Join(root, ".old-root")
	if err := os.Mkdir(old, 0o700); err != nil {
		return err
	}
	if err := syscall.PivotRoot(root, old); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := syscall.Chdir("/"); err != nil {
		return err
	}
	if err := syscall.Unmount("/.old-root", syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's filesystem: %w", err)
	}
	if err := os.Remove("/.old-root"); err != nil {
		return err
	}
	// Nothing more to create at the top: HOME and TMPDIR are the worker's
	// own directories.
	if err := syscall.Mount("", "/", "", syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
		return fmt.Errorf("make the confined root read-only: %w", err)
	}
	return nil
}

// bind makes the host's path visible at the same path under root.
func bind(root, path string, readOnly bool) error {
	info, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	dst := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	switch {
	case info.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(path)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case info.IsDir():
		err = os.Mkdir(dst, 0o755)
	default:
		err = os.WriteFile(dst, nil, 0o644)
	}
	if err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := syscall.Mount(path, dst, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", path, err)
	}
	if !readOnly {
		return nil
	}
	// A remount must keep the flags the host's mount has (the kernel locks
	// them in a user namespace).
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return err
	}
	const kept = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC | syscall.MS_NOATIME | syscall.MS_NODIRATIME | syscall.MS_RELATIME
	if err := syscall.Mount("", dst, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY|uintptr(st.Flags)&kept, ""); err != nil {
		return fmt.Errorf("make %s read-only: %w", path, err)
	}
	return nil
}

// installRoot is the tree of a LibreOffice installed outside /usr, to be
// bound read-only: the parent of its program directory (e.g.
// /opt/libreoffice7.6, as The Document Foundation's packages install it),
// or, for Debian's packages extracted into a directory of their own
// (bench/lo74: DIR/usr/lib/libreoffice/program), that directory, which
// also holds the libraries, configuration and files their links lead to
// (DIR/usr/lib/x86_64-linux-gnu, DIR/etc/libreoffice, DIR/usr/share).
func installRoot(programDir string) string {
	if root, ok := strings.CutSuffix(programDir, LibreOfficeProgramDir); ok && root != "" {
		return root
	}
	return filepath.Dir(programDir)
}

// LibreOfficeProgramDir is where Debian's LibreOffice packages install
// its program directory, the one that holds libmergedlo.so.
const LibreOfficeProgramDir = "/usr/lib/libreoffice/program"

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (len(rel) < 3 || rel[:3] != "../")
}

// confinedExecEnv names the variable that makes the worker program
// confine itself and then execute another program (RunConfined): a
// browser and the cold soffice are started that way (Confine), being
// programs that cannot confine themselves.
const confinedExecEnv = "QUIRE_CONVERT_CONFINED_EXEC"

// confinedExec is the value of confinedExecEnv, in JSON.
type confinedExec struct {
	Root, ProgramDir string   // as confine takes them
	Dirs             []string // writable
	Dir              string   // the working directory
	Argv             []string // the program and its arguments
	NormalPriority   bool     // keep the priority, instead of WorkerNice
}

func (c confinedExec) env() string {
	b, _ := json.Marshal(c) // strings only: cannot fail
	return confinedExecEnv + "=" + string(b)
}

// RunConfined makes this process the program that Confine started it
// for, when it was started so (the worker mode of the quire program, which
// must call it first): it confines itself, its filesystem too unless
// hostFilesystem (the tests' scripted programs, which use the test's
// files), then executes the program. It returns whether it was asked
// and, if it was, the exit code of a failure: on success it does not
// return.
func RunConfined(hostFilesystem bool) (code int, asked bool) {
	spec := os.Getenv(confinedExecEnv)
	if spec == "" {
		return 0, false
	}
	if hostFilesystem {
		return execConfined(spec, nil), true
	}
	return execConfined(spec, ConfineFilesystem), true
}

// confineFunc confines a process's filesystem (ConfineFilesystem).
type confineFunc func(root, programDir string, dirs []string) error

// execConfined confines this process as the JSON spec says (with
// confineFS; nil: not at all), then replaces it by the program the spec
// names. It returns only on failure, with an exit code. Should the
// confinement fail, the program runs all the same, as the warm workers
// then do: their start has logged the reason already.
func execConfined(spec string, confineFS confineFunc) int {
	var c confinedExec
	if err := json.Unmarshal([]byte(spec), &c); err != nil || len(c.Argv) == 0 {
		fmt.Fprintf(os.Stderr, "quire: bad %s: %v\n", confinedExecEnv, err)
		return 1
	}
	os.Unsetenv(confinedExecEnv)
	if confineFS != nil {
		if err := confineFS(c.Root, c.ProgramDir, c.Dirs); err != nil {
			fmt.Fprintf(os.Stderr, "quire: runs unconfined: %v\n", err)
		}
	}
	runtime.LockOSThread() // the thread that executes the program passes its priority on
	if !c.NormalPriority {
		LowPriority()
	}
	if err := os.Chdir(c.Dir); err != nil {
		fmt.Fprintf(os.Stderr, "quire: %v\n", err)
		return 1
	}
	err := syscall.Exec(c.Argv[0], c.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "quire: exec %s: %v\n", c.Argv[0], err)
	return 1
}
