package pdf

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"hash"
)

// SHA256 returns a SHA-256 hash that has hashed b. When b begins with the
// bytes the document was opened with, as the output of Save does, those
// are hashed once for all calls: hashing the input, the signed ranges and
// the output of a signing costs about one pass over the input.
func (d *Document) SHA256(b []byte) hash.Hash {
	h := sha256.New()
	if len(b) < len(d.data) || !bytes.Equal(b[:len(d.data)], d.data) { // the same memory compares at once
		h.Write(b)
		return h
	}
	if d.dataHash == nil {
		h.Write(d.data)
		d.dataHash, _ = h.(encoding.BinaryMarshaler).MarshalBinary() // cannot fail for SHA-256
	} else if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(d.dataHash); err != nil {
		panic(err) // a state it marshalled itself
	}
	h.Write(b[len(d.data):])
	return h
}
