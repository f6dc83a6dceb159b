package chromium

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/css"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html/charset"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	qpdf "github.com/quire-dev/quire/internal/pdf"
)

// site is the domain under which each job's page and files load, from
// an origin of its own (newOrigin). The .invalid domain is reserved never
// to resolve (RFC 6761): only the interception answers it.
const site = "quire.invalid"

// newOrigin is a job's origin: a random name under site, which no other
// job's page can guess, so that no entry that a job leaves in the caches
// of the browser and of its renderer (kept by URL) is ever asked for
// again, and so that the interception answers each job's requests only
// with its own files. All are the same site, so that the jobs of a shared
// tab stay in its renderer.
func newOrigin() string { return "http://" + strings.ToLower(rand.Text()) + "." + site }

// defaultMargin is the margin on every side when the job sets none, in
// inches (10 mm, Chromium's own default).
const defaultMargin = 10 / 25.4

// tabTimeout bounds making a tab, and disposing of one: past it the
// browser is killed and replaced.
const tabTimeout = 10 * time.Second

// tab is a page alone in a fresh browser context (an incognito-like
// profile in memory), made before the job that first prints in it:
// making a context and its page (the browser starts a renderer process
// for them) and attaching to the page took most of a job's time when it
// was done after the job came. A job with scripts on has a tab of its
// own, disposed of after it. The jobs with scripts off of one tenant
// print one after the other in the browser's shared tab, in its one
// renderer (tabFor).
type tab struct {
	id     cdp.BrowserContextID
	ctx    context.Context // the page's chromedp context
	cancel context.CancelFunc
	page   *chromedp.Target
	tenant string // whose jobs the tab prints, when shared
}

// openTab makes a tab in b, with scripts off and every request of the
// page paused for the job's fileServer to answer. It has the DevTools
// domains that chromedp enables on attaching and that printing does not
// use (DOM, CSS, Network, Log) turned off again, so that the browser does
// not report every node, style sheet and request of the page.
func (b *browserProc) openTab() (*tab, error) {
	timer := time.AfterFunc(tabTimeout, b.kill)
	defer timer.Stop()
	st := newSteps()
	defer st.log(b.logger, "chromium: tab made")
	br := chromedp.FromContext(b.ctx).Browser
	no := false
	bc, err := cdp.Call(b.ctx, br, target.CreateBrowserContext, target.CreateBrowserContextParams{DisposeOnDetach: &no,
		ProxyServer: proxyToNowhere, ProxyBypassList: proxyBypass})
	if err != nil {
		return nil, fmt.Errorf("making a browser context: %w", err)
	}
	st.done("context")
	tb := &tab{id: bc.BrowserContextID, cancel: func() {}}
	tgt, err := cdp.Call(b.ctx, br, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", BrowserContextID: tb.id})
	if err != nil {
		b.closeTab(tb)
		return nil, fmt.Errorf("making a page: %w", err)
	}
	st.done("page")
	// The first Run attaches to the page; like the browser's, it must not
	// carry a timeout, which would end the session with it.
	tb.ctx, tb.cancel = chromedp.NewContext(b.ctx, chromedp.WithTargetID(tgt.TargetID), chromedp.WithDetachOnCancel())
	_, err = chromedp.Run(tb.ctx, func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		tb.page = t
		for _, call := range []func() error{
			func() error { _, err := cdp.Call(ctx, t, dom.Disable, cdp.Empty{}); return err },
			func() error { _, err := cdp.Call(ctx, t, css.Disable, cdp.Empty{}); return err },
			func() error { _, err := cdp.Call(ctx, t, network.Disable, cdp.Empty{}); return err },
			func() error { _, err := cdp.Call(ctx, t, log.Disable, cdp.Empty{}); return err },
			func() error {
				_, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}})
				return err
			},
			func() error { return scripts(ctx, t, false) },
		} {
			if err := call(); err != nil {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, nil
	})
	if err != nil {
		b.closeTab(tb)
		return nil, fmt.Errorf("preparing a page: %w", err)
	}
	st.done("attach")
	return tb, nil
}

