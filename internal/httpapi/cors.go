package httpapi

import (
	"net/http"
	"slices"
	"strings"
)

// Cross-origin calls: every /v1/ route (and /openapi.json) may be called
// from web pages of the allowed origins. The API authenticates with bearer
// keys in a header, never with cookies, so credentials are never allowed
// and the wildcard origin is safe.
var (
	corsAllowHeaders  = "Authorization, Content-Type, X-License-Key, X-Request-Id"
	corsExposeHeaders = "X-Request-Id, Retry-After, Server-Timing, Content-Disposition, X-Quire-Event-Id, X-Quire-Document-SHA256, Quire-Signature-Level"
)

// corsMaxAge is how long, in seconds, browsers may cache a preflight answer.
const corsMaxAge = "86400"

// crossOrigin reports whether path is open to cross-origin calls.
func crossOrigin(path string) bool {
	return strings.HasPrefix(path, "/v1/") || path == "/openapi.json"
}

// allowOrigin is the Access-Control-Allow-Origin for a request from origin:
// "*" when any origin is allowed, the origin itself when it is listed,
// empty otherwise.
func (s *Server) allowOrigin(origin string) string {
	if len(s.opt.CORSOrigins) == 0 || slices.Contains(s.opt.CORSOrigins, "*") {
		return "*"
	}
	if origin != "" && slices.Contains(s.opt.CORSOrigins, strings.ToLower(origin)) {
		return origin
	}
	return ""
}

// cors adds the CORS headers to every answer of a cross-origin path,
// errors included, and answers preflights itself: before authentication,
// which browsers never send with a preflight.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !crossOrigin(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		allowed := s.allowOrigin(r.Header.Get("Origin"))
		if allowed != "*" {
			h.Add("Vary", "Origin")
		}
		if allowed != "" { // canonical keys, set without Set's check: every answer pays it
			h["Access-Control-Allow-Origin"] = []string{allowed}
			h["Access-Control-Expose-Headers"] = []string{corsExposeHeaders}
		}
		if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
			next.ServeHTTP(w, r)
			return
		}
		methods := s.methods(r.URL.Path)
		if methods == "" {
			next.ServeHTTP(w, r) // unknown paths get their 404 with the headers
			return
		}
		infoOf(r.Context()).route = r.URL.Path
		if allowed != "" {
			h.Set("Access-Control-Allow-Methods", methods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", corsMaxAge)
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

// methods lists the methods served on path, with OPTIONS; empty when no
// route has that path.
func (s *Server) methods(path string) string {
	var m []string
	for _, rt := range s.routes {
		if rt.Path == path {
			m = append(m, rt.Method)
		}
	}
	if len(m) == 0 {
		return ""
	}
	return strings.Join(append(m, http.MethodOptions), ", ")
}
