package client

import (
	"context"
	"io"
	"net/url"
	"strings"
)

// mediaTypes are the content types of the input formats the service's
// conversion accepts, sent with the uploaded part.
var mediaTypes = map[string]string{
	"docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	"doc":  "application/msword",
	"odt":  "application/vnd.oasis.opendocument.text",
	"rtf":  "application/rtf",
	"html": "text/html",
	"md":   "text/markdown",
}

// Convert converts a document to PDF (POST /v1/convert?from=...) and
// returns the PDF. from names the input format: "docx" (the one in use),
// or "doc", "odt", "rtf", "html", "md" where the service's engine can.
// Only the base name of filename is sent. It needs an API key.
//
// The file is streamed to the service as it is read, never held in memory
// whole, so it may be larger than the memory available; Convert is done
// with file when it returns. The PDF answered is read within the limit of
// WithMaxResponseBytes.
func (c *Client) Convert(ctx context.Context, file io.Reader, filename, from string) ([]byte, error) {
	r := request{method: "POST", path: "/v1/convert", accept: "application/pdf", auth: true, query: url.Values{}}
	if from != "" {
		r.query.Set("from", from)
	}
	name := baseName(filename)
	if name == "" {
		name = "document." + from
	}
	res, err := c.postFile(ctx, r, file, name, mediaTypeOf(from))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return c.readAll(r, res)
}

func mediaTypeOf(format string) string {
	if t, ok := mediaTypes[strings.ToLower(format)]; ok {
		return t
	}
	return "application/octet-stream"
}
