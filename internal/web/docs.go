package web

import "net/http"

// docsPolicy is the policy of the API reference. The vendored renderer
// (Scalar) sets style attributes and injects <style> elements without a
// nonce, so styles may be inline on this page only; scripts stay 'self'
// without eval (static/docs-before.js tells its schema library not to
// compile validators, so it never tries), and nothing may be fetched elsewhere.
const docsPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// docs serves the interactive API reference of /openapi.json.
func (p *Pages) docs(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", docsPolicy)
	p.render(w, http.StatusOK, "docs", nil)
}
