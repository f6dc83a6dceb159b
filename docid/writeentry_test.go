package docid

import "archive/zip"

// writeEntry writes one entry with the given header, for building test packages.
func writeEntry(w *zip.Writer, h *zip.FileHeader, data []byte) error {
	fw, err := w.CreateHeader(h)
	if err != nil {
		return err
	}
	_, err = fw.Write(data)
	return err
}
