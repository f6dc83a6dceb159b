// Package enginetest holds what the tests of the engines share.
package enginetest

import (
	"os"
	"sync"
	"testing"
)

// Shared is an engine's pool shared by the tests of a package that need
// only a warm engine with default options: started by the first test
// that asks for it, closed when the last test holding it ends. A
// parallel test asks for it before t.Parallel, so that it holds the pool
// while it waits for the serial tests.
type Shared[P any] struct {
	Start func(dir string) (P, error) // starts the pool in dir and waits until it is ready; on an error it leaves nothing running
	Close func(P) error

	mu    sync.Mutex
	pool  P
	dir   string
	users int // the tests holding it
}

// Get returns the pool, started and ready, held by t until it ends.
func (s *Shared[P]) Get(t testing.TB) P {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users == 0 {
		dir, err := os.MkdirTemp("", "quire-shared-engine-")
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.Start(dir)
		if err != nil {
			os.RemoveAll(dir)
			t.Fatalf("the shared pool: %v", err)
		}
		s.pool, s.dir = p, dir
	}
	s.users++
	t.Cleanup(func() { s.release(t) })
	return s.pool
}

// release closes the pool if t was the last test to hold it.
func (s *Shared[P]) release(t testing.TB) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.users--; s.users > 0 {
		return
	}
	if err := s.Close(s.pool); err != nil {
		t.Errorf("close the shared pool: %v", err)
	}
	os.RemoveAll(s.dir)
	var none P
	s.pool, s.dir = none, ""
}
