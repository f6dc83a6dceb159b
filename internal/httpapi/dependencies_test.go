package httpapi_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/pdfsign/softhsmtest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// unavailable checks a 503 ENGINE_UNAVAILABLE or SERVICE_UNAVAILABLE with
// its Retry-After.
func (r response) unavailable(t *testing.T, code string) httpapi.ErrorBody {
	t.Helper()
	b := r.errorBody(t, 503, code)
	if r.header.Get("Retry-After") == "" {
		t.Errorf("503 %s without Retry-After", code)
	}
	return b
}

func TestSignWithTokenKey(t *testing.T) {
	tok := softhsmtest.New(t, "quire-http")
	dataDir := t.TempDir()
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: dataDir,
		Token: &pdfsign.Token{Module: tok.Module, Label: tok.Label, PIN: tok.PIN, Key: "signing"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { id.Close() })
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConfig(func(c *apitest.Config) { c.Identity = id }))
	key := e.key("ann@example.com")
	out := signedPDF(t, e.signPDF(key, signBody(inline(pdftest.OnePage("Service agreement")))))
	if got := tool(t, "poppler-utils", "pdfsig", pdftest.WriteTemp(t, out)); !strings.Contains(got, "Signature is Valid.") {
		t.Errorf("pdfsig:\n%s", got)
	}
	if res := e.verifyPDF(out); !res.Valid || res.Signer == nil || res.Signer.EventID != "evt-1" {
		t.Errorf("verify: %+v", res)
	}

	var info pdfsign.KeyInfo
	e.get("/v1/verify/key").json(t, &info)
	want := id.Info()
	if info.Fingerprint != want.Fingerprint || info.PublicKey != want.PublicKey || info.CAID != want.CAID {
		t.Errorf("/v1/verify/key = %+v, want the token's certificate %+v", info, want)
	}

	softhsmtest.CloseAllSessions(t, tok) // the token is gone from under the service
	b := e.signPDF(key, signBody(inline(pdftest.OnePage("Service agreement")))).unavailable(t, "ENGINE_UNAVAILABLE")
	if !strings.Contains(b.Message, "token") {
		t.Errorf("message %q does not name the token", b.Message)
	}
	signedPDF(t, e.signPDF(key, signBody(inline(pdftest.OnePage("Service agreement"))))) // and back
	softhsmtest.CloseAllSessions(t, tok)
	e.get("/v1/ca/"+want.CAID+"/crl").unavailable(t, "ENGINE_UNAVAILABLE") // the CA's key is in the token too
}

func TestSignWhenTSAsFail(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("no token")) }))
	t.Cleanup(garbage.Close)
	good := pdftest.NewTSA(t)

	down := pdfsign.NewTSAList([]string{closed.URL, garbage.URL}, 2*time.Second)
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConfig(func(c *apitest.Config) { c.Timestamper = down }))
	key := e.key("ann@example.com")
	b := e.signPDF(key, signBody(inline(pdftest.OnePage("x")))).unavailable(t, "ENGINE_UNAVAILABLE")
	if !strings.Contains(b.Message, "time-stamp") || strings.Contains(b.Message, "127.0.0.1") {
		t.Errorf("message %q", b.Message)
	}
	h := health(t, e)
	if len(h.TSA) != 2 || h.TSA[0].State != "failing" || h.TSA[1].State != "failing" {
		t.Errorf("health with every TSA down: %+v", h.TSA)
	}

	failover := pdfsign.NewTSAList([]string{closed.URL, good.URL}, 2*time.Second)
	e = newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConfig(func(c *apitest.Config) { c.Timestamper = failover }))
	key = e.key("ann@example.com")
	out := signedPDF(t, e.signPDF(key, signBody(inline(pdftest.OnePage("x")))))
	if res := e.verifyPDF(out); !res.Valid || res.Signer == nil || res.Signer.TimestampTime == nil {
		t.Errorf("verify: %+v", res.Signer)
	}
	h = health(t, e)
	if len(h.TSA) != 2 || h.TSA[0].State != "failing" || h.TSA[1].State != "ok" || h.TSA[1].LastSuccess == nil {
		t.Errorf("health after a failover: %+v", h.TSA)
	}
}

// health reads /v1/health, which stays ready whatever the TSAs do.
func health(t *testing.T, e *env) httpapi.Health {
	t.Helper()
	r := e.get("/v1/health")
	if r.status != 200 {
		t.Fatalf("health: %d %s", r.status, r.body)
	}
	var h httpapi.Health
	r.json(t, &h)
	return h
}

// TestDatabaseDownIsUnavailable serves from PostgreSQL reached through a
// loopback proxy, then cuts the proxy: the database is unreachable, as
// when its server or the network goes down.
func TestDatabaseDownIsUnavailable(t *testing.T) {
	u, err := url.Parse(storetest.URL(t, "postgres"))
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.addr
	e := newEnv(t, storetest.Open(t, u.String()), unlimited())
	key := e.key("ann@example.com")
	p.cut()
	e.signPDF(key, signBody(inline(pdftest.OnePage("x")))).unavailable(t, "SERVICE_UNAVAILABLE")
	e.register("bob@example.com").unavailable(t, "SERVICE_UNAVAILABLE")
}

// proxy forwards TCP connections to a server until cut.
type proxy struct {
	addr string
	ln   net.Listener
	mu   sync.Mutex
	conn []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), ln: ln}
	t.Cleanup(p.cut)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conn = append(p.conn, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	return p
}

// cut stops listening and closes every connection.
func (p *proxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conn {
		c.Close()
	}
	p.conn = nil
}
