package web

import (
	"fmt"
	"net/http"
)

// docsPolicy is the policy of the API reference, with %s for the page's
// nonce. Scripts stay 'self' without eval (static/docs-before.js tells
// the renderer's schema library not to compile validators, so it never
// tries). <style> elements need the nonce: the renderer (Scalar) reads it
// from the page's csp-nonce meta element for its own sheet, and
// docs-before.js gives it to the style elements its libraries create
// (CodeMirror's sheet changes as editors mount, so no fixed hash fits).
// Style attributes stay allowed: Vue inserts static markup carrying them
// through innerHTML and Scalar sets one with setAttribute; no nonce
// applies to attributes, and hashes would have to list every value the
// renderer can produce. Nothing may be fetched elsewhere.
const docsPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; style-src-elem 'self' 'nonce-%s'; " +
	"style-src-attr 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; " +
	"worker-src 'self' blob:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// docs serves the interactive API reference of /openapi.json.
func (p *Pages) docs(w http.ResponseWriter, r *http.Request) {
	nonce := randomToken()
	w.Header().Set("Content-Security-Policy", fmt.Sprintf(docsPolicy, nonce))
	p.render(w, http.StatusOK, "docs", struct{ Nonce string }{nonce})
}
