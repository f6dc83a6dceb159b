package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/annotate"
	"github.com/quire-dev/quire/internal/conversion"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/keylimit"
	"github.com/quire-dev/quire/internal/memory"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdfsign"
	"github.com/quire-dev/quire/internal/pdftools"
	"github.com/quire-dev/quire/internal/signing"
	"github.com/quire-dev/quire/internal/telemetry"
)

// These tests run the HTTP adapter alone, on fakes of the services it
// needs (deps.go): routing, authentication, decoding, limits, headers and
// the error body, in milliseconds, with no engine and no database. What
// the services do with a request is tested in their packages and end to
// end (harness_test.go). Each fake answers what its test sets and records
// what it was given; its zero value answers success.

// fakeKeys knows one API key, goodKey; register and verify answer their
// errors when set.
type fakeKeys struct {
	httpapi.Keys
	registerErr, verifyErr error
	revoked                bool // Recheck: the key was revoked since
}

const goodKey = "qk_fake"

// fakeKey is the key goodKey authenticates.
var fakeKey = quire.APIKey{ID: "k1", Email: "fake@example.com"}

func (fakeKeys) Authenticate(_ context.Context, key string) (quire.APIKey, error) {
	if key != goodKey {
		return quire.APIKey{}, quire.Errorf(quire.CodeAuthentication, "Invalid API key.")
	}
	return fakeKey, nil
}

func (k fakeKeys) Recheck(ctx context.Context, id string) (quire.APIKey, error) {
	if k.revoked {
		return quire.APIKey{}, quire.Errorf(quire.CodeAuthentication, "The API key has been revoked.")
	}
	return k.Authenticate(ctx, goodKey)
}

func (k fakeKeys) Register(context.Context, string, string) error { return k.registerErr }

func (k fakeKeys) Verify(_ context.Context, email, code, _ string) (string, error) {
	if k.verifyErr != nil {
		return "", k.verifyErr
	}
	return "sd_for_" + email + "_" + code, nil
}

// fakeSigner signs nothing: it answers what the test sets, and records
// the request it was given (in got, when set). A request with fields
// that did not decode is refused as the service refuses it, naming them.
type fakeSigner struct {
	httpapi.Signer
	err    error
	got    chan signing.Request
	hold   chan struct{} // when set, Sign returns once it is closed
	maxB   int64
	verify signing.VerifyResult
	ca     map[string][]byte // the DER files of CRL and CACertificate, by CA id
}

// MaxRequestBytes leaves room for the base64 of a document of maxB bytes
// and the rest of the request, as the service's does.
func (f *fakeSigner) MaxRequestBytes() int64  { return 2 * f.maxB }
func (f *fakeSigner) MaxDocumentBytes() int64 { return f.maxB }

func (f *fakeSigner) Sign(_ context.Context, req signing.Request, _ string) (signing.Result, error) {
	if f.got != nil {
		f.got <- req
	}
	if f.hold != nil {
		<-f.hold
	}
	if err := f.Check(context.Background(), req); err != nil {
		return signing.Result{}, err
	}
	return signing.Result{PDF: []byte("%PDF-1.7 signed"), EventID: "ev", SHA256: "00", Level: pdfsign.LevelB}, nil
}

func (f *fakeSigner) Check(_ context.Context, req signing.Request) error {
	if err := quire.InvalidRequest("The sign request is not valid.", req.Malformed, nil); err != nil {
		return err
	}
	return f.err
}

func (f *fakeSigner) Verify(_ context.Context, d signing.Document) (signing.VerifyResult, error) {
	if f.err != nil {
		return signing.VerifyResult{}, f.err
	}
	res := f.verify
	res.Document.Size = len(d.Bytes)
	return res, nil
}

func (f *fakeSigner) Key() pdfsign.KeyInfo {
	return pdfsign.KeyInfo{Version: "v-fake", Algorithm: "ECDSA-SHA256"}
}

func (f *fakeSigner) TSAStates() []pdfsign.TSAState {
	return []pdfsign.TSAState{{URL: "https://tsa.example", State: "ok"}}
}

func (f *fakeSigner) CRL(id string) ([]byte, error) { return f.caFile(id) }

