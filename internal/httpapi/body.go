package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/quire-dev/quire"
)

func tooLarge(limit int64) error {
	return quire.Errorf(quire.CodePayloadTooLarge, "The request body is larger than the limit of %d bytes.", limit)
}

// body is a request body as the handlers read it: limited to the route's
// size, and remembering the first error of the transport, which a parser
// (JSON, multipart) may wrap or replace with its own.
type body struct {
	io.ReadCloser
	err  error
	read int64 // bytes received, for the metering
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// bodyError translates an error met while reading or parsing the body of
// r. A failure to receive the body is always the client's: one larger
// than the limit (413), cut short before its declared length, stalled past
// the read timeout or dropped (400, without the network's details; logged
// as any 4xx). Any other error, a parser's own, is returned as it is.
func bodyError(r *http.Request, err error) error {
	if f := bodyFailure(r); f != nil {
		return f
	}
	return err
}

// bodyFailure is the error of the contract for a body that could not be
// received, or nil.
func bodyFailure(r *http.Request) error {
	b, ok := r.Body.(*body)
	if !ok || b.err == nil {
		return nil
	}
	var mb *http.MaxBytesError
	var timeout interface{ Timeout() bool }
	switch {
	case errors.As(b.err, &mb):
		return tooLarge(mb.Limit)
	case errors.Is(b.err, io.ErrUnexpectedEOF):
		return quire.Invalid("The request body ended before its declared length.",
			quire.Detail{Field: "body", Issue: "was cut short"})
	case errors.As(b.err, &timeout) && timeout.Timeout():
		return quire.Invalid("The request body did not arrive within the server's read timeout.",
			quire.Detail{Field: "body", Issue: "stopped arriving"})
	}
	return quire.Invalid("The request body could not be read.", quire.Detail{Field: "body", Issue: "could not be received"})
}

// readBody reads the whole body of r.
func readBody(r *http.Request) ([]byte, error) {
	// A declared length (the route's limit refused a larger one) is read
	// into one buffer of that size: growing one copies a large body over
	// and over.
	buf := bytes.NewBuffer(make([]byte, 0, max(r.ContentLength, 0)+bytes.MinRead))
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return nil, bodyError(r, err)
	}
	return buf.Bytes(), nil
}

func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

// FilePart reads the multipart part named field, streaming past the
// others; the route's body limit bounds what is read. Errors are the
// contract's (400, 413); the pages' forms use it too.
func FilePart(r *http.Request, field string) ([]byte, error) {
	files, err := fileParts(r, field, 1, true)
	if err != nil {
		return nil, err
	}
	return files[0].Data, nil
}

// Upload is one file of a multipart request.
type Upload struct {
	Name string // the client's file name, "" if it gave none
	Data []byte
}

// FileParts reads the multipart parts named field, in their order, at
// most max of them (more: 400, before the extra one is read); the route's
// body limit bounds what is read. Errors are the contract's (400, 413).
func FileParts(r *http.Request, field string, max int) ([]Upload, error) {
	return fileParts(r, field, max, false)
}

// fileParts reads the parts named field, at most max; first stops at the
// first one and leaves the rest of the body unread.
func fileParts(r *http.Request, field string, max int, first bool) ([]Upload, error) {
	missing := quire.Invalid("The file is missing.", quire.Detail{Field: field, Issue: "is required as a multipart/form-data part"})
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, missing
	}
	var files []Upload
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, badMultipart(r, err)
		}
		if p.FormName() != field {
			continue
		}
		if len(files) == max {
			return nil, quire.Invalid("The request has too many files.",
				quire.Detail{Field: field, Issue: fmt.Sprintf("at most %d files per request", max)})
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return nil, badMultipart(r, err)
		}
		if len(b) == 0 {
			return nil, quire.Invalid("The file is empty.", quire.Detail{Field: field, Issue: emptyIssue(p.FileName(), len(files))})
		}
		files = append(files, Upload{Name: p.FileName(), Data: b})
		if first {
			break
		}
	}
	if len(files) == 0 {
		return nil, missing
	}
	return files, nil
}

// emptyIssue is the issue of an empty file: the first of a request's
// files as it always was, a later one by its place and name.
func emptyIssue(name string, index int) string {
	if index == 0 {
		return "must not be empty"
	}
	return fmt.Sprintf("file %d (%q) must not be empty", index+1, name)
}

// badMultipart reports a failure to receive the body as bodyError does,
// and the rest as a malformed request.
func badMultipart(r *http.Request, err error) error {
	if f := bodyFailure(r); f != nil {
		return f
	}
	return quire.Invalid("The multipart body is malformed.", quire.Detail{Field: "body", Issue: strings.TrimPrefix(err.Error(), "multipart: ")})
}