// tabsAhead is how many tabs a browser keeps made ahead of the jobs that
// take one: those with scripts on, and the first with scripts off of a
// tenant, whose tab becomes the shared one. With the headless shell,
// making one (mostly its renderer process starting) while a job prints
// costs the job less than making it after the answer costs the next job,
// which a client sending such pages back to back waits for: with two in
// stock, the next job's tab was made during the previous job
// (bench/RESULTS.md). Each holds an idle renderer.
const tabsAhead = 2

// prepare starts making tabs in the background until tabsAhead are made
// or under way.
func (b *browserProc) prepare() {
	for len(b.next) < tabsAhead {
		next := make(chan tabResult, 1)
		b.next = append(b.next, next)
		go func() {
			tb, err := b.openTab()
			next <- tabResult{tb, err}
		}()
	}
}

type tabResult struct {
	tab *tab
	err error
}

// takeTab hands out the oldest tab made ahead, waiting for it if need
// be, and starts making its replacement. The memory watch's next sample
// finds the processes again, the tab's renderer among them.
func (b *browserProc) takeTab() (*tab, error) {
	b.prepare()
	r := <-b.next[0]
	b.next = b.next[1:]
	b.procs.forget()
	b.prepare()
	return r.tab, r.err
}

// tabFor hands out the tab j prints in. A job with scripts off prints in
// the shared tab when its tenant's job was the last there: each job
// navigates it to an origin of its own, so the page reuses the tab's
// warm renderer instead of starting one, which is most of the CPU of a
// print in a fresh tab (bench/RESULTS.md). A renderer is never shared
// by two tenants, nor kept by a job with scripts on: a page that took
// hold of its renderer would see the later pages printed in it. A job
// of another tenant takes a fresh tab, which becomes the shared one.
func (b *browserProc) tabFor(j *job) (*tab, error) {
	if j.opts.JavaScript {
		return b.takeTab()
	}
	tenant := quire.Tenant(j.ctx)
	if b.shared != nil && b.shared.tenant == tenant {
		return b.shared, nil
	}
	b.dropShared()
	tb, err := b.takeTab()
	if err == nil {
		tb.tenant, b.shared = tenant, tb
	}
	return tb, err
}

// release is done with tb after its job, whose printing failed when
// failed. The shared tab is kept as it is: the next job's navigation
// ends its page (the back/forward cache is off), as navigating it to
// about:blank after the answer would have, which cost 20-40 ms of CPU
// and delayed the next job (bench/RESULTS.md). A shared tab whose job
// failed, or whose session ended (its client left), is disposed of: its
// page may be stuck in anything. Any other tab is disposed of.
func (b *browserProc) release(tb *tab, failed bool) {
	switch {
	case tb != b.shared:
		go b.closeTab(tb)
	case failed || tb.ctx.Err() != nil:
		b.dropShared()
	}
}

// dropShared disposes of the shared tab, if any, in the background.
func (b *browserProc) dropShared() {
	if b.shared != nil {
		go b.closeTab(b.shared)
		b.shared = nil
	}
}

// scripts turns the page's scripts on or off.
func scripts(ctx context.Context, t *chromedp.Target, on bool) error {
	_, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on})
	return err
}

// closeTab disposes of tb's browser context, which closes its page,
// before the page's session is cancelled: cancelled first, chromedp's
// detach waits seconds for the browser. A browser that fails to is
// killed, to be replaced: it would keep what the context held.
func (b *browserProc) closeTab(tb *tab) {
	ctx, cancel := context.WithTimeout(b.ctx, tabTimeout)
	defer cancel()
	defer tb.cancel()
	_, err := cdp.Call(ctx, chromedp.FromContext(b.ctx).Browser, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: tb.id})
	if err != nil && b.ctx.Err() == nil {
		b.logger.Warn("chromium: the browser failed to dispose of a page; it is replaced", "pid", b.pid, "err", err)
		b.kill()
	}
}

