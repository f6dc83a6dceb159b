package gotenberg

import (
	"maps"
	"net/http"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
)

// screenshotForm is what the screenshot routes read: the image's fields,
// and the page-loading fields of the Chromium routes, which quire
// honours at their defaults only; the url route also reads "url".
var screenshotForm = spec{
	served: []string{"width", "height", "clip", "format", "quality", "omitBackground", "optimizeForSpeed", "emulatedMediaType"},
	unsupported: func() map[string]string {
		m := maps.Clone(chromiumForm.unsupported)
		delete(m, "omitBackground")
		for _, pdfOnly := range []string{"singlePage", "generateDocumentOutline"} {
			delete(m, pdfOnly)
		}
		return m
	}(),
	why: chromiumForm.why,
}

// screenshot captures the page of source (html, markdown or url) as an
// image: Gotenberg's screenshot routes, on the Chromium pool that prints.
func (a *API) screenshot(source string) http.HandlerFunc {
	form := screenshotForm
	if source == sourceURL {
		form.served = append([]string{"url"}, form.served...)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		f, err := a.readForm(r, form, a.convertLimits())
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		shot := engine.Shot{Format: f.str("format"), Width: f.int("width"), Height: f.int("height"), Clip: f.bool("clip"),
			Quality: f.int("quality"), OmitBackground: f.bool("omitBackground"), OptimizeForSpeed: f.bool("optimizeForSpeed")}
		if shot.Format == "" {
			shot.Format = "png"
		}
		if !f.has("width") {
			shot.Width = 800
		}
		if !f.has("height") {
			shot.Height = 600
		}
		if err := f.err(); err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		page, name, err := a.page(r.Context(), source, f)
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		res, err := a.d.Conversion.Screenshot(r.Context(), page, engine.JobOptions{Engine: engine.EngineChromium, Shot: shot, Media: f.str("emulatedMediaType")})
		if err != nil {
			httpapi.Fail(w, r, err)
			return
		}
		count(r.Context(), 1, res.Engine, res.Pages)
		if err := send(w, r, []string{name}, [][]byte{res.Output}, shot.Format, res.ContentType); err != nil {
			httpapi.Fail(w, r, err)
		}
	}
}
