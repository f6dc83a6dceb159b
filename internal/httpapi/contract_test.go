package httpapi_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// hostedDocument is the hosted API's OpenAPI document (testdata/README.md).
const hostedDocument = "testdata/hosted-openapi.json"

// undeclaredStatuses are answers quire gives on purpose with a status the
// hosted document does not list for the operation. Their bodies are
// checked against the hosted document's own error schema
// (components/schemas/Error), which every error of the hosted API uses.
var undeclaredStatuses = map[string]string{
	"POST /v1/sign 413":   "the hosted document lists no 413 for sign, but a document over the limit must be refused with the contract's 413 (DESIGN.md), not a 400",
	"POST /v1/verify 422": "the hosted document lists no 422 for verify; an encrypted or unreadable PDF is UNPROCESSABLE_DOCUMENT (422) on every quire endpoint, as for sign",
}

// contract validates answers against the hosted document's response
// schemas.
type contract struct {
	t        *testing.T
	compiler *jsonschema.Compiler
	ops      map[string]map[string]json.RawMessage // "METHOD /path" -> status -> response object
	covered  map[string]bool                       // operations with at least one case
}

func loadContract(t *testing.T) *contract {
	t.Helper()
	raw, err := os.ReadFile(hostedDocument)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", hostedDocument, err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := &contract{t: t, compiler: jsonschema.NewCompiler(), ops: map[string]map[string]json.RawMessage{}, covered: map[string]bool{}}
	// OpenAPI 3.0 schemas are a subset of JSON Schema draft 4-7; draft 7
	// reads every keyword the hosted document uses. Formats (date,
	// date-time, email) are asserted: the hosted schemas rely on them.
	c.compiler.DefaultDraft(jsonschema.Draft7)
	c.compiler.AssertFormat()
	if err := c.compiler.AddResource(hostedDocument, parsed); err != nil {
		t.Fatal(err)
	}
	for path, methods := range doc.Paths {
		for method, op := range methods {
			c.ops[strings.ToUpper(method)+" "+path] = op.Responses
		}
	}
	return c
}

