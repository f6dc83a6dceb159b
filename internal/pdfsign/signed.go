package pdfsign

import "github.com/quire-dev/quire/internal/pdf"

// Signed reports whether the document's form holds a signed signature
// field: a change to it that is not an incremental update would break
// that signature.
func Signed(d *pdf.Document) (bool, error) {
	fields, err := signatureFields(d)
	return len(fields) > 0, err
}
