package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/quire-dev/quire"
)

// Auth is what a route asks of the caller's API key.
type Auth int

const (
	// NoKey routes are public; an Authorization header is not read.
	NoKey Auth = iota
	// KeyRequired routes need an API key. It is checked before routing,
	// for the route's path and everything under it (whatever the method),
	// so that a caller without a key learns nothing about which
	// operations exist there.
	KeyRequired
	// KeyOptional routes are public, but a key presented is
	// authenticated, so that its limits and metering apply.
	KeyOptional
)

// keyAreas are the paths whose requests are authenticated before routing,
// from the routes' Auth.
type keyAreas struct {
	required []string // these paths and everything under them
	optional []string // these paths, when a key is presented
}

func keyAreasOf(routes []Route) keyAreas {
	var a keyAreas
	for _, rt := range routes {
		switch rt.Auth {
		case KeyRequired:
			a.required = append(a.required, area(rt.Path))
		case KeyOptional:
			a.optional = append(a.optional, rt.Path)
		}
	}
	return a
}

// area is the part of a route's path before its first wildcard
// (/v1/jobs/{id}: /v1/jobs), whose requests all need the key.
func area(path string) string {
	if i := strings.Index(path, "/{"); i >= 0 {
		return path[:i]
	}
	return path
}

// needKey reports whether r is to be authenticated before routing.
func (a keyAreas) needKey(r *http.Request) bool {
	path := r.URL.Path
	for _, p := range a.required {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	if r.Header.Get("Authorization") == "" {
		return false
	}
	for _, p := range a.optional {
		if path == p {
			return true
		}
	}
	return false
}

// authenticate returns r carrying the key that authenticates it (APIKey)
// and its tenant.
func (s *Server) authenticate(r *http.Request) (*http.Request, error) {
	key, err := s.deps.Auth.Authenticate(r.Context(), bearer(r))
	if err != nil {
		return nil, err
	}
	return withKey(r, key), nil
}

// withKey returns r carrying key (APIKey) and its tenant.
func withKey(r *http.Request, key quire.APIKey) *http.Request {
	return r.WithContext(quire.WithTenant(context.WithValue(r.Context(), keyCtx{}, key), key.ID))
}