// schema compiles the schema at a JSON pointer of the hosted document.
func (c *contract) schema(pointer ...string) *jsonschema.Schema {
	c.t.Helper()
	for i, p := range pointer {
		pointer[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1")
	}
	sch, err := c.compiler.Compile(hostedDocument + "#/" + strings.Join(pointer, "/"))
	if err != nil {
		c.t.Fatalf("hosted schema %v: %v", pointer, err)
	}
	return sch
}

// problems returns what is wrong with the answer r to the hosted operation
// op ("METHOD /path"), judged by the hosted document; none: conforms.
func (c *contract) problems(op string, r response) []string {
	method, path, _ := strings.Cut(op, " ")
	status := strconv.Itoa(r.status)
	responses, ok := c.ops[op]
	if !ok {
		return []string{"the hosted document has no operation " + op}
	}
	var sch *jsonschema.Schema
	mediaType, _, _ := mime.ParseMediaType(r.header.Get("Content-Type"))
	if declared, ok := responses[status]; ok {
		var res struct {
			Content map[string]json.RawMessage `json:"content"`
		}
		json.Unmarshal(declared, &res)
		if len(res.Content) == 0 { // "Default Response": any body
			return nil
		}
		media, ok := res.Content[mediaType]
		if !ok {
			return []string{fmt.Sprintf("%s answered %s with Content-Type %q; the hosted document declares %v", op, status, mediaType, keys(res.Content))}
		}
		var m struct {
			Schema map[string]any `json:"schema"`
		}
		json.Unmarshal(media, &m)
		if m.Schema["format"] == "binary" {
			if len(r.body) == 0 {
				return []string{op + " answered " + status + " with an empty document"}
			}
			return nil
		}
		sch = c.schema("paths", path, strings.ToLower(method), "responses", status, "content", mediaType, "schema")
	} else if _, ok := undeclaredStatuses[op+" "+status]; ok && mediaType == "application/json" {
		sch = c.schema("components", "schemas", "Error")
	} else {
		return []string{fmt.Sprintf("%s answered %s (%.200s); the hosted document declares %v", op, status, r.body, keys(responses))}
	}
	body, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err != nil {
		return []string{fmt.Sprintf("%s answered %s with a body that is not JSON: %v", op, status, err)}
	}
	if err := sch.Validate(body); err != nil {
		return []string{fmt.Sprintf("%s answered %s (%.300s), which the hosted schema refuses: %v", op, status, r.body, err)}
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// contractCase is one request to a hosted operation, valid or not.
type contractCase struct {
	op, name string
	status   int // expected, so that a case proves what it means to
	do       func() response
}

// TestHostedContract sends valid and invalid requests to every hosted
// operation quire serves and validates each answer against the hosted
// document: the status must be one it declares for the operation, and the
// body must match that status's schema. quire's error body (code, error,
// message, requestId, details) is the hosted Error schema.
func TestHostedContract(t *testing.T) {
	c := loadContract(t)
	e := newEnv(t, storetest.Open(t, storetest.URL(t, "sqlite")), unlimited(), withConversion())
	key := e.key("contract@example.com")
	json := map[string]string{"Content-Type": "application/json"}
	signed := signedPDF(t, e.signPDF(key, signBody(inline(pdftest.OnePage("contract")))))
	docx := e.convert(key, "from=md&to=docx", "c.md", []byte("# Contract\n\nText.\n"))
	if docx.status != 200 {
		t.Fatalf("making a DOCX: %d %s", docx.status, docx.body)
	}
	verifyBody := func(pdf []byte) string {
		return `{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdf) + `"}}`
	}
	bigPDF := append(pdftest.OnePage("big"), make([]byte, 3<<20)...)

	// POST /v1/collect is not a hosted operation (the editor library's
	// telemetry endpoint is not in the hosted document), so it has no case.
	// POST /v1/annotate has only its refusal here; its branch adds the rest.
	cases := []contractCase{
		{"GET /v1/auth/register", "valid", 200, func() response { return e.register("new@example.com") }},
		{"GET /v1/auth/register", "no e-mail", 400, func() response { return e.get("/v1/auth/register") }},
		{"GET /v1/auth/register", "bad e-mail", 400, func() response { return e.register("not-an-address") }},
		{"GET /v1/auth/verify", "valid", 200, func() response { return e.verify("other@example.com", e.codeFor("other@example.com")) }},
		{"GET /v1/auth/verify", "wrong code", 400, func() response { return e.verify("new@example.com", "000000") }},
		{"GET /v1/auth/verify", "no code", 400, func() response { return e.get("/v1/auth/verify?email=new@example.com") }},

		{"POST /v1/sign", "valid", 200, func() response { return e.signPDF(key, signBody(inline(pdftest.OnePage("x")))) }},
		{"POST /v1/sign", "DOCX", 200, func() response { return e.signPDF(key, signBody(inline(docx.body))) }},
		{"POST /v1/sign", "no key", 401, func() response { return e.signPDF("", signBody(inline(pdftest.OnePage("x")))) }},
		{"POST /v1/sign", "unknown field", 400, func() response { return e.signPDF(key, `{"document":{"base64":"x"},"signr":{}}`) }},
		{"POST /v1/sign", "not JSON", 400, func() response { return e.signPDF(key, `{`) }},
		{"POST /v1/sign", "neither PDF nor DOCX", 400, func() response { return e.signPDF(key, signBody(inline([]byte("plain text")))) }},
		{"POST /v1/sign", "unreadable PDF", 422, func() response {
			return e.signPDF(key, signBody(inline([]byte("%PDF-1.7\nnothing else"))))
		}},
		{"POST /v1/sign", "too large", 413, func() response { return e.signPDF(key, signBody(inline(bigPDF))) }},

		{"POST /v1/verify", "signed, JSON", 200, func() response { return e.do("POST", "/v1/verify", strings.NewReader(verifyBody(signed)), json) }},
		{"POST /v1/verify", "unsigned", 200, func() response {
			return e.do("POST", "/v1/verify", strings.NewReader(verifyBody(pdftest.OnePage("u"))), json)
		}},
		{"POST /v1/verify", "no document", 400, func() response { return e.do("POST", "/v1/verify", strings.NewReader(`{}`), json) }},
		{"POST /v1/verify", "not JSON", 400, func() response { return e.do("POST", "/v1/verify", strings.NewReader(`[`), json) }},
		{"POST /v1/verify", "not a PDF", 422, func() response {
			return e.do("POST", "/v1/verify", strings.NewReader(verifyBody([]byte("plain text"))), json)
		}},
		{"POST /v1/verify", "too large", 413, func() response {
			return e.do("POST", "/v1/verify", strings.NewReader(verifyBody(bigPDF)), json)
		}},

		{"GET /v1/verify/key", "valid", 200, func() response { return e.get("/v1/verify/key") }},

		{"POST /v1/convert", "DOCX to PDF", 200, func() response { return e.convert(key, "from=docx", "c.docx", docx.body) }},
		{"POST /v1/convert", "Markdown to DOCX", 200, func() response { return e.convert(key, "from=md&to=docx", "c.md", []byte("# T\n")) }},
		{"POST /v1/convert", "HTML to DOCX", 200, func() response {
			return e.convert(key, "from=html&to=docx", "c.html", []byte("<p>T</p>"))
		}},
		{"POST /v1/convert", "no key", 401, func() response { return e.convert("", "from=docx", "c.docx", docx.body) }},
		{"POST /v1/convert", "no from", 400, func() response { return e.convert(key, "", "c.docx", docx.body) }},
		{"POST /v1/convert", "DOCX to DOCX", 400, func() response { return e.convert(key, "from=docx&to=docx", "c.docx", docx.body) }},
		{"POST /v1/convert", "not a DOCX", 400, func() response { return e.convert(key, "from=docx", "c.docx", []byte("plain text")) }},
		{"POST /v1/convert", "no file", 400, func() response {
			return e.do("POST", "/v1/convert?from=docx", strings.NewReader(""), map[string]string{"Authorization": "Bearer " + key})
		}},

		{"GET /openapi.json", "valid", 200, func() response { return e.get("/openapi.json") }},
		{"GET /v1/health", "valid", 200, func() response { return e.get("/v1/health") }},
		{"POST /v1/annotate", "no key", 401, func() response { return e.do("POST", "/v1/annotate", strings.NewReader(`{}`), json) }},
		{"GET /", "valid", 200, func() response { return e.get("/") }},
		{"GET /docs", "valid", 200, func() response { return e.get("/docs") }},
		{"GET /documentation", "valid", 200, func() response { return e.get("/documentation") }},
	}
	for _, cc := range cases {
		c.covered[cc.op] = true
		t.Run(cc.op+" "+cc.name, func(t *testing.T) {
			r := cc.do()
			problems := c.problems(cc.op, r)
			if r.status != cc.status {
				problems = append(problems, fmt.Sprintf("status %d, the case expects %d: %.300s", r.status, cc.status, r.body))
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
	// Every hosted operation has a case.
	for op := range c.ops {
		if !c.covered[op] {
			t.Errorf("no case for the hosted operation %s", op)
		}
	}
}

// TestHostedContractCatchesDepartures checks the checker: answers that
// depart from the hosted document in status, media type or body are
// reported.
func TestHostedContractCatchesDepartures(t *testing.T) {
	c := loadContract(t)
	jsonHeader := map[string][]string{"Content-Type": {"application/json"}}
	for name, bad := range map[string]struct {
		op string
		r  response
	}{
		"status not declared": {"GET /v1/verify/key", response{404, jsonHeader, []byte(`{"code":"NOT_FOUND","error":"Not Found","message":"x"}`)}},
		"required field":      {"GET /v1/verify/key", response{200, jsonHeader, []byte(`{"version":"v1","algorithm":"ECDSA-SHA256"}`)}},
		"fingerprint pattern": {"GET /v1/verify/key", response{200, jsonHeader, []byte(`{"version":"v1","algorithm":"a","publicKey":"p","fingerprint":"ab:cd","validFrom":"2026-01-01","validTo":"2027-01-01","issuer":"i"}`)}},
		"date format":         {"GET /v1/verify/key", response{200, jsonHeader, []byte(`{"version":"v1","algorithm":"a","publicKey":"p","fingerprint":"AB:CD","validFrom":"2026-01-01T00:00:00Z","validTo":"2027-01-01","issuer":"i"}`)}},
		"error without code":  {"POST /v1/verify", response{400, jsonHeader, []byte(`{"error":"Bad Request","message":"x"}`)}},
		"media type":          {"POST /v1/convert", response{200, map[string][]string{"Content-Type": {"text/plain"}}, []byte("x")}},
		"health status":       {"GET /v1/health", response{200, jsonHeader, []byte(`{"status":"ok","timestamp":"2026-01-01T00:00:00Z","version":"1"}`)}},
		"register not string": {"GET /v1/auth/register", response{200, jsonHeader, []byte(`{"message":"x"}`)}},
	} {
		if p := c.problems(bad.op, bad.r); len(p) == 0 {
			t.Errorf("%s: %s %d %s passes", name, bad.op, bad.r.status, bad.r.body)
		}
	}
	good := response{200, jsonHeader, []byte(`{"version":"v1","algorithm":"a","publicKey":"p","fingerprint":"AB:CD","validFrom":"2026-01-01","validTo":"2027-01-01","issuer":"i"}`)}
	if p := c.problems("GET /v1/verify/key", good); len(p) != 0 || !slices.Contains(keys(c.ops), "GET /v1/verify/key") {
		t.Errorf("a conforming answer is refused: %v", p)
	}
}
