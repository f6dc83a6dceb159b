package chromium

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/quire-dev/quire/internal/engine"
)

// wait waits, once the page has loaded, for what p asks: its delay,
// then an element matching its selector to be visible, then its
// expression to be true, until ctx ends (the scripts' time limit).
func wait(ctx context.Context, t *chromedp.Target, p engine.PageExtras) error {
	if p.WaitDelay > 0 {
		timer := time.NewTimer(p.WaitDelay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if p.WaitForSelector != "" {
		if err := poll(ctx, t, "waitForSelector", selectorVisible, p.WaitForSelector); err != nil {
			return err
		}
	}
	if p.WaitForExpression != "" {
		return poll(ctx, t, "waitForExpression", expressionTrue, p.WaitForExpression)
	}
	return nil
}

// The page's side of the waits: a promise, given the selector or
// expression as a JSON string, that the page resolves once the element
// is visible or the expression true, checking every pollEvery, and
// rejects when the selector or the expression cannot be read. A page
// that never resolves it is stopped by the scripts' time limit.
const (
	pollEvery       = 50 // milliseconds
	selectorVisible = `new Promise((resolve, reject) => {
	const selector = %s;
	const check = () => {
		let el;
		try { el = document.querySelector(selector); } catch (e) { reject(e); return; }
		if (el && el.checkVisibility({visibilityProperty: true})) { resolve(true); } else { setTimeout(check, %d); }
	};
	check();
})`
	expressionTrue = `new Promise((resolve, reject) => {
	const expression = %s;
	const check = () => {
		let ok = false;
		try { ok = Boolean((0, eval)(expression)); } catch (e) { if (e instanceof SyntaxError) { reject(e); return; } }
		if (ok) { resolve(true); } else { setTimeout(check, %d); }
	};
	check();
})`
)

// poll runs the page's side of a wait (script) on text, the field's
// value, until the page resolves it or ctx ends.
func poll(ctx context.Context, t *chromedp.Target, field, script, text string) error {
	quoted, err := json.Marshal(text)
	if err != nil {
		return err
	}
	yes := true
	res, err := cdp.Call(ctx, t, cdpruntime.Evaluate, cdpruntime.EvaluateParams{
		Expression: fmt.Sprintf(script, quoted, pollEvery), AwaitPromise: &yes, ReturnByValue: &yes})
	switch {
	case err != nil:
		return cmp.Or(context.Cause(ctx), err)
	case res.ExceptionDetails != nil:
		return fmt.Errorf("%w: %s cannot be read by the page: %s", engine.ErrUnprocessable, field, exceptionText(res.ExceptionDetails))
	}
	return nil
}

// exceptionText is what a script's exception says.
func exceptionText(e *cdpruntime.ExceptionDetails) string {
	if e.Exception != nil && e.Exception.Description != "" {
		return e.Exception.Description
	}
	return e.Text
}

// fitOnePage sets params (printParams') to print the loaded page on one
// sheet as tall as its content (Gotenberg's singlePage): the page is
// laid out for print in a viewport as wide as the sheet's printable
// width, and measured. The sheet keeps the width of the paper o asks for
// (turned when landscape), and its margins; a CSS @page size does not
// apply.
func fitOnePage(ctx context.Context, t *chromedp.Target, o engine.JobOptions, params *page.PrintToPDFParams) error {
	width := params.PaperWidth
	if o.Landscape {
		width = params.PaperHeight
	}
	scale := params.Scale
	cssWidth := (width - *params.MarginLeft - *params.MarginRight) * 96 / scale
	if err := emulateMedia(ctx, t, cmp.Or(o.Media, "print"), o.Page.MediaFeatures); err != nil {
		return err
	}
	if err := viewport(ctx, t, int(math.Ceil(cssWidth)), 1, 1); err != nil {
		return err
	}
	m, err := cdp.Call(ctx, t, page.GetLayoutMetrics, cdp.Empty{})
	if err != nil {
		return err
	}
	if _, err := cdp.Call(ctx, t, emulation.ClearDeviceMetricsOverride, cdp.Empty{}); err != nil {
		return err
	}
	// A pixel's slack: the print's layout rounds as the measure does not.
	height := (math.Ceil(m.CSSContentSize.Height)+1)*scale/96 + *params.MarginTop + *params.MarginBottom
	if height > engine.MaxSinglePageInches {
		return ErrTooTall
	}
	no := false
	params.Landscape, params.PreferCSSPageSize = &no, &no
	params.PaperWidth, params.PaperHeight = width, height
	return nil
}