// PageLimits bound what a page may do while it loads and prints, apart
// from the job's time and memory limits: a page that shows a dialog, goes
// elsewhere, runs scripts without end or prints without end holds a
// browser for no document.
type PageLimits struct {
	// ScriptTimeout is how long a page with scripts on may take to load
	// (its load event); then its scripts are stopped and it is printed
	// (default DefaultScriptTimeout; past it ErrScriptTimeout).
	ScriptTimeout time.Duration
	// MaxPages is the most pages of a print (default DefaultMaxPages;
	// more: ErrTooManyPages).
	MaxPages int
}

// The defaults of PageLimits.
const (
	DefaultScriptTimeout = 10 * time.Second
	DefaultMaxPages      = 2000
)

func (l PageLimits) withDefaults() PageLimits {
	l.ScriptTimeout = cmp.Or(l.ScriptTimeout, DefaultScriptTimeout)
	l.MaxPages = cmp.Or(l.MaxPages, DefaultMaxPages)
	return l
}

// The page's own failures, 422s.
var (
	ErrNavigatedAway = fmt.Errorf("%w: the page navigated away from itself", engine.ErrUnprocessable)
	ErrScriptTimeout = fmt.Errorf("%w: the page's scripts ran past their time limit (QUIRE_CHROMIUM_SCRIPT_TIMEOUT)", engine.ErrUnprocessable)
	ErrTooManyPages  = fmt.Errorf("%w: the page prints to more pages than the limit (QUIRE_CHROMIUM_MAX_PAGES)", engine.ErrUnprocessable)
	ErrWaitTimeout   = fmt.Errorf("%w: what the page was to wait for (waitDelay, waitForSelector, waitForExpression) did not come within the scripts' time limit (QUIRE_CHROMIUM_SCRIPT_TIMEOUT), its load included", engine.ErrUnprocessable)
	ErrTooTall       = fmt.Errorf("%w: the page is too tall for one PDF page (singlePage: at most %d inches)", engine.ErrUnprocessable, engine.MaxSinglePageInches)
)

// renderPage loads pg in tb, answering its requests from pg's files
// alone, and prints it, or captures its image when o asks for a Shot. It
// returns the PDF and its pages (counted for MaxPages: the metering's
// figure too), or the image, one page. It ends early when ctx (the
// client's) ends, and with the page's failure when it navigates away or
// runs its scripts too long.
func renderPage(ctx context.Context, tb *tab, pg Page, o engine.JobOptions, lim PageLimits, logger *slog.Logger) (out []byte, pages int64, err error) {
	st := newSteps()
	defer st.log(logger, "chromium: page rendered")
	stop := context.AfterFunc(ctx, tb.cancel) // the client left
	defer stop()
	pctx, fail := context.WithCancelCause(tb.ctx)
	defer fail(nil)
	origin := newOrigin()
	files := newFileServer(origin, pg)
	files.checks = o.Page
	defer files.stop()
	files.start(pctx, tb.page)
	guard(pctx, tb.page, fail)
	if emulates(o) {
		// The viewport, media and user agent are the tab's until the page
		// is rendered; a tab that could not be given back its own fails
		// the job, and is closed.
		if err := emulate(pctx, tb.page, o); err != nil {
			return nil, 0, err
		}
		defer func() {
			if rerr := unemulate(tb.ctx, tb.page); err == nil && rerr != nil {
				out, pages, err = nil, 0, rerr
			}
		}()
	}
	if o.JavaScript {
		if err := scripts(pctx, tb.page, true); err != nil {
			return nil, 0, err
		}
	}
	var thrown *exceptions
	if o.JavaScript && o.Page.FailOnExceptions { // without scripts, nothing throws
		thrown = watchExceptions(pctx, tb.page)
	}
	if err := loadWithin(pctx, tb.page, origin+"/", o, lim.ScriptTimeout, thrown); err != nil {
		return nil, 0, cmp.Or(context.Cause(pctx), err)
	}
	st.done("load")
	if err := files.check(thrown); err != nil {
		return nil, 0, err
	}
	if o.JavaScript { // the scripts' time is up: those still running or due would hold the print
		if err := stopScripts(pctx, tb.page); err != nil {
			return nil, 0, cmp.Or(context.Cause(pctx), err)
		}
	}
	if o.Shot.Format != "" {
		img, err := capture(pctx, tb.page, o.Shot)
		st.done("capture")
		return img, 1, cmp.Or(context.Cause(pctx), err)
	}
	params := printParams(o)
	if o.Page.SinglePage {
		if err := fitOnePage(pctx, tb.page, o, &params); err != nil {
			return nil, 0, cmp.Or(context.Cause(pctx), err)
		}
	}
	var ok bool
	if params.PageRanges, ok = capRanges(params.PageRanges, lim.MaxPages+1); !ok {
		return nil, 0, fmt.Errorf("%w (%d): pageRanges asks for pages past it only", ErrTooManyPages, lim.MaxPages)
	}
	res, err := cdp.Call(pctx, tb.page, page.PrintToPDF, params)
	st.done("print")
	if err != nil {
		return nil, 0, cmp.Or(context.Cause(pctx), err)
	}
	n, err := pageCount(ctx, res.Data)
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("reading the printed PDF: %w", err)
	case n > lim.MaxPages:
		return nil, 0, fmt.Errorf("%w (%d)", ErrTooManyPages, lim.MaxPages)
	}
	return res.Data, int64(n), nil
}

