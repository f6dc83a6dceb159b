package gotenberg

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/httpapi"
	"github.com/quire-dev/quire/internal/memory"
)

// unpack returns the files of a ZIP uploaded under archives, as if each
// had been uploaded under files (named by its base name; folders and
// macOS's resource forks left out), at most room of them, holding at most
// *left bytes, which it lowers. What they hold is charged to the
// request's memory reservation, and no entry's size is trusted from its
// header.
func unpack(ctx context.Context, archive httpapi.Upload, room int, left *int64, lim limits) ([]httpapi.Upload, error) {
	bad := func(issue string, a ...any) error {
		return quire.Invalid("The archive is not valid.", quire.Detail{Field: "archives", Issue: fmt.Sprintf(issue, a...)})
	}
	z, err := zip.NewReader(bytes.NewReader(archive.Data), int64(len(archive.Data)))
	if err != nil {
		return nil, bad("'%s' is not a ZIP file", archive.Name)
	}
	var files []httpapi.Upload
	for _, e := range z.File {
		if e.FileInfo().IsDir() || strings.HasPrefix(e.Name, "__MACOSX/") {
			continue
		}
		if len(files) == room {
			return nil, bad("at most %d files per request, uploaded and unpacked together", lim.files)
		}
		data, err := entry(e, *left, lim.bytes)
		if err != nil {
			return nil, err
		}
		*left -= int64(len(data))
		if err := memory.Add(ctx, int64(len(data))); err != nil {
			return nil, err
		}
		files = append(files, httpapi.Upload{Name: path.Base(e.Name), Data: data})
	}
	return files, nil
}

// entry reads one entry of an archive, at most left bytes of the limit.
func entry(e *zip.File, left, limit int64) ([]byte, error) {
	r, err := e.Open()
	if err != nil {
		return nil, quire.Invalid("The archive is not valid.", quire.Detail{Field: "archives", Issue: fmt.Sprintf("its entry '%s' cannot be read", e.Name)})
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, left+1))
	switch {
	case err != nil:
		return nil, quire.Invalid("The archive is not valid.", quire.Detail{Field: "archives", Issue: fmt.Sprintf("its entry '%s' is damaged", e.Name)})
	case int64(len(data)) > left:
		return nil, quire.Errorf(quire.CodePayloadTooLarge, "The archives unpack to more than the limit (%d bytes), at their entry '%s'.", limit, e.Name)
	}
	return data, nil
}
