//go:build !cgo

package lok

import "errors"

// Office is unavailable: this binary was built without cgo.
type Office struct{}

// Error is a failure of LibreOffice to load or save a document.
type Error struct {
	Op, URL, Detail string
	WrongPassword   bool
}

func (e *Error) Error() string { return "LibreOffice could not " + e.Op + " " + e.URL }

// New always fails: the binding needs cgo.
func New(programDir, profileURL string) (*Office, error) {
	return nil, errors.New("this quire binary was built without cgo (CGO_ENABLED=0); the conversion engine needs cgo and the headers of libreofficekit-dev")
}

// Lock does nothing.
func (o *Office) Lock() (unlock func()) { return func() {} }

// Version returns "".
func (o *Office) Version() string { return "" }

// Document is never loaded.
type Document struct{}

// Load always fails.
func (o *Office) Load(inURL, options, password string) (*Document, error) {
	return nil, errors.New("conversion engine unavailable: built without cgo")
}

// SaveAs always fails.
func (d *Document) SaveAs(outURL, format, options string) error {
	return errors.New("conversion engine unavailable: built without cgo")
}

// Close does nothing.
func (d *Document) Close() {}