// setBackground is Emulation.setDefaultBackgroundColorOverride with its
// color as sent: cdproto's type drops an alpha of 0, transparent.
var setBackground = cdp.Command[map[string]any, cdp.Empty]{Method: emulation.CommandSetDefaultBackgroundColorOverride}

// emulates reports whether o lays the page out otherwise than the tab's
// own settings do.
func emulates(o engine.JobOptions) bool {
	return o.Shot.Format != "" || o.Media != "" || len(o.Page.MediaFeatures) > 0 || o.Page.UserAgent != "" || o.Page.SinglePage
}

// emulate lays the page out for o's media type and features, and in its
// Shot's viewport, on a transparent background when the Shot omits it,
// and gives its scripts o's user agent.
func emulate(ctx context.Context, t *chromedp.Target, o engine.JobOptions) error {
	var err error
	if o.Media != "" || len(o.Page.MediaFeatures) > 0 {
		err = emulateMedia(ctx, t, o.Media, o.Page.MediaFeatures)
	}
	if s := o.Shot; err == nil && s.Format != "" {
		err = viewport(ctx, t, s.Width, s.Height, cmp.Or(s.DeviceScaleFactor, 1))
	}
	if err == nil && o.Shot.OmitBackground {
		_, err = cdp.Call(ctx, t, setBackground, map[string]any{"color": map[string]any{"r": 0, "g": 0, "b": 0, "a": 0}})
	}
	if err == nil && o.Page.UserAgent != "" {
		_, err = cdp.Call(ctx, t, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: o.Page.UserAgent})
	}
	return err
}

// emulateMedia lays the page out for the media type (print or screen;
// "" for the tab's own) and features.
func emulateMedia(ctx context.Context, t *chromedp.Target, media string, features []engine.MediaFeature) error {
	p := emulation.SetEmulatedMediaParams{Media: media}
	for _, f := range features {
		p.Features = append(p.Features, &emulation.MediaFeature{Name: f.Name, Value: f.Value})
	}
	_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, p)
	return err
}

// viewport lays the page out in a viewport of w by h CSS pixels, of
// scale device pixels each.
func viewport(ctx context.Context, t *chromedp.Target, w, h int, scale float64) error {
	_, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride,
		emulation.SetDeviceMetricsOverrideParams{Width: int64(w), Height: int64(h), DeviceScaleFactor: scale})
	return err
}

// unemulate gives the tab back its own media type and features,
// viewport, background and user agent ("" ends the override).
func unemulate(ctx context.Context, t *chromedp.Target) error {
	_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{})
	if err == nil {
		_, err = cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{})
	}
	if err == nil {
		_, err = cdp.Call(ctx, t, setBackground, map[string]any{})
	}
	if err == nil {
		_, err = cdp.Call(ctx, t, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{})
	}
	return err
}

