package safeinput

import (
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/ooxml"
)

// detectAndValidate sets r.From to the format of in when r names none
// (Detect), and validates r: the request's own faults come before the document's, so
// a document whose format cannot be told fails with Detect's error only
// when r is otherwise valid. It returns the ZIP package it opened, if
// any, for the checks to read.
func detectAndValidate(r *engine.Request, in []byte) (*ooxml.Package, error) {
	var z *ooxml.Package
	var err error
	if r.From == "" {
		r.From, z, err = detect(r.Name, in)
	}
	if verr := r.Validate(); verr != nil {
		return nil, verr
	}
	return z, err
}
