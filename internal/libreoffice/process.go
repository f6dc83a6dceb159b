package libreoffice

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/quire-dev/quire/internal/engine"
	"golang.org/x/sys/unix"
)

// process is the supervisor's handle on one running worker process.
type process struct {
	id      int    // the slot it runs in
	dir     string // the slot's directory: profile, temporary files
	cmd     *exec.Cmd
	stdin   *os.File // our end of the worker's stdin
	stdout  *os.File // our end of the worker's stdout
	stderr  *tail
	exited  chan struct{}      // closed once the process has been reaped
	memory  *engine.MemoryFile // its statm (each memory sample) and clear_refs (its peak reset before each job)
	version string             // LibreOffice's version information
	warm    time.Duration      // start and warm-up time, measured in the worker
	confine bool               // it runs in namespaces of its own and confines its filesystem (sandbox.go)
}

// startProcess starts worker id with its profile and temporary
// directories under dir, on cpu when it is not nil (affinity.go), and
// waits until it is warm and ready. adopt is called with the process once
// it runs, before the wait, so that the supervisor can kill it meanwhile;
// if adopt returns false, the process is killed and the start abandoned.
func startProcess(o *Options, id int, dir string, cpu *int, adopt func(*process) bool) (*process, error) {
	profile, tmp := filepath.Join(dir, "profile"), filepath.Join(dir, "tmp")
	if err := writeProfile(profile); err != nil {
		return nil, err
	}
	if err := resetDir(tmp); err != nil {
		return nil, err
	}
	p, err := spawn(o, id, tmp)
	if err != nil {
		return nil, err
	}
	p.dir = dir
	if !adopt(p) {
		p.kill()
		return nil, fmt.Errorf("convert: worker %d: start abandoned, the pool is closing", id)
	}
	if err := p.handshake(o, &message{Kind: kindInit, ProgramDir: o.ProgramDir, ProfileDir: profile, TempDir: tmp, CPU: cpu, Confine: p.confine}); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// spawn starts the worker program, isolated (sandbox.go), with pipes for
// the protocol.
func spawn(o *Options, id int, tmp string) (*process, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("convert: worker %d: %w", id, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("convert: worker %d: %w", id, err)
	}
	widen(inW)
	widen(outR)
	p := &process{id: id, stdin: inW, stdout: outR, stderr: newTail(o, id), exited: make(chan struct{})}
	p.cmd, err = startIsolated(o, func(isolated bool) *exec.Cmd {
		p.confine = isolated
		cmd := exec.Command(o.Executable, o.WorkerArgs...)
		cmd.Env = workerEnv(os.Environ(), tmp)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
		cmd.WaitDelay = 2 * time.Second // stop waiting for stderr held open by stray children
		return cmd
	})
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("convert: start worker %d (%s): %w", id, o.Executable, err)
	}
	p.memory = engine.OpenMemory(p.pid())
	go func() {
		p.cmd.Wait()
		p.memory.Close()
		close(p.exited)
	}()
	return p, nil
}

// pipeSize is the capacity asked for the pipes to and from a worker: a
// typical document and its PDF fit whole (the corpus's median document
// is 18 KiB, its median PDF 14 KiB, and one PDF in seven is over 64 KiB).
const pipeSize = 1 << 20

// widen gives the pipe of f pipeSize bytes instead of Linux's 64 KiB, so
// that a frame is written in one go rather than 64 KiB at a time, each
// waiting for the other side to read (a worker runs at a low priority:
// on a loaded machine each wait is one for the scheduler; results over
// 64 KiB spent 0.7 ms in the transfer at the median against 0.36 ms for
// the others). Best effort: past fs.pipe-max-size, or the user's pipe
// allowance, the pipe keeps its size. It goes through SyscallConn, not
// Fd, which would make f blocking and its deadlines void.
func widen(f *os.File) {
	if c, err := f.SyscallConn(); err == nil {
		c.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize) })
	}
}

