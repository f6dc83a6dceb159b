package httpapi

import (
	"net/http"

	"github.com/quire-dev/quire/internal/auth"
)

func (s *Server) authRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/v1/auth/register", Handler: s.register},
		{Method: "GET", Path: "/v1/auth/verify", Handler: s.verify},
	}
}

// register answers the same sentence whether or not the address is known.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	if err := s.deps.Auth.Register(r.Context(), r.URL.Query().Get("email"), s.clientIP(r)); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, auth.RegisterMessage)
}

// verify answers the new API key as a JSON string; it is shown only here.
func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key, err := s.deps.Auth.Verify(r.Context(), q.Get("email"), q.Get("code"), s.clientIP(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, key)
}
