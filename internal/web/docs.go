package web

import "net/http"

// docs serves the interactive API reference. The vendored renderer
// injects its stylesheet as a <style> element carrying the nonce it reads
// from <meta property="csp-nonce">, so this page's policy allows styles
// with that nonce; scripts stay 'self' only.
func (p *Pages) docs(w http.ResponseWriter, r *http.Request) {
	n := nonce()
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self' 'nonce-"+n+"'; "+
		"img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "+
		"form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	p.render(w, r, http.StatusOK, "docs", struct{ Nonce string }{n})
}
