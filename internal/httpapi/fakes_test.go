package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/signing"
)

// These tests run the HTTP adapter alone, on fakes of the services it
// needs (deps.go): routing, authentication, decoding and the error body,
// in milliseconds, with no engine and no database. What the services do
// with a request is tested in their packages and end to end (harness_test.go).

// fakeKeys knows one API key, goodKey.
type fakeKeys struct{ httpapi.Keys }

const goodKey = "qk_fake"

func (fakeKeys) Authenticate(_ context.Context, key string) (quire.APIKey, error) {
	if key != goodKey {
		return quire.APIKey{}, quire.Errorf(quire.CodeAuthentication, "Invalid API key.")
	}
	return quire.APIKey{ID: "k1", Email: "fake@example.com"}, nil
}

func (k fakeKeys) Recheck(ctx context.Context, id string) (quire.APIKey, error) {
	return k.Authenticate(ctx, goodKey)
}

// fakeSigner signs nothing: it answers what the test sets, and records
// the request it was given.
type fakeSigner struct {
	httpapi.Signer
	err  error
	got  chan signing.Request
	maxB int64
}

func (f *fakeSigner) MaxRequestBytes() int64  { return f.maxB }
func (f *fakeSigner) MaxDocumentBytes() int64 { return f.maxB }

func (f *fakeSigner) Sign(_ context.Context, req signing.Request, _ string) (signing.Result, error) {
	f.got <- req
	if f.err != nil {
		return signing.Result{}, f.err
	}
	return signing.Result{PDF: []byte("%PDF-1.7 signed"), EventID: "ev", SHA256: "00"}, nil
}

func (f *fakeSigner) Check(context.Context, signing.Request) error { return f.err }

// fakeServer serves the API on the fakes; signer answers /v1/sign.
func fakeServer(t *testing.T, signer *fakeSigner) *httptest.Server {
	t.Helper()
	s := httpapi.New(httpapi.Deps{
		Auth:    fakeKeys{},
		Signing: signer,
		Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		Metrics: prometheus.NewRegistry(),
		Version: "test",
	}, httpapi.Options{MaxBodyBytes: 1 << 20})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

func fakeDo(t *testing.T, srv *httptest.Server, method, path, key, body string) response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, b}
}

// TestFakeRoutingAndAuthentication: an unknown path is 404, a known path
// with another method 405 naming the allowed one, a signing without a key
// or with a wrong one 401; each in the error body of the contract, and
// none reaches the signer.
func TestFakeRoutingAndAuthentication(t *testing.T) {
	t.Parallel()
	signer := &fakeSigner{got: make(chan signing.Request, 1), maxB: 1 << 20}
	srv := fakeServer(t, signer)
	fakeDo(t, srv, "GET", "/v1/nowhere", goodKey, "").errorBody(t, 404, quire.CodeNotFound)
	r := fakeDo(t, srv, "GET", "/v1/sign", goodKey, "")
	r.errorBody(t, 405, quire.CodeMethodNotAllowed)
	if !strings.Contains(r.header.Get("Allow"), "POST") {
		t.Errorf("405 Allow = %q, want POST named", r.header.Get("Allow"))
	}
	fakeDo(t, srv, "POST", "/v1/sign", "", `{}`).errorBody(t, 401, quire.CodeAuthentication)
	fakeDo(t, srv, "POST", "/v1/sign", "qk_wrong", `{}`).errorBody(t, 401, quire.CodeAuthentication)
	select {
	case req := <-signer.got:
		t.Errorf("the signer was reached: %+v", req)
	default: // each answer above came back before this, and none was the signer's
	}
}

// TestFakeSignDecoding: the adapter's own refusals (a body that is not
// JSON, one over the route's limit) are 400 and 413, before the signer;
// a well-formed request reaches it, and the signer's refusal is answered
// with its own code and message.
func TestFakeSignDecoding(t *testing.T) {
	t.Parallel()
	signer := &fakeSigner{got: make(chan signing.Request, 1), maxB: 64 << 10}
	srv := fakeServer(t, signer)
	fakeDo(t, srv, "POST", "/v1/sign", goodKey, `{"document":`).errorBody(t, 400, quire.CodeValidation)
	fakeDo(t, srv, "POST", "/v1/sign", goodKey, signBody(`{"base64":"`+strings.Repeat("A", 200<<10)+`"}`)).errorBody(t, 413, quire.CodePayloadTooLarge)
	select {
	case req := <-signer.got:
		t.Fatalf("a refused request reached the signer: %+v", req)
	default:
	}

	signer.err = quire.Errorf(quire.CodeUnprocessable, "The document is encrypted.")
	b := fakeDo(t, srv, "POST", "/v1/sign", goodKey, signBody(inline([]byte("%PDF-")))).errorBody(t, 422, quire.CodeUnprocessable)
	if b.Message != "The document is encrypted." {
		t.Errorf("message %q, want the signer's", b.Message)
	}
	if req := <-signer.got; string(req.Document.Bytes) != "%PDF-" {
		t.Errorf("the signer got the document %q, want the decoded base64", req.Document.Bytes)
	}
}