func (f *fakeSigner) CACertificate(id string) ([]byte, error) { return f.caFile(id) }

func (f *fakeSigner) caFile(id string) ([]byte, error) {
	if der, ok := f.ca[id]; ok {
		return der, nil
	}
	return nil, quire.Errorf(quire.CodeNotFound, "There is no CA %s.", id)
}

// fakeTelemetry takes payloads into got and reports an empty usage.
type fakeTelemetry struct {
	got     []telemetry.Request
	refused int
	err     error
	own     []string // the license keys of fakeKey's e-mail
	asked   telemetry.UsageQuery
}

func (f *fakeTelemetry) Collect(_ context.Context, req *telemetry.Request) error {
	f.got = append(f.got, *req)
	return f.err
}

func (f *fakeTelemetry) Refused() {
	f.refused++
}

func (f *fakeTelemetry) KeysOf(context.Context, string) ([]string, error) { return f.own, nil }

func (f *fakeTelemetry) Report(_ context.Context, q telemetry.UsageQuery) (telemetry.Report, error) {
	f.asked = q
	rep := telemetry.Report{From: q.From, To: q.To, GroupBy: "month"}
	for _, k := range q.Keys {
		rep.Licenses = append(rep.Licenses, telemetry.LicenseUsage{LicenseKey: k})
	}
	return rep, f.err
}

// fakeFiller fills nothing: it answers the template it was given.
type fakeFiller struct {
	err       error
	unmatched []string
	got       chan annotate.Request
}

func (f *fakeFiller) MaxDocumentBytes() int64 { return 1 << 20 }

func (f *fakeFiller) Check(_ context.Context, req annotate.Request) error {
	if err := quire.InvalidRequest("The annotate request is not valid.", req.Malformed, nil); err != nil {
		return err
	}
	return f.err
}

func (f *fakeFiller) Annotate(ctx context.Context, req annotate.Request) (annotate.Result, error) {
	if f.got != nil {
		f.got <- req
	}
	if err := f.Check(ctx, req); err != nil {
		return annotate.Result{}, err
	}
	res := annotate.Result{Document: req.Document.Bytes, ContentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
	if req.PDF { // its template is the PDF, counted as the converter counts it
		res.Pages = pdf.PageCount(res.Document)
	}
	res.Unmatched = f.unmatched
	return res, nil
}

// fakeConversion "converts" by answering the first file's bytes.
type fakeConversion struct {
	err error
	got chan conversion.Request
}

func (f *fakeConversion) Check(req conversion.Request) error {
	if err := quire.InvalidRequest("The conversion request is not valid.", req.Malformed, nil); err != nil {
		return err
	}
	return f.err
}

func (f *fakeConversion) Convert(_ context.Context, req conversion.Request) (conversion.Result, error) {
	if f.got != nil {
		f.got <- req
	}
	if err := f.Check(req); err != nil {
		return conversion.Result{}, err
	}
	return conversion.Result{Output: req.Files[0].Data, ContentType: "application/pdf", Pages: 1,
		Engine: 1500 * time.Microsecond, Queued: 500 * time.Microsecond, Total: 2 * time.Millisecond}, nil
}

// fakeEngine is a pool in the state st.
type fakeEngine struct {
	st      engine.Status
	version string // Printer's
}

func (f *fakeEngine) Status() engine.Status     { return f.st }
func (f *fakeEngine) RetryAfter() time.Duration { return 5 * time.Second }
func (f *fakeEngine) Version() string           { return f.version }
func readyEngine(version string) *fakeEngine {
	return &fakeEngine{st: engine.Status{Workers: 1, Ready: 1, Version: version}, version: version}
}

// fakePDFTools answers res, or err, and records the request.
type fakePDFTools struct {
	res pdftools.Result
	err error
	got chan pdftools.Request
}

func (f *fakePDFTools) MaxBytes() int64 { return 1 << 20 }
func (f *fakePDFTools) MaxFiles() int   { return 2 }

func (f *fakePDFTools) Check(_ context.Context, req pdftools.Request) error { return f.err }

func (f *fakePDFTools) Do(ctx context.Context, req pdftools.Request) (pdftools.Result, error) {
	if f.got != nil {
		f.got <- req
	}
	return f.res, f.Check(ctx, req)
}

// fakeJobs stores one job at a time, "j1", as the test sets it.
type fakeJobs struct {
	webhookErr error
	submitErr  error
	submitted  []quire.JobRequest
	job        quire.Job
	result     quire.JobResult
	resultErr  error
}

func (f *fakeJobs) CheckWebhook(context.Context, string, string) error { return f.webhookErr }

func (f *fakeJobs) Submit(_ context.Context, keyID, op, webhook string, req quire.JobRequest) (quire.Job, error) {
	if f.submitErr != nil {
		return quire.Job{}, f.submitErr
	}
	f.submitted = append(f.submitted, req)
	return quire.Job{ID: "j1", KeyID: keyID, Operation: op, Status: "queued", CreatedAt: time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC),
		Webhook: quire.JobWebhook{URL: webhook}}, nil
}

