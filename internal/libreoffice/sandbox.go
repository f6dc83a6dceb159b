package libreoffice

import (
	"os/exec"
	"sync/atomic"

	"github.com/quire-dev/quire/internal/engine"
)

// LibreOffice must load nothing from outside the document it converts,
// and a document has many ways to ask it to (linked images, fields that
// include files, style sheets, SVG images that link to others, external
// relationships, ...). Three layers stand in the way:
//
//   - the profile forbids LibreOffice to follow links (profile.go);
//   - the input is rewritten before LibreOffice sees it, to drop what
//     reaches outside where the format allows (package safeinput: html.go, markdown.go,
//     packages.go, rtf.go);
//   - the operating system: each worker, and each cold soffice, runs in
//     namespaces of its own (a user namespace, so that no privilege is
//     needed, in which it is root but no one outside): a network namespace
//     with no interface but a loopback that is down, so that whatever
//     LibreOffice tries it reaches no host, not even this one; and mount
//     and PID namespaces in which it replaces its filesystem by a confined
//     one that holds none of the host's files but what LibreOffice needs
//     (engine.Confine, engine.ConfineFilesystem). Where the kernel refuses namespaces (some containers),
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
		cmd.SysProcAttr = engine.SandboxAttr(true)
		err := cmd.Start()
		if err == nil || !engine.NamespaceRefused(err) {
			return cmd, err
		}
		if !namespacesRefused.Swap(true) && log != nil {
			log.Warn("convert: the kernel refuses network namespaces; LibreOffice runs with the host's network, and only its settings and the input's rewriting keep documents from reaching it", "err", err)
		}
	}
	cmd := newCmd(false)
	cmd.SysProcAttr = engine.SandboxAttr(false)
	return cmd, cmd.Start()
}
