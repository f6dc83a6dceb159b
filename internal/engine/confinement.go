package engine

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// What the engines' processes share, the LibreOffice workers (package
// libreoffice) and the browsers (package chromium): new namespaces and a
// confined filesystem (confine.go), a low priority, and the memory
// figures of /proc.

// Confinement says how to confine a program: the quire program started
// as Executable with WorkerArgs (the hidden worker mode, whose RunWorker
// confines itself and then executes the program), Root the directory of
// its confined root, Dirs the directories it may write (and Dir among
// them its working directory). The program runs at the engines' low
// priority (LowPriority) unless NormalPriority.
type Confinement struct {
	Executable     string
	WorkerArgs     []string
	Root           string
	Dirs           []string
	Dir            string
	NormalPriority bool
}

// Confine changes cmd, not yet started, so that its program runs in new
// user, network, mount and PID namespaces, with a filesystem holding only
// the system's programs, libraries and fonts and c.Dirs (SandboxAttr,
// confine.go). Its extra files (such as a DevTools pipe) are kept. Where
// the kernel refuses namespaces, cmd.Start fails with an error for which
// NamespaceRefused is true.
func Confine(cmd *exec.Cmd, c Confinement) {
	spec := confinedExec{Root: c.Root, ProgramDir: filepath.Dir(cmd.Path), Dirs: c.Dirs, Dir: c.Dir, Argv: append([]string{cmd.Path}, cmd.Args[1:]...),
		NormalPriority: c.NormalPriority}
	cmd.Path = c.Executable
	cmd.Args = append([]string{c.Executable}, c.WorkerArgs...)
	cmd.Env = append(cmd.Env, spec.env())
	cmd.SysProcAttr = SandboxAttr(true)
}

// SandboxAttr is the process attributes of an engine's process: a
// process group of its own, so that a kill reaches anything the engine
// started; death with the supervisor; and, with isolate, new user,
// network, mount and PID namespaces, where the process is root (the
// server's user outside), so that it can confine its filesystem.
func SandboxAttr(isolate bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if isolate {
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	return a
}

// NamespaceRefused reports whether err, of starting a command with
// SandboxAttr(true) (as Confine sets it), is the kernel refusing to create
// the namespaces (disabled, not permitted, or at its limit).
func NamespaceRefused(err error) bool {
	for _, e := range []error{syscall.EPERM, syscall.EACCES, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.ENOSYS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// WorkerNice is the scheduling priority of the engines (19 is the
// lowest), set on the thread that starts one and so inherited by every
// thread it starts: where the cores are busy, a supervisor's memory
// sampling waits for one, and the engine waits longer, so it cannot run
// far past its limit meanwhile. It also keeps conversions from slowing the
// HTTP service.
const WorkerNice = 10

// LowPriority lowers the calling thread's priority to WorkerNice.
func LowPriority() {
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, WorkerNice) // 0: this thread, on Linux
}

// ProcessTree returns process pid and all its descendants.
func ProcessTree(pid int) []int { return processTree(pid, nil) }

// processTree appends process pid and all its descendants to pids: it
// reads the children of each of their threads.
func processTree(pid int, pids []int) []int {
	pids = append(pids, pid)
	lists, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, list := range lists {
		b, _ := os.ReadFile(list)
		for _, c := range strings.Fields(string(b)) {
			if child, err := strconv.Atoi(c); err == nil {
				pids = processTree(child, pids)
			}
		}
	}
	return pids
}

// PrivateRSS returns the resident memory of processes pids that they do
// not share through files, in bytes: a browser's processes each map the
// same large program, which a sum of their resident memory would count
// again for each. A process that has ended counts 0.
func PrivateRSS(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		resident, shared := statm(pid)
		total += resident - shared
	}
	return total
}

// RSS returns the resident memory of process pid in bytes, read from
// /proc/PID/statm, or 0 if it cannot be read.
func RSS(pid int) int64 {
	resident, _ := statm(pid)
	return resident
}

// statm reads the resident and the file-backed or shared resident memory
// of process pid from /proc/PID/statm, in bytes.
func statm(pid int) (resident, shared int64) {
	b, err := os.ReadFile(statmPath(pid))
	if err != nil {
		return 0, 0
	}
	return parseStatm(b)
}

func statmPath(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/statm" }

// parseStatm returns the resident and the shared memory, in bytes, of
// the content b of a statm file.
func parseStatm(b []byte) (resident, shared int64) {
	fields := strings.Fields(string(b))
	if len(fields) < 3 {
		return 0, 0
	}
	resident, _ = strconv.ParseInt(fields[1], 10, 64)
	shared, _ = strconv.ParseInt(fields[2], 10, 64)
	page := int64(os.Getpagesize())
	return resident * page, shared * page
}

// MemoryFile is a process's memory files in /proc, opened once: its
// statm, which a memory watch reads every MemorySampleInterval, and its
// clear_refs, which resets the kernel's count of its peak before each
// job. Each read or reset is then one system call: opening a file takes
// seven to ten (os.Open registers it with Go's poller, which Linux
// refuses), and os.File.ReadAt reads a second time after a statm's short
// read. The open files stay the process's own even if its PID is reused.
type MemoryFile struct {
	statm     *os.File
	read      syscall.RawConn // statm's descriptor, for one pread per sample
	clearRefs *os.File
}

// OpenMemory opens the memory files of process pid; when it cannot, the
// reads give 0, as RSS does, and resets do nothing.
func OpenMemory(pid int) *MemoryFile {
	m := &MemoryFile{}
	if f, err := os.Open(statmPath(pid)); err == nil {
		if rc, err := f.SyscallConn(); err == nil {
			m.statm, m.read = f, rc
		} else {
			f.Close()
		}
	}
	if f, err := os.OpenFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", os.O_WRONLY, 0); err == nil {
		m.clearRefs = f
	}
	return m
}

// RSS returns the process's resident memory in bytes, or 0 if it cannot
// be read (the process has ended, or the file is closed).
func (m *MemoryFile) RSS() int64 {
	if m.read == nil {
		return 0
	}
	var b [256]byte // seven numbers
	n := 0
	err := m.read.Read(func(fd uintptr) bool {
		var err error
		if n, err = syscall.Pread(int(fd), b[:], 0); err != nil {
			n = 0
		}
		return true
	})
	if n <= 0 || err != nil {
		return 0
	}
	resident, _ := parseStatm(b[:n])
	return resident
}

// ResetPeak resets the kernel's count of the process's peak resident
// memory (its VmHWM, and so the maximum resident size its parent reads
// once it has ended), so that the peak it shows is reached after now.
func (m *MemoryFile) ResetPeak() {
	if m.clearRefs != nil {
		m.clearRefs.Write([]byte("5"))
	}
}

// Close closes the files.
func (m *MemoryFile) Close() {
	for _, f := range []*os.File{m.statm, m.clearRefs} {
		if f != nil {
			f.Close()
		}
	}
}
