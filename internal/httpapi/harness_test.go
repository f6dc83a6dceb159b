package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/mail/mailtest"
	"github.com/quire-dev/quire/internal/store"
)

// env is one API server (apitest) and the helpers of these tests.
type env struct {
	*apitest.Server
	t *testing.T
}

const adminToken = apitest.AdminToken

func unlimited() auth.Options { return apitest.Issuance() }

type envOption func(*apitest.Config)

func withMail(mo mail.Options) envOption { return func(c *apitest.Config) { c.Mail = &mo } }
func withSettings(f func(*config.Config)) envOption {
	return func(c *apitest.Config) { c.Settings = f }
}
func withPrivateFetch() envOption                  { return func(c *apitest.Config) { c.AllowPrivateFetch = true } }
func withConfig(f func(*apitest.Config)) envOption { return f }

// engines are the LibreOffice and Chromium pools that the tests share
// (withConversion, withChromium); a test that needs a fresh pool, or
// asserts a pool's counters or metrics, starts its own.
var engines = &apitest.Engines{}

// The conversion pools of the tests run this binary as their workers.
func TestMain(m *testing.M) {
	apitest.RunWorkerIfAsked()
	code := m.Run()
	if err := engines.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "closing the shared engines:", err)
		code = 1
	}
	if code != 0 {
		fmt.Fprintf(os.Stderr, "the shared engines' log:\n%s", &engines.Logs)
	}
	os.Exit(code)
}

func newEnv(t *testing.T, db *store.DB, opt auth.Options, options ...envOption) *env {
	t.Helper()
	cfg := apitest.Config{Auth: opt}
	for _, o := range options {
		o(&cfg)
	}
	return &env{Server: apitest.Start(t, db, cfg), t: t}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

// errorBody decodes and checks the error body of the contract.
func (r response) errorBody(t *testing.T, status int, code string) httpapi.ErrorBody {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d; body %s", r.status, status, r.body)
	}
	var b httpapi.ErrorBody
	r.json(t, &b)
	if b.Code != code || b.Error != http.StatusText(status) || b.Message == "" || b.RequestID == "" || b.RequestID != r.header.Get("X-Request-Id") {
		t.Fatalf("error body %+v (X-Request-Id %q), want code %s", b, r.header.Get("X-Request-Id"), code)
	}
	return b
}

func (e *env) do(method, path string, body io.Reader, header map[string]string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

func (e *env) get(path string) response { return e.do("GET", path, nil, nil) }

func (e *env) register(email string) response {
	return e.get("/v1/auth/register?email=" + url.QueryEscape(email))
}

func (e *env) verify(email, code string) response {
	return e.get("/v1/auth/verify?email=" + url.QueryEscape(email) + "&code=" + url.QueryEscape(code))
}

// codeFor registers email and reads the code out of the message that the
// SMTP server received.
func (e *env) codeFor(email string) string {
	e.t.Helper()
	if r := e.register(email); r.status != 200 {
		e.t.Fatalf("register: %d %s", r.status, r.body)
	}
	m := e.SMTP.WaitFor(e.t, email, 10*time.Second)
	code := mailtest.Code(m.Text)
	if code == "" {
		e.t.Fatalf("no code in %q", m.Text)
	}
	return code
}

// key goes through register, mail and verify, and returns the API key.
func (e *env) key(email string) string {
	e.t.Helper()
	r := e.verify(email, e.codeFor(email))
	if r.status != 200 {
		e.t.Fatalf("verify: %d %s", r.status, r.body)
	}
	var key string
	r.json(e.t, &key)
	return key
}

// waitFor polls cond until it holds: tests wait for a condition, never
// for a delay. Past within, the test fails saying what it waited for.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		<-tick.C
	}
}
