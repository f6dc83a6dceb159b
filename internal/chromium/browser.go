package chromium

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/quire-dev/quire/internal/engine"
)

// proxyToNowhere is the proxy every request that escaped the
// interception would have to go through: the discard port of the
// loopback, where nothing listens (or, in the browser's network
// namespace, no network at all). "<-loopback>" sends the loopback itself
// through it too.
const (
	proxyToNowhere = "127.0.0.1:9"
	proxyBypass    = "<-loopback>"
)

// fences are the flags that keep the browser from reaching anything of
// its own accord and make it small, on top of chromedp's defaults (which
// turn off background networking, sync, extensions, default apps, the
// crash reporter and more).
var fences = []chromedp.ExecAllocatorOption{
	chromedp.DisableGPU,
	chromedp.ProxyServer(proxyToNowhere),
	chromedp.Flag("proxy-bypass-list", proxyBypass),
	chromedp.Flag("disable-component-update", true),
	chromedp.Flag("disable-domain-reliability", true),
	chromedp.Flag("no-pings", true),
	chromedp.Flag("dns-prefetch-disable", true),
	chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"), // WebRTC would bypass the proxy
	// No back/forward cache: a job's page that the shared tab navigates
	// away from must end, not be kept alive beside the next job's.
	chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,OptimizationHints,MediaRouter,DialMediaRouteProvider,AutofillServerCommunication,PreloadTopChromeWebUI,WebUIOmniboxPopup,WebUIOmniboxAimPopup,BackForwardCache"),
}

// browserProc is one running browser.
type browserProc struct {
	ctx         context.Context // the browser's chromedp context
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	pid         int
	dir, tmp    string // its files, and its temporary files
	version     string
	confined    bool             // it runs in namespaces of its own
	limits      PageLimits       // what its pages may do (page.go)
	next        []chan tabResult // the next jobs' tabs, made ahead of them, oldest first
	shared      *tab             // where jobs with scripts off print, one after the other (tabFor)
	last        *tab             // the tab of its last job (Classify disposes of it)
	procs       processes        // its processes, for its memory samples
	logger      *slog.Logger
}

// launch starts a browser whose files are under dir, in namespaces of
// its own when isolated, without Chromium's own sandbox when noSandbox,
// and waits until it answers.
func launch(o *Options, dir string, isolated, noSandbox bool) (*browserProc, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	profile := filepath.Join(dir, "profile")
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return nil, err
	}
	// The browser's temporary files (its shared memory, with
	// disable-dev-shm-usage, and its singleton socket, whose path must stay
	// under the 108 bytes of a socket address) go to a short directory
	// of their own.
	tmp, err := os.MkdirTemp("", "quire-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], fences...)
	opts = append(opts,
		chromedp.ExecPath(o.Path),
		chromedp.UserDataDir(profile),
		chromedp.Env("HOME="+dir, "TMPDIR="+tmp), // shared memory files go to TMPDIR (disable-dev-shm-usage)
		chromedp.CombinedOutput(slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug).Writer()),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.Dir = dir
			if isolated {
				engine.Confine(cmd, engine.Confinement{Executable: o.Executable, WorkerArgs: o.WorkerArgs,
					Root: filepath.Join(dir, "root"), Dirs: []string{dir, tmp}, Dir: dir, NormalPriority: true})
				return
			}
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		}))
	if noSandbox {
		// In its user namespace the browser is root, and Chromium refuses
		// its own sandbox to root; the namespaces (no network, a confined
		// filesystem, its own PIDs) stand in for it. Where the kernel
		// refuses namespaces, Chromium's sandbox, built on them, cannot
		// start either. Otherwise chromedp turns the sandbox off only
		// when the server itself runs as root.
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	b := &browserProc{ctx: ctx, cancel: cancel, allocCancel: allocCancel, dir: dir, tmp: tmp, logger: o.Logger}
	started := make(chan error, 1)
	go func() {
		// The first Run starts the browser; it must not carry a timeout,
		// which would end the browser with it.
		v, err := chromedp.Run(ctx, func(ctx context.Context, t *chromedp.Target) (browser.GetVersionResult, error) {
			return cdp.Call(ctx, chromedp.FromContext(ctx).Browser, browser.GetVersion, cdp.Empty{})
		})
		b.version = v.Product
		started <- err
	}()
	timer := time.NewTimer(o.StartTimeout)
	defer timer.Stop()
	select {
	case err := <-started:
		if err != nil {
			b.stop()
			return nil, err
		}
	case <-timer.C:
		b.stop()
		<-started
		return nil, fmt.Errorf("the browser did not start within %v", o.StartTimeout)
	}
	b.pid = chromedp.FromContext(ctx).Browser.Process().Pid
	return b, nil
}

// kill kills the browser's processes at once: a confined browser is the
// first process of its PID namespace, which takes the others with it; an
// unconfined one leads its process group.
func (b *browserProc) kill() {
	if b.pid > 0 {
		syscall.Kill(-b.pid, syscall.SIGKILL)
		syscall.Kill(b.pid, syscall.SIGKILL)
	}
}

// stop ends the browser and removes its files.
func (b *browserProc) stop() {
	b.kill()
	b.cancel()
	b.allocCancel()
	os.RemoveAll(b.dir)
	os.RemoveAll(b.tmp)
}

// healthy reports whether the browser still answers, after a job failed.
func (b *browserProc) healthy() bool {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(b.ctx).Browser, browser.GetVersion, cdp.Empty{})
	return err == nil
}

// rss is the memory of the browser's processes, without the pages they
// share through files (their program and libraries).
func (b *browserProc) rss() int64 { return b.procs.rss(b.pid) }

// findProcessesEvery is how long a browser's list of processes serves
// its memory samples before its tree is walked again. A walk reads the
// children of each thread of each process, well over a hundred files
// for a browser and its renderers: about 6 ms on the loaded machine,
// which the memory watch spent every 10 ms of a print, slowing the print
// by a quarter (bench/RESULTS.md). A process started meanwhile (the
// renderer of a tab made ahead) counts from the next walk; the page's
// own renderer, where a page's memory grows, is found again as soon as a
// job takes a tab made ahead (forget). The shared tab's is found already:
// not walking the tree at each of its jobs saves 5-6 ms of quire's CPU
// per print (bench/RESULTS.md).
const findProcessesEvery = 200 * time.Millisecond

// processes is a browser's processes as last found, for its memory
// samples. It is safe for concurrent use.
type processes struct {
	mu    sync.Mutex
	pids  []int
	found time.Time
}

// rss is the private memory of the processes of the tree rooted at
// pid, found again when the list is older than findProcessesEvery.
func (ps *processes) rss(pid int) int64 {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if time.Since(ps.found) >= findProcessesEvery {
		ps.pids, ps.found = engine.ProcessTree(pid), time.Now()
	}
	return engine.PrivateRSS(ps.pids)
}

// forget makes the next sample find the processes again.
func (ps *processes) forget() {
	ps.mu.Lock()
	ps.found = time.Time{}
	ps.mu.Unlock()
}