// capture takes the image s asks of the loaded page: its viewport
// (Clip), or the whole page, as tall as its content, up to
// engine.MaxShotHeight.
func capture(ctx context.Context, t *chromedp.Target, s engine.Shot) ([]byte, error) {
	params := page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormat(s.Format), OptimizeForSpeed: &s.OptimizeForSpeed}
	if s.Quality > 0 && s.Format != "png" {
		q := int64(s.Quality)
		params.Quality = &q
	}
	if !s.Clip {
		m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
		if err != nil {
			return nil, err
		}
		h := math.Ceil(m.CSSContentSize.Height)
		if h > engine.MaxShotHeight {
			return nil, fmt.Errorf("%w: the page is %.0f pixels tall; an image of a whole page is at most %d (clip=true takes the viewport)",
				engine.ErrUnprocessable, h, engine.MaxShotHeight)
		}
		beyond := true
		params.CaptureBeyondViewport = &beyond
		params.Clip = &page.Viewport{Width: float64(s.Width), Height: max(h, float64(s.Height)), Scale: 1}
	}
	if px, scale := shotPixels(params.Clip, s), cmp.Or(s.DeviceScaleFactor, 1); px > engine.MaxShotWidth*engine.MaxShotHeight {
		return nil, fmt.Errorf("%w: the image would be %.0f pixels at deviceScaleFactor %g; at most %d", engine.ErrUnprocessable,
			px, scale, engine.MaxShotWidth*engine.MaxShotHeight)
	}
	res, err := cdp.Call(ctx, t, page.CaptureScreenshot, params)
	return res.Data, err
}

// shotPixels is the number of pixels of s's image of clip (nil: the
// viewport), in device pixels.
func shotPixels(clip *page.Viewport, s engine.Shot) float64 {
	w, h, scale := float64(s.Width), float64(s.Height), cmp.Or(s.DeviceScaleFactor, 1)
	if clip != nil {
		w, h = clip.Width, clip.Height
	}
	return w * scale * h * scale
}

// guard dismisses the page's JavaScript dialogs (alert, confirm, prompt,
// which would stop its scripts until answered) as they open, and ends
// its job with ErrNavigatedAway when the page asks to leave for another
// document (a script setting location, a refresh, a form), until ctx
// ends. It subscribes before it returns, so that nothing is missed.
func guard(ctx context.Context, t *chromedp.Target, fail context.CancelCauseFunc) {
	dialogs := cdp.Events(ctx, t, page.JavascriptDialogOpening)
	navigations := cdp.Events(ctx, t, page.FrameRequestedNavigation)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			cdp.Call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	top := cdp.FrameID(t.TargetID) // the top frame's id is its target's
	go func() {
		for ev, err := range navigations {
			if err != nil {
				return
			}
			if ev.FrameID == top {
				fail(ErrNavigatedAway)
				return
			}
		}
	}()
}

// loadWithin loads url in t, and waits as o asks, then until thrown (if
// watched) has every exception thrown by then: within timeout, load and
// waits together, when scripts run (waits need them).
func loadWithin(ctx context.Context, t *chromedp.Target, url string, o engine.JobOptions, timeout time.Duration, thrown *exceptions) error {
	if o.JavaScript {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, ErrScriptTimeout)
		defer cancel()
	}
	var idle []string // the lifecycle events of the network waits, which come with the load
	if o.Page.WaitNetworkIdle {
		idle = append(idle, "networkIdle")
	}
	if o.Page.WaitNetworkAlmostIdle {
		idle = append(idle, "networkAlmostIdle")
	}
	if err := load(ctx, t, url, idle...); err != nil {
		return cmp.Or(context.Cause(ctx), err)
	}
	err := wait(ctx, t, o.Page)
	if err == nil && thrown != nil {
		err = thrown.settle(ctx, t)
	}
	if err != nil && errors.Is(context.Cause(ctx), ErrScriptTimeout) {
		return ErrWaitTimeout
	}
	return err
}

