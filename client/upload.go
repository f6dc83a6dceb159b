package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
)

// errUploadOver stops the goroutine writing an upload once the request is
// over, whether or not the transport read the whole body.
var errUploadOver = errors.New("the request is over")

// postFile sends file as the part "file" of a multipart/form-data body and
// returns the 2xx response, whose body the caller must close.
//
// The body is streamed: a goroutine writes the multipart encoding into a
// pipe that the HTTP transport reads, so memory stays constant whatever
// the file's size. postFile returns only after that goroutine has ended,
// so the caller may close or reuse file as soon as it returns.
func (c *Client) postFile(ctx context.Context, r request, file io.Reader, filename, contentType string) (*http.Response, error) {
	return c.postFiles(ctx, r, filePart{file, filename, contentType})
}

// filePart is one part "file" of a multipart body.
type filePart struct {
	content     io.Reader
	name        string
	contentType string
}

// postFiles is postFile for several parts "file", in order.
func (c *Client) postFiles(ctx context.Context, r request, files ...filePart) (*http.Response, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	r.body, r.contentType = pr, mw.FormDataContentType()
	written := make(chan error, 1)
	go func() { written <- writeMultipart(pw, mw, files) }()

	res, err := c.do(ctx, r)
	pr.CloseWithError(errUploadOver) // unblocks the writer if the transport stopped reading early
	werr := <-written
	if err != nil {
		if werr != nil && !errors.Is(werr, errUploadOver) && !errors.Is(werr, io.ErrClosedPipe) {
			// The upload failed on our side: that is the cause, not the
			// transport's report of a broken body.
			return nil, fmt.Errorf("quire client: %s: reading %w", r.op(), werr)
		}
		return nil, err
	}
	return res, nil
}

// writeMultipart writes the whole multipart body into pw and closes it,
// with the error that stopped it if any, so the transport's read ends too.
func writeMultipart(pw *io.PipeWriter, mw *multipart.Writer, files []filePart) error {
	var err error
	for _, f := range files {
		if err = writeFilePart(mw, f.content, f.name, f.contentType); err != nil {
			err = fmt.Errorf("%s: %w", f.name, err)
			break
		}
	}
	if err == nil {
		err = mw.Close() // the closing boundary
	}
	pw.CloseWithError(err) // nil: the reader sees io.EOF
	return err
}

func writeFilePart(mw *multipart.Writer, file io.Reader, filename, contentType string) error {
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data",
		map[string]string{"name": "file", "filename": filename}))
	h.Set("Content-Type", contentType)
	part, err := mw.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = io.Copy(part, file)
	return err
}

// baseName keeps only the last element of a file name, cut at either
// separator whatever the system the client runs on: the directories of
// the caller's machine are none of the service's business.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	return name
}
