package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// asset is one embedded static file, with its validator and, for text
// files, a gzip copy (the reference's bundle shrinks from 4 MB to 1 MB).
type asset struct {
	body, gzipped []byte
	etag, ctype   string
}

// embeddedAssets are the embedded static files, read and compressed once
// per process, however many servers it builds (the tests build hundreds;
// compressing them takes seconds under the race detector). Never
// changed once read: the servers share them.
var embeddedAssets = sync.OnceValue(func() map[string]asset {
	static, _ := fs.Sub(files, "static")
	return loadAssets(static)
})

// loadAssets reads the static files of root.
func loadAssets(root fs.FS) map[string]asset {
	out := map[string]asset{}
	fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		a := asset{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, ctype: contentType(name)}
		if strings.HasPrefix(a.ctype, "text/") || strings.Contains(a.ctype, "javascript") || strings.Contains(a.ctype, "svg") {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.Write(body)
			zw.Close()
			a.gzipped = buf.Bytes()
		}
		out["/static/"+name] = a
		return nil
	})
	return out
}

func contentType(name string) string {
	switch path.Ext(name) {
	case ".css":
		return "text/css; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "text/plain; charset=utf-8"
}

// serveStatic serves an embedded file; browsers revalidate it with its
// ETag, so a new binary's files are seen at once.
func (p *Pages) serveStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := p.assets[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	body := a.body
	if a.gzipped != nil && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gzipped
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}
