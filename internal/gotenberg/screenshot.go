package gotenberg

import (
	"cmp"
	"net/http"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
)

// screenshotForm is what the screenshot routes read: the image's fields,
// and the page-loading fields of the Chromium routes; the url route also
// reads "url" and the download's fields.
var screenshotForm = spec{
	served: append([]string{"width", "height", "clip", "format", "quality", "omitBackground", "optimizeForSpeed", "emulatedMediaType",
		"deviceScaleFactor"}, pageFields...),
	unsupported: chromiumForm.unsupported,
	why:         chromiumForm.why,
}

// screenshot captures the page of source (html, markdown or url) as an
// image: Gotenberg's screenshot routes, on the Chromium pool that prints.
func (a *API) screenshot(source string) http.HandlerFunc {
	form := sourceForm(screenshotForm, source)
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := a.readForm(r, form, a.convertLimits())
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		opts := engine.JobOptions{Engine: engine.EngineChromium, Shot: shotOptions(&f.values), Media: f.str("emulatedMediaType"),
			Page: pageExtras(&f.values, a.maxWait())}
		opts.JavaScript = opts.Page.Waits()
		page, name, err := a.page(r.Context(), source, f)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		res, err := a.d.Conversion.Screenshot(r.Context(), page, opts)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		count(r.Context(), 1, res.Engine, res.Pages)
		if err := send(w, r, []string{name}, [][]byte{res.Output}, opts.Shot.Format, res.ContentType); err != nil {
			httpapi.Fail(w, r, err)
		}
	}
}

// shotOptions are the image's options from Gotenberg's fields, with its
// defaults: a PNG of an 800x600 viewport.
func shotOptions(v *values) engine.Shot {
	s := engine.Shot{Format: cmp.Or(v.str("format"), "png"), Width: v.int("width"), Height: v.int("height"), Clip: v.bool("clip"),
		Quality: v.int("quality"), OmitBackground: v.bool("omitBackground"), OptimizeForSpeed: v.bool("optimizeForSpeed"),
		DeviceScaleFactor: v.float("deviceScaleFactor")}
	if !v.has("width") {
		s.Width = 800
	}
	if !v.has("height") {
		s.Height = 600
	}
	return s
}
