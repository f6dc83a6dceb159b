package convert

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
)

// withoutStoredDescriptors returns the package in, with the sizes and
// checksum of each entry moved into its local header when a stored
// (uncompressed) entry has them in a data descriptor after its data; in
// itself otherwise. LibreOffice 25.2 takes such an entry (written by
// streaming ZIP writers, Go's among them) for a damaged package, then
// refuses an ODP and waits on a DOCX or an ODS for an answer to its
// repair question until the job's time limit. The data is copied as it
// is, compressed or not; the sizes and checksum are the central
// directory's, which a reader trusts anyway.
func withoutStoredDescriptors(in []byte) ([]byte, error) {
	z, err := zip.NewReader(bytes.NewReader(in), int64(len(in)))
	if err != nil {
		return nil, fmt.Errorf("%w: its ZIP container is damaged: %v", ErrUnprocessable, err)
	}
	if !hasStoredDescriptor(z) {
		return in, nil
	}
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for _, f := range z.File {
		if err := copyWithoutDescriptor(w, f); err != nil {
			return nil, fmt.Errorf("%w: its part %s cannot be read: %v", ErrUnprocessable, f.Name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// descriptorFlag is the general-purpose bit of a ZIP entry followed by a
// data descriptor.
const descriptorFlag = 0x8

func hasStoredDescriptor(z *zip.Reader) bool {
	for _, f := range z.File {
		if f.Method == zip.Store && f.Flags&descriptorFlag != 0 {
			return true
		}
	}
	return false
}

func copyWithoutDescriptor(w *zip.Writer, f *zip.File) error {
	src, err := f.OpenRaw()
	if err != nil {
		return err
	}
	h := f.FileHeader
	h.Flags &^= descriptorFlag // CreateRaw then writes the sizes and checksum in the local header
	dst, err := w.CreateRaw(&h)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return err
}