func (f *fakeJobs) Get(_ context.Context, keyID, id string) (quire.Job, error) {
	if id != f.job.ID || keyID != f.job.KeyID {
		return quire.Job{}, quire.Errorf(quire.CodeNotFound, "There is no job %s.", id)
	}
	return f.job, nil
}

func (f *fakeJobs) Result(ctx context.Context, keyID, id string) (quire.JobResult, error) {
	if _, err := f.Get(ctx, keyID, id); err != nil {
		return quire.JobResult{}, err
	}
	return f.result, f.resultErr
}

// fakeLimits admits with the limits lim, or refuses with err (with the
// admission's state for the headers); quotaErr refuses a job.
type fakeLimits struct {
	lim      keylimit.Limits
	err      error
	quotaErr error
}

func (f *fakeLimits) Admit(context.Context, string) (*keylimit.Admission, error) {
	return &keylimit.Admission{Limits: f.lim, Running: 1, Month: 30 * 24 * time.Hour, MonthEnd: 90 * time.Second}, f.err
}

func (f *fakeLimits) CheckQuota(context.Context, string) error { return f.quotaErr }

// fakeMeter records the charges of the answers, or fails with err.
type fakeMeter struct {
	err     error
	charges []quire.Charge
}

func (f *fakeMeter) Now() time.Time { return time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC) }

func (f *fakeMeter) Record(_ context.Context, c quire.Charge) (quire.ChargeResult, error) {
	if f.err != nil {
		return quire.ChargeResult{}, f.err
	}
	f.charges = append(f.charges, c)
	return quire.ChargeResult{}, nil
}

func (f *fakeMeter) Counted(quire.Charge, quire.ChargeResult) {}

// fakeUsage is the metering's store: fakeKey, with one sign answered
// on 2026-11-02.
type fakeUsage struct{ metering.Store }

func (fakeUsage) APIUsage(_ context.Context, _, _ int64, _ bool, keys []string) ([]quire.APIUsageRow, error) {
	return []quire.APIUsageRow{{KeyID: fakeKey.ID, Period: quire.Day(time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)), Operation: quire.OpSign,
		OperationUsage: quire.OperationUsage{Requests: 1, Documents: 1}}}, nil
}

func (fakeUsage) Keys(context.Context) ([]quire.APIKey, error) {
	return []quire.APIKey{fakeKey, {ID: "k2", Email: "other@example.com"}}, nil
}

// fakeDB answers pings with err.
type fakeDB struct{ err error }

func (f *fakeDB) Ping(context.Context) error { return f.err }

// errDown is a dependency's failure that is no error of the contract.
var errDown = errors.New("dial tcp 127.0.0.1:5432: connection refused")

// fakes are what fakeAPI serves: a test sets those its routes reach
// (nil: the service is absent, as Deps allows).
type fakes struct {
	keys       fakeKeys
	signer     *fakeSigner
	telemetry  *fakeTelemetry
	filler     *fakeFiller
	conversion *fakeConversion
	convert    *fakeEngine
	chromium   *fakeEngine
	pdf        *fakePDFTools
	jobs       *fakeJobs
	limits     *fakeLimits
	meter      *fakeMeter
	usage      *fakeUsage
	db         fakeDB
	memory     *memory.Budget
	foreign    []httpapi.Route
	opt        httpapi.Options
	logs       *syncBuffer // nil: discarded
}

