// Package zipout writes the ZIP archives of quire's answers that hold
// several outputs (a conversion's, a PDF split's), named after the
// client's files.
package zipout

import (
	"archive/zip"
	"bytes"
	"fmt"
	"path"
	"strings"
	"unicode"

	"github.com/quire-dev/quire/internal/ooxml"
)

// Names returns the names of a ZIP's entries for the outputs (of
// format ext) of files uploaded under names: each base name without its
// extension and without characters that are unsafe in a file name,
// "document" when nothing is left, then ".ext"; names that repeat
// (ignoring case) get " (2)", " (3)", ... before the extension.
func Names(names []string, ext string) []string {
	out := make([]string, len(names))
	taken := map[string]bool{}
	for i, name := range names {
		base := Base(name)
		entry := base + "." + ext
		for n := 2; taken[strings.ToLower(entry)]; n++ {
			entry = fmt.Sprintf("%s (%d).%s", base, n, ext)
		}
		taken[strings.ToLower(entry)] = true
		out[i] = entry
	}
	return out
}

// Base is the file name of a client's path (either slash) without
// its extension, with control and reserved characters dropped and at
// most 100 characters long.
func Base(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.TrimSuffix(name, path.Ext(name))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || strings.ContainsRune(`/\:*?"<>|`, r) || r == unicode.ReplacementChar {
			return -1
		}
		return r
	}, name)
	if r := []rune(name); len(r) > 100 {
		name = string(r[:100])
	}
	name = strings.Trim(name, " .")
	if name == "" {
		return "document"
	}
	return name
}

// Archive returns a ZIP archive of the files under names, in order. The
// names are made by Base; a name that is not a clean relative path
// all the same is an error rather than a zip-slip entry.
func Archive(names []string, files [][]byte) ([]byte, error) {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for i, name := range names {
		if !ooxml.CleanName(name) {
			return nil, fmt.Errorf("zip entry %q is not a clean relative path", name)
		}
		w, err := z.Create(name)
		if err != nil {
			return nil, err
		}
		w.Write(files[i]) // to memory: cannot fail
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
