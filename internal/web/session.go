package web

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// sessions are the admin sessions of this process, kept in memory under
// the SHA-256 of their id: the cookie's value is never stored. A restart
// logs the operator out; behind a load balancer, route /admin to one
// instance (or log in on each).
type sessions struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[[32]byte]session
}

type session struct {
	csrf    string // the token every form of the session carries
	expires time.Time
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, m: map[[32]byte]session{}}
}

func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// start opens a session and returns its id, dropping expired ones.
func (s *sessions) start() (string, session) {
	id := randomToken()
	se := session{csrf: randomToken(), expires: s.now().Add(s.ttl)}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if !s.now().Before(v.expires) {
			delete(s.m, k)
		}
	}
	s.m[sha256.Sum256([]byte(id))] = se
	return id, se
}

// get returns the live session of id.
func (s *sessions) get(id string) (session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := sha256.Sum256([]byte(id))
	se, ok := s.m[k]
	if ok && !s.now().Before(se.expires) {
		delete(s.m, k)
		return session{}, false
	}
	return se, ok
}

func (s *sessions) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, sha256.Sum256([]byte(id)))
}
