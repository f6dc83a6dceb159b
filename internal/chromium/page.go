package chromium

import (
	"cmp"
	"context"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"golang.org/x/net/html/charset"

	"github.com/quire-dev/quire/internal/convert"
)

// origin is where a job's page and files load from. The .invalid domain
// is reserved never to resolve (RFC 6761): only the interception
// answers it.
const origin = "http://quire.invalid"

// pageURL is the page's own address; its files are at origin + "/" + name.
const pageURL = origin + "/"

// defaultMargin is the margin on every side when the job sets none, in
// inches (10 mm, Chromium's own default).
const defaultMargin = 10 / 25.4

// disposeTimeout bounds the disposal of a job's browser context.
const disposeTimeout = 5 * time.Second

// print prints pg in a fresh browser context of b, which is disposed of
// afterwards. It ends early when ctx (the client's) ends.
func (b *browserProc) print(ctx context.Context, pg Page, o convert.JobOptions) ([]byte, error) {
	br := chromedp.FromContext(b.ctx).Browser
	no := false
	bc, err := cdp.Call(ctx, br, target.CreateBrowserContext, target.CreateBrowserContextParams{DisposeOnDetach: &no,
		ProxyServer: proxyToNowhere, ProxyBypassList: proxyBypass})
	if err != nil {
		return nil, err
	}
	cancelTab := context.CancelFunc(func() {})
	defer func() {
		// Disposing of the context closes its tab, before the tab's
		// context is cancelled: cancelled first, chromedp's detach waits
		// seconds for the browser. A browser that does not answer is
		// killed by the supervisor.
		ctx, cancel := context.WithTimeout(b.ctx, disposeTimeout)
		defer cancel()
		cdp.Call(ctx, br, target.DisposeBrowserContext, target.DisposeBrowserContextParams{BrowserContextID: bc.BrowserContextID})
		cancelTab()
	}()
	tgt, err := cdp.Call(ctx, br, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", BrowserContextID: bc.BrowserContextID})
	if err != nil {
		return nil, err
	}
	tab, cancelTab := chromedp.NewContext(b.ctx, chromedp.WithTargetID(tgt.TargetID), chromedp.WithDetachOnCancel())
	stop := context.AfterFunc(ctx, cancelTab) // the client left
	defer stop()
	return chromedp.Run(tab, func(ctx context.Context, t *chromedp.Target) ([]byte, error) {
		files := newFileServer(pg)
		defer files.stop()
		files.start(ctx, t)
		if _, err := cdp.Call(ctx, t, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
			return nil, err
		}
		if !o.JavaScript {
			if _, err := cdp.Call(ctx, t, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
				return nil, err
			}
		}
		if _, err := chromedp.Navigate(pageURL)(ctx, t); err != nil {
			return nil, err
		}
		res, err := cdp.Call(ctx, t, page.PrintToPDF, printParams(o))
		return res.Data, err
	})
}

// printParams are Page.printToPDF's parameters for o (validated).
func printParams(o convert.JobOptions) page.PrintToPDFParams {
	a4 := convert.PaperSizes["A4"]
	w, h, preferCSS := a4[0], a4[1], true // a page's own @page size wins over the default
	if o.Paper != "" {
		w, h, _ = o.PaperSize()
		preferCSS = false
	}
	m := [4]float64{defaultMargin, defaultMargin, defaultMargin, defaultMargin}
	if o.Margin != "" {
		m, _ = o.Margins()
	}
	return page.PrintToPDFParams{
		Landscape: &o.Landscape, PrintBackground: &o.PrintBackground, Scale: cmp.Or(o.Scale, 1),
		PaperWidth: w, PaperHeight: h, PreferCSSPageSize: &preferCSS,
		MarginTop: &m[0], MarginRight: &m[1], MarginBottom: &m[2], MarginLeft: &m[3],
		PageRanges: o.PageRanges,
	}
}

// fileServer answers the paused requests of a page: its own document and
// files from memory, a failure for everything else.
type fileServer struct {
	files  map[string]file // by path under origin, "/" for the page
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type file struct {
	data        []byte
	contentType string
}

func newFileServer(pg Page) *fileServer {
	s := &fileServer{files: map[string]file{"/": {pg.Doc, htmlType(pg.Doc)}}}
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
// any other: another host, scheme or method.
func (s *fileServer) answer(ctx context.Context, t *chromedp.Target, ev fetch.EventRequestPaused) {
	if f, ok := s.lookup(ev.Request); ok {
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
	if err != nil || u.Scheme+"://"+u.Host != origin || u.User != nil {
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