// stopScripts ends the script running in t, if any (an endless one
// started by a timer), then turns scripts off so that no other starts.
// Runtime.terminateExecution is the one call that reaches a renderer busy
// in a script.
func stopScripts(ctx context.Context, t *chromedp.Target) error {
	if _, err := cdp.Call(ctx, t, cdpruntime.TerminateExecution, cdp.Empty{}); err != nil {
		return err
	}
	return scripts(ctx, t, false)
}

// capRanges is the page ranges of a print limited to its first n pages
// ("" is every page): the browser prints no page past them, so that a
// page of endless content is refused after n pages, not after all of
// them. Validated ranges (engine.JobOptions) are pages and closed
// ranges; false when they select no page among the first n.
func capRanges(ranges string, n int) (string, bool) {
	if ranges == "" {
		return fmt.Sprintf("1-%d", n), true
	}
	var out []string
	for _, r := range strings.Split(ranges, ",") {
		first, last, isRange := strings.Cut(r, "-")
		a, _ := strconv.Atoi(first)
		b := a
		if isRange {
			b, _ = strconv.Atoi(last)
		}
		if a <= n {
			out = append(out, fmt.Sprintf("%d-%d", a, min(b, n)))
		}
	}
	return strings.Join(out, ","), len(out) > 0
}

// pageCount is the number of pages of the browser's PDF.
func pageCount(ctx context.Context, b []byte) (int, error) {
	lim := qpdf.DefaultLimits()
	lim.MaxInputSize = int64(len(b))
	doc, err := qpdf.Open(ctx, b, lim)
	if err != nil {
		return 0, err
	}
	pages, err := doc.Pages()
	return len(pages), err
}

// load navigates t to url and waits for its load event (the document and
// what it loads, style sheets, images, fonts, frames, are in) and for the
// lifecycle events also names, in any order.
func load(ctx context.Context, t *chromedp.Target, url string, also ...string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := cdp.Events(ctx, t, page.LifecycleEvent) // subscribed before navigating, so that none is missed
	nav, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: url})
	switch {
	case err != nil:
		return err
	case nav.ErrorText != "":
		return fmt.Errorf("loading the page: %s", nav.ErrorText)
	}
	due := append([]string{"load"}, also...)
	for ev, err := range events {
		if err != nil {
			return err
		}
		if ev.FrameID == nav.FrameID && ev.LoaderID == nav.LoaderID {
			if due = slices.DeleteFunc(due, func(name string) bool { return name == ev.Name }); len(due) == 0 {
				return nil
			}
		}
	}
	return errors.New("the page closed while loading")
}

// printParams are Page.printToPDF's parameters for o (validated).
func printParams(o engine.JobOptions) page.PrintToPDFParams {
	a4 := engine.PaperSizes["A4"]
	w, h, preferCSS := a4[0], a4[1], true // a page's own @page size wins over the default
	if o.Paper != "" {
		w, h, _ = o.PaperSize()
		preferCSS = false
	}
	m := [4]float64{defaultMargin, defaultMargin, defaultMargin, defaultMargin}
	if o.Margin != "" {
		m, _ = o.Margins()
	}
	// Tags and outline are asked for unless the job leaves them out, and
	// said either way, so that the output does not change with a later
	// version's defaults. The outline titles a PDF/UA document whose page
	// has no title (package conform); the tags cost some milliseconds of
	// a print (bench/RESULTS.md).
	tagged, outline := !o.Page.NoTags, !o.Page.NoOutline
	p := page.PrintToPDFParams{
		Landscape: &o.Landscape, PrintBackground: &o.PrintBackground, Scale: cmp.Or(o.Scale, 1),
		PaperWidth: w, PaperHeight: h, PreferCSSPageSize: &preferCSS,
		MarginTop: &m[0], MarginRight: &m[1], MarginBottom: &m[2], MarginLeft: &m[3],
		PageRanges: o.PageRanges, GenerateTaggedPDF: &tagged, GenerateDocumentOutline: &outline,
	}
	if o.Page.HeaderHTML != "" || o.Page.FooterHTML != "" {
		// Without a template of its own, the other side would get
		// Chromium's: the date and title, or the page's address and numbers.
		on := true
		p.DisplayHeaderFooter = &on
		p.HeaderTemplate, p.FooterTemplate = cmp.Or(o.Page.HeaderHTML, emptyTemplate), cmp.Or(o.Page.FooterHTML, emptyTemplate)
	}
	return p
}

