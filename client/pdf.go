package client

import (
	"context"
	"io"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// PDFFile is one file of a PDF operation: the PDF, the other PDFs of a
// merge, the image of a watermark, a file to attach.
type PDFFile struct {
	Name    string // only its base name is sent
	Content io.Reader
}

// PDFOptions are the options of a PDF operation, named as the query
// parameters of POST /v1/pdf/{operation}; zero values are not sent.
type PDFOptions struct {
	Force                       bool              // rewrite a signed PDF anyway
	Ranges                      string            // split: "1-3,4-"
	Every                       int               // split: pages per part
	Angle                       int               // rotate, watermark
	Pages                       string            // rotate, watermark: "1-3,5"
	Set                         map[string]string // metadata: title, author, subject, keywords, creator, producer
	UserPassword, OwnerPassword string            // encrypt
	Allow                       []string          // encrypt: print, copy, modify, annotate, fill, assemble
	Text                        string            // watermark
	Opacity                     float64           // watermark
	Stamp                       bool              // watermark: over the content
	FacturX                     bool              // attach: a file named factur-x.xml makes a Factur-X invoice
	Page, DPI                   int               // render
}

func (o PDFOptions) values() url.Values {
	q := url.Values{}
	set := func(k, v string, ok bool) {
		if ok {
			q.Set(k, v)
		}
	}
	set("force", "true", o.Force)
	set("ranges", o.Ranges, o.Ranges != "")
	set("every", strconv.Itoa(o.Every), o.Every != 0)
	set("angle", strconv.Itoa(o.Angle), o.Angle != 0)
	set("pages", o.Pages, o.Pages != "")
	for k, v := range o.Set {
		q.Set("set."+k, v)
	}
	set("userPassword", o.UserPassword, o.UserPassword != "")
	set("ownerPassword", o.OwnerPassword, o.OwnerPassword != "")
	set("allow", strings.Join(o.Allow, ","), len(o.Allow) > 0)
	set("text", o.Text, o.Text != "")
	set("opacity", strconv.FormatFloat(o.Opacity, 'g', -1, 64), o.Opacity != 0)
	set("stamp", "true", o.Stamp)
	set("facturx", "true", o.FacturX)
	set("page", strconv.Itoa(o.Page), o.Page != 0)
	set("dpi", strconv.Itoa(o.DPI), o.DPI != 0)
	return q
}

// PDFResult is the answer of a PDF operation: a PDF, a ZIP (split), a PNG
// (render) or JSON (metadata without Set), as ContentType says.
type PDFResult struct {
	ContentType string
	Body        []byte
}

// PDF runs a PDF operation (POST /v1/pdf/{operation}: merge, split,
// rotate, flatten, metadata, encrypt, watermark, attach, render) on the
// files, the PDF first. The files are streamed as they are read; the
// answer is read within the limit of WithMaxResponseBytes. It needs an
// API key.
func (c *Client) PDF(ctx context.Context, operation string, opts PDFOptions, files ...PDFFile) (*PDFResult, error) {
	r := request{method: "POST", path: "/v1/pdf/" + url.PathEscape(operation), auth: true, query: opts.values()}
	parts := make([]filePart, len(files))
	for i, f := range files {
		name := baseName(f.Name)
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		parts[i] = filePart{f.Content, name, ct}
	}
	res, err := c.postFiles(ctx, r, parts...)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := c.readAll(r, res)
	if err != nil {
		return nil, err
	}
	return &PDFResult{ContentType: res.Header.Get("Content-Type"), Body: b}, nil
}
