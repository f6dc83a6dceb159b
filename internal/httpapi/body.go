package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/quire-dev/quire"
)

func tooLarge(limit int64) error {
	return quire.Errorf(quire.CodePayloadTooLarge, "The request body is larger than the limit of %d bytes.", limit)
}

// bodyError translates an error from reading a request body.
func bodyError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return tooLarge(mb.Limit)
	}
	return err
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

// FilePart reads the multipart part named field of r into memory, for
// handlers outside this package (the verification page's form); errors
// are the contract's (400, 413).
func FilePart(r *http.Request, field string) ([]byte, error) {
	b, err := filePart(r, field)
	return b, bodyError(err)
}
