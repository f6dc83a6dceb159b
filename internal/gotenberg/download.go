package gotenberg

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/memory"
)

// download is an entry of downloadFrom.
type download struct {
	URL              string            `json:"url"`
	ExtraHTTPHeaders map[string]string `json:"extraHttpHeaders"`
	Embedded         bool              `json:"embedded"`
	Field            string            `json:"field"`
	Filename         string            `json:"filename"` // 9.2: the name the file is taken under
}

// downloads fetches the files downloadFrom lists (a JSON array of
// {"url", "extraHttpHeaders", "filename"}), as if they had been uploaded
// under files, by quire's fetcher (no private network, its size and time
// limits), at most room of them; each is named by its filename, else by
// its server (Content-Disposition), else by its URL's path, and charged
// to the request's memory reservation.
func (a *API) downloads(ctx context.Context, raw string, room int) ([]httpapi.Upload, error) {
	bad := func(issue string, args ...any) error {
		return quire.Invalid("The form is not valid.", quire.Detail{Field: "downloadFrom", Issue: fmt.Sprintf(issue, args...)})
	}
	var list []download
	if err := decodeStrict(raw, &list); err != nil {
		return nil, bad(`is invalid (want a JSON array of url, extraHttpHeaders and filename, such as [{"url":"https://example.com/a.pdf"}]): %v`, err)
	}
	if len(list) > room {
		return nil, bad("lists %d files, more than the %d the request may still take", len(list), room)
	}
	if len(list) > 0 && a.d.Fetch == nil {
		return nil, quire.Errorf(quire.CodeEngineBusy, "Downloading files is disabled on this server.")
	}
	var files []httpapi.Upload
	for i, d := range list {
		if d.Embedded || d.Field != "" {
			return nil, bad("is not supported by quire with 'embedded' or 'field' (entry %d): upload the files to embed or to stamp", i+1)
		}
		header := http.Header{}
		for k, v := range d.ExtraHTTPHeaders {
			header.Set(k, v)
		}
		got, err := a.d.Fetch.Download(ctx, d.URL, header)
		if err != nil {
			return nil, named(fetch.ToAPIError(err, "downloadFrom"), i+1)
		}
		name := path.Base(got.Name)
		if u, err := url.Parse(d.URL); got.Name == "" && err == nil {
			name = path.Base(u.Path)
		}
		if d.Filename != "" {
			name = path.Base(d.Filename)
		}
		if name == "." || name == "/" {
			return nil, bad("entry %d: its server named no file (Content-Disposition) and its URL's path names none", i+1)
		}
		if err := memory.Add(ctx, int64(len(got.Data))); err != nil {
			return nil, err
		}
		files = append(files, httpapi.Upload{Name: name, Data: got.Data})
	}
	return files, nil
}

// named is err, a failed download of entry n, with a message naming the
// field as Gotenberg's do.
func named(err error, n int) error {
	var qe *quire.Error
	if !errors.As(err, &qe) {
		return err
	}
	named := *qe
	named.Message = fmt.Sprintf("Invalid form data: form field 'downloadFrom' (entry %d): %s", n, qe.Message)
	return &named
}
