package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/signing"
)

func (s *Server) signingRoutes() []Route {
	max := s.deps.Signing.MaxRequestBytes()
	return []Route{
		{Method: "POST", Path: "/v1/sign", Handler: s.sign, MaxBody: max, Budgeted: true, Async: true, Check: s.checkSign, Metered: quire.OpSign, Auth: KeyRequired},
		{Method: "POST", Path: "/v1/verify", Handler: s.verifySignatures, MaxBody: max, Budgeted: true, Metered: quire.OpVerify, Auth: KeyOptional},
		{Method: "GET", Path: "/v1/verify/key", Handler: s.signingKey},
		{Method: "GET", Path: "/v1/ca/{id}/crl", Handler: s.caFile(s.deps.Signing.CRL, "application/pkix-crl", "no-cache")},
		{Method: "GET", Path: "/v1/ca/{id}/certificate", Handler: s.caFile(s.deps.Signing.CACertificate, "application/pkix-cert", "max-age=86400")},
	}
}

// caFile serves a DER file of quire's own signing CA: its CRL (issued
// afresh, so never cached) or its certificate. Relying parties fetch them
// from the URLs in the signing certificate, without an API key.
func (s *Server) caFile(get func(caID string) ([]byte, error), contentType, cache string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// dispatch routes with mux.Handler, which sets no path values.
		der, err := get(strings.Split(r.URL.Path, "/")[3]) // "", "v1", "ca", id, file

		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", cache)
		w.Header().Set("Content-Length", strconv.Itoa(len(der)))
		w.Write(der)
	}
}

// sign answers the signed PDF of a sign request. Its JSON body has the
// hosted API's fixed schema; the query may add pdfa, which makes a DOCX a
// signed PDF/A, and level (with strict), the PAdES level asked. The
// header Quire-Signature-Level names the level reached.
func (s *Server) sign(w http.ResponseWriter, r *http.Request) {
	req, err := s.signRequestOf(r)
	if err == nil && len(req.Malformed) == 0 && req.Document.URL != "" {
		err = s.chargeDownload(r.Context(), s.deps.Signing.MaxDocumentBytes())
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	key, _ := APIKey(r.Context())
	res, err := s.deps.Signing.Sign(r.Context(), req, key.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("X-Quire-Event-Id", res.EventID)
	w.Header().Set("X-Quire-Document-SHA256", res.SHA256)
	w.Header().Set("Quire-Signature-Level", res.Level.String())
	writeDocument(w, res.PDF, "application/pdf", jsonField{"eventId", res.EventID}, jsonField{"sha256", res.SHA256})
}

// signRequestOf decodes the query and body of a sign request; Sign (and
// Check) validate it.
func (s *Server) signRequestOf(r *http.Request) (signing.Request, error) {
	q := newQueryDecoder(r.URL.Query(), signParams)
	if err := q.err(signInvalid); err != nil {
		return signing.Request{}, err
	}
	body, err := readBody(r)
	if err != nil {
		return signing.Request{}, err
	}
	req, err := decodeSignRequest(body, s.deps.Signing.MaxDocumentBytes())
	req.PDFA = q.string(engine.ParamPDFA)
	req.Level, req.Strict = q.string(paramLevel), q.bool(paramStrict)
	if qerr := q.err(signInvalid); qerr != nil {
		return signing.Request{}, qerr
	}
	return req, err
}

// checkSign is the sign route's Check.
func (s *Server) checkSign(r *http.Request) error {
	req, err := s.signRequestOf(r)
	if err != nil {
		return err
	}
	return s.deps.Signing.Check(r.Context(), req)
}

// jsonField is a top-level string field of an answer beside "document".
type jsonField struct{ name, value string }

// writeDocument writes the answer of POST /v1/sign and /v1/annotate
// (DESIGN.md), {"document":{"base64":"...","contentType":"..."}} and any
// further fields, encoding the base64 on the way out rather than holding
// it (and a JSON copy of it) in memory. contentType is one of quire's own
// media types, which need no JSON escaping.
func writeDocument(w http.ResponseWriter, doc []byte, contentType string, fields ...jsonField) {
	head, tail := `{"document":{"base64":"`, `","contentType":"`+contentType+`"}`
	for _, f := range fields {
		v, _ := json.Marshal(f.value) // a string always encodes
		tail += `,"` + f.name + `":` + string(v)
	}
	tail += "}\n"
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+base64.StdEncoding.EncodedLen(len(doc))+len(tail)))
	io.WriteString(w, head)
	// Chunks of 48 KiB (a multiple of 3: no padding until the last) make
	// few large writes; the base64 encoder of the standard library writes
	// 1 KiB at a time.
	const chunk = 48 << 10
	buf := make([]byte, base64.StdEncoding.EncodedLen(min(chunk, len(doc))))
	for len(doc) > 0 {
		n := min(chunk, len(doc))
		base64.StdEncoding.Encode(buf, doc[:n])
		if _, err := w.Write(buf[:base64.StdEncoding.EncodedLen(n)]); err != nil {
			return // the client has gone
		}
		doc = doc[n:]
	}
	io.WriteString(w, tail)
}

// verifySignatures checks the signatures of a PDF sent as the multipart
// field "file" or as JSON {"document":{"base64" or "url":...}}.
func (s *Server) verifySignatures(w http.ResponseWriter, r *http.Request) {
	doc, err := s.verifyInput(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.deps.Signing.Verify(r.Context(), doc)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// verifyInput is the document of a verify request: the multipart file, or
// the JSON request's document (inline or a URL, which the service loads).
func (s *Server) verifyInput(r *http.Request) (signing.Document, error) {
	if isMultipart(r) {
		pdf, err := FilePart(r, "file")
		return signing.Document{Bytes: pdf}, err
	}
	body, err := readBody(r)
	if err != nil {
		return signing.Document{}, err
	}
	max := s.deps.Signing.MaxDocumentBytes()
	doc, err := decodeVerifyRequest(body, max)
	if err == nil && doc.URL != "" {
		err = s.chargeDownload(r.Context(), max)
	}
	return doc, err
}

func (s *Server) signingKey(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Signing.Key())
}
