package convert

import (
	"errors"
	"os"
	"os/exec"
	"sync/atomic"
	"syscall"
)

// LibreOffice must load nothing from outside the document it converts,
// and a document has many ways to ask it to (linked images, fields that
// include files, style sheets, SVG images that link to others, external
// relationships, ...). Three layers stand in the way:
//
//   - the profile forbids LibreOffice to follow links (profile.go);
//   - the input is rewritten before LibreOffice sees it, to drop what
//     reaches outside where the format allows (html.go, markdown.go,
//     packages.go, rtf.go);
//   - the operating system: each worker, and each cold soffice, runs in
//     namespaces of its own (a user namespace, so that no privilege is
//     needed, in which it is root but no one outside): a network namespace
//     with no interface but a loopback that is down, so that whatever
//     LibreOffice tries it reaches no host, not even this one; and mount
//     and PID namespaces in which it replaces its filesystem by a confined
//     one that holds none of the host's files but what LibreOffice needs
//     (confine.go). Where the kernel refuses namespaces (some containers),
//     the processes run in the host's, and a warning says so once.

// namespacesRefused is set once the kernel has refused namespaces: the
// processes started after it run in the host's, without trying again.
var namespacesRefused atomic.Bool

// startIsolated starts the command that newCmd returns (a new one for
// each try) in namespaces of its own, or, if the kernel refuses, without. The process is in a process group of its own and is killed
// when the supervisor dies.
func startIsolated(o *Options, newCmd func(isolated bool) *exec.Cmd) (*exec.Cmd, error) {
	log := o.Logger
	if !o.hostNamespaces && !namespacesRefused.Load() {
		cmd := newCmd(true)
		cmd.SysProcAttr = sandboxAttr(true)
		err := cmd.Start()
		if err == nil || !namespaceRefused(err) {
			return cmd, err
		}
		if !namespacesRefused.Swap(true) && log != nil {
			log.Warn("convert: the kernel refuses network namespaces; LibreOffice runs with the host's network, and only its settings and the input's rewriting keep documents from reaching it", "err", err)
		}
	}
	cmd := newCmd(false)
	cmd.SysProcAttr = sandboxAttr(false)
	return cmd, cmd.Start()
}

// sandboxAttr is the process attributes of a worker or cold soffice: a
// process group of its own, so that a kill reaches anything LibreOffice
// started; death with the supervisor; and, with isolate, new user,
// network, mount and PID namespaces, where the process is root (the
// server's user outside), so that it can confine its filesystem.
func sandboxAttr(isolate bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if isolate {
		a.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	return a
}

// namespaceRefused reports whether err is the kernel refusing to create
// the namespaces (disabled, not permitted, or at its limit).
func namespaceRefused(err error) bool {
	for _, e := range []error{syscall.EPERM, syscall.EACCES, syscall.EINVAL, syscall.ENOSPC, syscall.EUSERS, syscall.ENOSYS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