// newFakes has a signer, telemetry and a conversion, which most routes
// reach, and a body limit of 1 MiB.
func newFakes() *fakes {
	return &fakes{signer: &fakeSigner{maxB: 64 << 10}, telemetry: &fakeTelemetry{}, conversion: &fakeConversion{},
		opt: httpapi.Options{MaxBodyBytes: 1 << 20, ConvertMaxBytes: 1 << 20, ConvertMaxFiles: 2, AdminToken: fakeAdmin}}
}

const fakeAdmin = "admin-token-fake"

// deps are the fakes as the server's Deps.
func (f *fakes) deps() httpapi.Deps {
	var logs io.Writer = io.Discard
	if f.logs != nil {
		logs = f.logs
	}
	d := httpapi.Deps{Auth: f.keys, Telemetry: f.telemetry, Signing: f.signer, DB: &f.db, Memory: f.memory, Foreign: f.foreign,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Metrics: prometheus.NewRegistry(), Version: "fake"}
	// An absent fake is left a nil interface, which Deps reads as absent.
	if f.conversion != nil {
		d.Conversion = f.conversion
	}
	if f.convert != nil {
		d.Convert = f.convert
	}
	if f.chromium != nil {
		d.Chromium = f.chromium
	}
	if f.filler != nil {
		d.Annotate = f.filler
	}
	if f.pdf != nil {
		d.PDFTools = f.pdf
	}
	if f.jobs != nil {
		d.Jobs = f.jobs
	}
	if f.limits != nil {
		d.Limits = f.limits
	}
	if f.meter != nil {
		d.Meter = f.meter
	}
	if f.usage != nil {
		d.APIUsage = f.usage
	}
	return d
}

// fakeAPI is the API server on the fakes, and its *httpapi.Server.
type fakeAPI struct {
	*httptest.Server
	api *httpapi.Server
	t   *testing.T
}

func (f *fakes) serve(t *testing.T) *fakeAPI {
	t.Helper()
	api := httpapi.New(f.deps(), f.opt)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return &fakeAPI{Server: srv, api: api, t: t}
}

// fakeServer serves the API on the fakes, signer answering /v1/sign.
func fakeServer(t *testing.T, signer *fakeSigner) *fakeAPI {
	f := newFakes()
	f.signer = signer
	return f.serve(t)
}

// send sends a request with the headers given as name, value pairs.
func (a *fakeAPI) send(method, path string, body io.Reader, header ...string) response {
	a.t.Helper()
	req, err := http.NewRequest(method, a.URL+path, body)
	if err != nil {
		a.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := a.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		a.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return response{res.StatusCode, res.Header, b}
}

// fakeDo sends body as JSON, with key as the bearer token unless empty.
func fakeDo(t *testing.T, a *fakeAPI, method, path, key, body string) response {
	t.Helper()
	var header []string
	if key != "" {
		header = append(header, "Authorization", "Bearer "+key)
	}
	if body != "" {
		header = append(header, "Content-Type", "application/json")
	}
	return a.send(method, path, strings.NewReader(body), header...)
}

// postFiles posts the files as multipart "file" parts with goodKey.
func (a *fakeAPI) postFiles(path string, files map[string]string, header ...string) response {
	a.t.Helper()
	body, contentType := multipartOf(a.t, files)
	return a.send("POST", path, body, append([]string{"Authorization", "Bearer " + goodKey, "Content-Type", contentType}, header...)...)
}

// multipartOf is a multipart body of "file" parts, by file name, in the
// order of their names.
func multipartOf(t *testing.T, files map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p, err := w.CreateFormFile("file", name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(p, files[name])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return &b, w.FormDataContentType()
}

// detail returns the issue of field in b, failing when it has none.
func detail(t *testing.T, b httpapi.ErrorBody, field string) string {
	t.Helper()
	for _, d := range b.Details {
		if d.Field == field {
			return d.Issue
		}
	}
	t.Fatalf("no detail for %s in %+v", field, b.Details)
	return ""
}

// syncBuffer is a log that tests read while the server writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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
