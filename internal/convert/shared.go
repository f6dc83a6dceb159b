package convert

import (
	"os/exec"
	"path/filepath"
)

// What the browser engine (package chromium) shares with the LibreOffice
// workers: the namespaces and confined filesystem of sandbox.go and
// confine.go, and the memory figures of memory.go.

// Confinement says how to confine a program: the quire program started
// as Executable with WorkerArgs (the hidden worker mode, whose RunWorker
// confines itself and then executes the program), Root the directory of
// its confined root, Dirs the directories it may write (and Dir among
// them its working directory). The program runs at the LibreOffice
// workers' low priority (memory.go) unless NormalPriority.
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
// the system's programs, libraries and fonts and c.Dirs (sandbox.go,
// confine.go). Its extra files (such as a DevTools pipe) are kept. Where
// the kernel refuses namespaces, cmd.Start fails with an error for which
// NamespaceRefused is true.
func Confine(cmd *exec.Cmd, c Confinement) {
	spec := confinedExec{Root: c.Root, ProgramDir: filepath.Dir(cmd.Path), Dirs: c.Dirs, Dir: c.Dir, Argv: append([]string{cmd.Path}, cmd.Args[1:]...),
		NormalPriority: c.NormalPriority}
	cmd.Path = c.Executable
	cmd.Args = append([]string{c.Executable}, c.WorkerArgs...)
	cmd.Env = append(cmd.Env, spec.env())
	cmd.SysProcAttr = sandboxAttr(true)
}

// NamespaceRefused reports whether err, of starting a command changed by
// Confine, is the kernel refusing the namespaces.
func NamespaceRefused(err error) bool { return namespaceRefused(err) }

// ProcessTree returns process pid and all its descendants.
func ProcessTree(pid int) []int { return processTree(pid, nil) }

// PrivateRSS returns the resident memory of processes pids that they do
// not share through files, in bytes: a browser's processes each map the
// same large program, which a sum of their resident memory would count
// again for each. A process that has ended counts 0.
func PrivateRSS(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		total += privateRSSOf(pid)
	}
	return total
}
