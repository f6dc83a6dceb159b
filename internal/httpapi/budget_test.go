package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// paddedPDF is a valid one-page PDF of about size bytes.
func paddedPDF(size int) []byte {
	content := "BT /F1 18 Tf 72 760 Td (padded) Tj ET\n" + strings.Repeat("% padding to make the file large\n", size/33)
	return pdftest.File(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
}

// chunked is s as a body of unknown length, which net/http sends chunked.
func chunked(s string) io.Reader { return io.MultiReader(strings.NewReader(s)) }

// conn is a raw HTTP/1.1 client connection, for clients that misbehave.
type conn struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

func (e *env) dial(t *testing.T) *conn {
	u, _ := url.Parse(e.URL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(2 * time.Minute)) // a hung server fails the test instead of hanging it
	return &conn{t, c, bufio.NewReader(c)}
}

// head sends a POST's head declaring length bytes of body.
func (c *conn) head(path string, header map[string]string, length int) {
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: quire\r\nContent-Length: %d\r\n", path, length)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		c.t.Fatal(err)
	}
}

func (c *conn) response() *http.Response {
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("no answer: %v", err)
	}
	return res
}

// TestSigningMemoryBudget holds a share of the budget with a request whose
// body has not arrived yet: a request that does not fit beside it gets 503
// ENGINE_UNAVAILABLE with Retry-After at once, a smaller one passes, a
// chunked one (of unknown size) is charged the most it could be, and the
// share comes back once the holder's request ends, however it ends.
func TestSigningMemoryBudget(t *testing.T) {
	body := signBody(inline(paddedPDF(20 << 10)))
	small := `{"document":` + inline(pdftest.OnePage("small")) + `}`
	charge := int64(len(body)) * httpapi.BytesPerBodyByte
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConfig(func(c *apitest.Config) {
		c.MemoryBudget = charge + charge/2 // one sign request, and a smaller one beside it
	}))
	key := e.key("budget@example.com")
	signHeader := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}

	signedPDF(t, e.signPDF(key, body))
	signedPDF(t, e.signPDF(key, body)) // the first one's share came back on completion
	// A chunked body may be as large as the route allows, more than the
	// whole budget: it is charged the whole budget, and runs alone.
	signedPDF(t, e.do("POST", "/v1/sign", chunked(body), signHeader))

	holder := e.dial(t)
	holder.head("/v1/sign", map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json",
		"Expect": "100-continue"}, len(body))
	// net/http asks for the body when the handler first reads it, which is
	// after the request was charged.
	if res := holder.response(); res.StatusCode != http.StatusContinue {
		t.Fatalf("holder: %d, want 100 Continue", res.StatusCode)
	}

	r := e.do("POST", "/v1/sign", strings.NewReader(body), signHeader)
	r.errorBody(t, 503, "ENGINE_UNAVAILABLE")
	if r.header.Get("Retry-After") != "5" {
		t.Error("503 without Retry-After")
	}
	if v := e.do("POST", "/v1/verify", strings.NewReader(small), nil); v.status != 200 {
		t.Errorf("a small verification beside the holder: %d %s", v.status, v.body)
	}
	e.do("POST", "/v1/verify", chunked(small), nil).errorBody(t, 503, "ENGINE_UNAVAILABLE")

	// The holder sends half its body and gives up: its request ends (400),
	// and its share comes back.
	io.WriteString(holder, body[:len(body)/2])
	holder.Conn.(*net.TCPConn).CloseWrite()
	if res := holder.response(); res.StatusCode != 400 {
		t.Fatalf("holder's cut body: %d, want 400", res.StatusCode)
	}
	signedPDF(t, e.signPDF(key, body))
}

// TestWriteTimeoutCutsOffNonReader signs a large document for a client
// that never reads its answer: once the write timeout has passed the
// server gives up on the answer, closes the connection and returns the
// request's share of the memory budget.
func TestWriteTimeoutCutsOffNonReader(t *testing.T) {
	body := signBody(inline(paddedPDF(600 << 10)))
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConfig(func(c *apitest.Config) {
		c.WriteTimeout = 300 * time.Millisecond
		c.SendBuffer = 8 << 10 // so that the answer cannot fit in the sockets' buffers
		c.MemoryBudget = int64(len(body)) * httpapi.BytesPerBodyByte * 3 / 2
	}))
	key := e.key("slow@example.com")

	c := e.dial(t)
	c.Conn.(*net.TCPConn).SetReadBuffer(8 << 10)
	c.head("/v1/sign", map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}, len(body))
	io.WriteString(c, body)

	// Wait for the request's log line: it is written once the handler
	// has given up on the answer.
	for deadline, tick := time.Now().Add(time.Minute), time.Tick(50*time.Millisecond); !strings.Contains(e.Logs.String(), `"route":"/v1/sign"`); <-tick {
		if time.Now().After(deadline) {
			t.Fatal("the server is still writing to a client that does not read")
		}
	}
	res := c.response()
	got, err := io.ReadAll(res.Body)
	if err == nil || int64(len(got)) >= res.ContentLength && res.ContentLength > 0 {
		t.Errorf("the whole answer (%d bytes, err %v) reached a client that did not read it in time", len(got), err)
	}
	// The share came back: read past the server's write timeout, which a
	// loaded machine's signing could outlast.
	waitFor(t, time.Minute, "the budget given back", func() bool { return heldBytes(t, e) == "0" })
}

// heldBytes reads quire_memory_budget_held_bytes from the API's /metrics.
func heldBytes(t *testing.T, e *env) string {
	t.Helper()
	rec := httptest.NewRecorder()
	e.API.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	m := regexp.MustCompile(`(?m)^quire_memory_budget_held_bytes (\S+)$`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		t.Fatalf("/metrics: %d, no quire_memory_budget_held_bytes", rec.Code)
	}
	return m[1]
}
