package httpapi

import (
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/signing"
)

func (s *Server) signingRoutes() []Route {
	max := s.deps.Signing.MaxRequestBytes()
	return []Route{
		{Method: "POST", Path: "/v1/sign", Handler: s.sign, MaxBody: max},
		{Method: "POST", Path: "/v1/verify", Handler: s.verifySignatures, MaxBody: max},
		{Method: "GET", Path: "/v1/verify/key", Handler: s.signingKey},
	}
}

// SignResponse is the answer of POST /v1/sign (DESIGN.md).
type SignResponse struct {
	Document struct {
		Base64      string `json:"base64"`
		ContentType string `json:"contentType"`
	} `json:"document"`
}

func (s *Server) sign(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, bodyError(err))
		return
	}
	req, err := signing.DecodeRequest(body, s.deps.Signing.MaxDocumentBytes())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	key, _ := APIKey(r.Context())
	pdf, err := s.deps.Signing.Sign(r.Context(), req, key.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var res SignResponse
	res.Document.Base64 = base64.StdEncoding.EncodeToString(pdf)
	res.Document.ContentType = "application/pdf"
	writeJSON(w, http.StatusOK, res)
}

// verifySignatures checks the signatures of a PDF sent as the multipart
// field "file" or as JSON {"document":{"base64":...}}.
func (s *Server) verifySignatures(w http.ResponseWriter, r *http.Request) {
	var pdf []byte
	var err error
	if isMultipart(r) {
		pdf, err = filePart(r, "file")
	} else {
		var body []byte
		if body, err = io.ReadAll(r.Body); err == nil {
			pdf, err = signing.DecodeVerifyRequest(body, s.deps.Signing.MaxDocumentBytes())
		}
	}
	if err != nil {
		s.fail(w, r, bodyError(err))
		return
	}
	res, err := s.deps.Signing.Verify(r.Context(), pdf)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) signingKey(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.deps.Signing.Key())
}

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

// filePart reads the multipart part named field, streaming past the
// others; the route's body limit bounds what is read.
func filePart(r *http.Request, field string) ([]byte, error) {
	missing := quire.Invalid("The file is missing.", quire.Detail{Field: field, Issue: "is required as a multipart/form-data part"})
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, missing
	}
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, missing
		}
		if err != nil {
			return nil, badMultipart(err)
		}
		if p.FormName() != field {
			continue
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, badMultipart(err)
		}
		if len(b) == 0 {
			return nil, quire.Invalid("The file is empty.", quire.Detail{Field: field, Issue: "must not be empty"})
		}
		return b, nil
	}
}

// badMultipart keeps body-limit errors as they are (413) and reports the
// rest as a malformed request.
func badMultipart(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return err
	}
	return quire.Invalid("The multipart body is malformed.", quire.Detail{Field: "body", Issue: strings.TrimPrefix(err.Error(), "multipart: ")})
}