// workerEnv is the supervisor's environment for a worker, with
// asynchronous preemption off (see worker.go), LibreOffice's headless
// graphics backend, TMPDIR and HOME in the worker's own directory (where
// a confined worker can write, engine.ConfineFilesystem), jemalloc preloaded when it
// is installed (see jemallocPath), the race detector's wait at exit
// off: a worker of a race-detector build (the tests') would otherwise
// spend a second at each exit, holding its slot's replacement back, and
// LibreOffice's fsyncs off (SAL_DISABLE_FSYNC, which sal reads once, set
// or not): everything it writes is in the worker's directory, read back
// or thrown away within the job or the worker's life, so an fsync buys
// nothing a crash could use, and it waits on the disk within the engine
// time of every job (bench/RESULTS.md, convert-latency).
func workerEnv(base []string, tmp string) []string {
	env := make([]string, 0, len(base)+6)
	godebug, gorace, preload := "asyncpreemptoff=1", "atexit_sleep_ms=0", jemallocPath()
	for _, kv := range base {
		switch {
		case strings.HasPrefix(kv, "GODEBUG="):
			if v := strings.TrimPrefix(kv, "GODEBUG="); v != "" {
				godebug = v + "," + godebug
			}
		case strings.HasPrefix(kv, "GORACE="):
			if v := strings.TrimPrefix(kv, "GORACE="); v != "" {
				gorace = v + " " + gorace
			}
		case strings.HasPrefix(kv, "LD_PRELOAD="):
			preload = "" // the operator's choice stands
			env = append(env, kv)
		case strings.HasPrefix(kv, "TMPDIR="), strings.HasPrefix(kv, "HOME="), strings.HasPrefix(kv, "SAL_USE_VCLPLUGIN="),
			strings.HasPrefix(kv, "SAL_DISABLE_FSYNC="):
		default:
			env = append(env, kv)
		}
	}
	env = append(env, "GODEBUG="+godebug, "GORACE="+gorace, "SAL_USE_VCLPLUGIN=svp", "SAL_DISABLE_FSYNC=1", "TMPDIR="+tmp, "HOME="+tmp)
	if preload != "" {
		env = append(env, "LD_PRELOAD="+preload)
	}
	return env
}

// jemallocPath returns the path of Debian's jemalloc (package
// libjemalloc2) for this architecture, or "" if it is not installed.
// LibreOffice allocates and frees small objects by the million for each
// document; with jemalloc instead of glibc's malloc a warm conversion
// takes about a fifth less CPU time (measured on the corpus), with the
// same output. Without it the workers run as well, only slower.
func jemallocPath() string {
	triplet := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	p := "/usr/lib/" + triplet + "/libjemalloc.so.2"
	if _, err := os.Stat(p); triplet == "" || err != nil {
		return ""
	}
	return p
}

// handshake sends the init message and waits for the ready message.
func (p *process) handshake(o *Options, init *message) error {
	deadline := time.Now().Add(o.StartTimeout)
	p.stdin.SetWriteDeadline(deadline)
	p.stdout.SetReadDeadline(deadline)
	err := writeFrame(p.stdin, init)
	var m *message
	if err == nil {
		m, err = readFrame(p.stdout)
	}
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("convert: worker %d (pid %d) was not ready within %v", p.id, p.pid(), o.StartTimeout)
	case err != nil:
		return fmt.Errorf("convert: worker %d (pid %d) died while starting: %s; %s", p.id, p.pid(), p.exitState(), p.stderr)
	case m.Kind != kindReady:
		return fmt.Errorf("convert: worker %d sent %q instead of ready", p.id, m.Kind)
	case m.Error != "":
		return fmt.Errorf("convert: worker %d could not start LibreOffice from %s: %s", p.id, o.ProgramDir, m.Error)
	}
	if m.Warning != "" {
		o.Logger.Warn("convert worker runs unconfined", "worker", p.id, "pid", p.pid(), "reason", m.Warning)
	}
	p.version, p.warm = m.Version, m.Engine
	return nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

// stop ends the worker gracefully: closing its stdin makes it exit; if
// it has not within the grace period, it is killed.
func (p *process) stop(grace time.Duration) {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(grace):
	}
	p.kill()
}

// kill sends SIGKILL to the worker's process group and reaps it.
func (p *process) kill() {
	syscall.Kill(-p.pid(), syscall.SIGKILL)
	<-p.exited
	p.stdin.Close()
	p.stdout.Close()
}

// exitState describes how the worker ended ("signal: segmentation
// fault"). It waits briefly for the process to be reaped.
func (p *process) exitState() string {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.String()
	case <-time.After(2 * time.Second):
		return "no longer answering"
	}
}

// rss returns the worker's resident memory in bytes, or 0 if it cannot
// be read.
func (p *process) rss() int64 { return p.memory.RSS() }

// peakRSS returns the highest resident memory of the worker, once it has
// been reaped, or 0.
func (p *process) peakRSS() int64 {
	if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10 // KiB on Linux
	}
	return 0
}

// resetDir empties dir, creating it if needed.
func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("convert: clean %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("convert: create %s: %w", dir, err)
	}
	return nil
}

// tail keeps the last bytes a worker wrote to stderr, for crash reports,
// and passes them on to the logger at debug level.
type tail struct {
	o  *Options
	id int
	mu sync.Mutex
	b  []byte
}

const tailSize = 1024

func newTail(o *Options, id int) *tail { return &tail{o: o, id: id} }

func (t *tail) Write(b []byte) (int, error) {
	t.o.Logger.Debug("convert worker stderr", "worker", t.id, "text", strings.TrimSpace(string(b)))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > tailSize {
		t.b = append(t.b[:0], t.b[len(t.b)-tailSize:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return "stderr empty"
	}
	return "stderr: " + s
}
