package httpapi

import (
	"net/http/httptest"
	"testing"
)

// TestKeyAreas: a route's Auth decides which requests are authenticated
// before routing: a required key covers the route's path and everything
// under it, whatever the method; an optional one only its path, and only
// when a key is presented.
func TestKeyAreas(t *testing.T) {
	a := keyAreasOf([]Route{{Method: "POST", Path: "/v1/sign", Auth: KeyRequired}, {Method: "POST", Path: "/v1/verify", Auth: KeyOptional},
		{Method: "GET", Path: "/v1/verify/key"}, {Method: "GET", Path: "/v1/health"}, {Method: "GET", Path: "/v1/jobs/{id}", Auth: KeyRequired}})
	for _, c := range []struct {
		method, path string
		key, want    bool
	}{
		{"POST", "/v1/sign", false, true},
		{"GET", "/v1/sign", false, true},
		{"POST", "/v1/sign/unknown", false, true},
		{"POST", "/v1/signature", false, false},
		{"POST", "/v1/verify", false, false},
		{"POST", "/v1/verify", true, true},
		{"GET", "/v1/verify/key", true, false},
		{"GET", "/v1/health", true, false},
		{"GET", "/v1/jobs/abc", false, true},
		{"GET", "/v1/jobs/abc/result", false, true},
		{"GET", "/v1/jobsx", false, false},
	} {
		r := httptest.NewRequest(c.method, c.path, nil)
		if c.key {
			r.Header.Set("Authorization", "Bearer k")
		}
		if got := a.needKey(r); got != c.want {
			t.Errorf("%s %s (key %v): authenticated before routing %v, want %v", c.method, c.path, c.key, got, c.want)
		}
	}
}