// emptyTemplate is a header or footer that shows nothing.
const emptyTemplate = "<span></span>"

// fileServer answers the paused requests of a page: its own document and
// files from memory, a failure for everything else.
type fileServer struct {
	origin string          // the job's, alone answered
	files  map[string]file // by path under origin, "/" for the page
	cancel context.CancelFunc
	wg     sync.WaitGroup

	checks         engine.PageExtras // the job's checks of the page's requests
	mu             sync.Mutex
	failed, listed tally // the requests that fail them: not loaded, answered a status listed
}

type file struct {
	data        []byte
	contentType string
}

func newFileServer(origin string, pg Page) *fileServer {
	s := &fileServer{origin: origin, files: map[string]file{"/": {pg.Doc, htmlType(pg.Doc)}}}
	for _, a := range pg.Assets {
		name := path.Clean("/" + a.Name)
		if _, taken := s.files[name]; !taken {
			s.files[name] = file{a.Data, assetType(a.Name, a.Data)}
		}
	}
	return s
}

// start answers t's paused requests until stop; it subscribes before it
// returns, so that no request is missed.
func (s *fileServer) start(ctx context.Context, t *chromedp.Target) {
	ctx, s.cancel = context.WithCancel(ctx)
	paused := cdp.Events(ctx, t, fetch.RequestPaused)
	s.wg.Go(func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			s.answer(ctx, t, ev)
		}
	})
}

func (s *fileServer) stop() {
	s.cancel()
	s.wg.Wait()
}

// answer fulfils a request for the page or one of its files, and fails
// any other: another host (another job's origin too), scheme or method.
func (s *fileServer) answer(ctx context.Context, t *chromedp.Target, ev fetch.EventRequestPaused) {
	f, ok := s.lookup(ev.Request)
	if ev.Request != nil && ev.Request.URL != s.origin+"/" {
		status := 0
		if ok {
			status = http.StatusOK
		}
		s.note(ev.Request.URL, ev.ResourceType, status)
	}
	if ok {
		cdp.Call(ctx, t, fetch.FulfillRequest, fetch.FulfillRequestParams{RequestID: ev.RequestID, ResponseCode: http.StatusOK,
			ResponseHeaders: []*fetch.HeaderEntry{{Name: "Content-Type", Value: f.contentType}}, Body: f.data})
		return
	}
	cdp.Call(ctx, t, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
}

func (s *fileServer) lookup(r *network.Request) (file, bool) {
	if r == nil || r.Method != http.MethodGet {
		return file{}, false
	}
	u, err := url.Parse(r.URL)
	if err != nil || u.Scheme+"://"+u.Host != s.origin || u.User != nil {
		return file{}, false
	}
	f, ok := s.files[path.Clean("/"+u.Path)]
	return f, ok
}

// htmlType is the page's media type: with the encoding it declares (a
// byte order mark or a <meta> charset) Chromium reads that; without, it
// is UTF-8, as the LibreOffice path reads it.
func htmlType(doc []byte) string {
	if _, _, certain := charset.DetermineEncoding(doc, "text/html"); certain {
		return "text/html"
	}
	return "text/html; charset=utf-8"
}

// assetType is a file's media type, from its name's extension or else
// its content. A style sheet must be text/css to be applied.
func assetType(name string, data []byte) string {
	if t := mime.TypeByExtension(strings.ToLower(path.Ext(name))); t != "" {
		return t
	}
	return http.DetectContentType(data)
}
