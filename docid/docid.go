// Package docid identifies DOCX files the way the 1.x editor library does
// for usage telemetry, so that ids computed here and ids reported by 1.x
// editors in browsers agree.
//
// The 2.x library no longer computes these ids: it reports the
// integrator's document.id when one is set, else a random UUID per editor
// session (each open of a file is then a new document), else nothing. This
// package remains what 1.x clients send, and a way to identify a file on
// the server: an integrator of 2.x who passes Identify's id as document.id
// gets every open of the file counted as one document, as 1.x did.
//
// A document that carries both a GUID and a creation time in its metadata is
// identified by
//
//	"HASH-" + uppercase 8-hex-digit CRC-32 (IEEE) of the UTF-8 string GUID + "|" + created
//
// The GUID is the w15:val attribute of w15:docId in word/settings.xml with
// the braces removed (case kept) or, failing that, the DocumentGuid custom
// property in docProps/custom.xml. The creation time is the text of
// dcterms:created in docProps/core.xml, verbatim. This id is stable across
// content edits.
//
// A document lacking either value is identified, for this open only, by
// "HASH-" + the CRC-32 of its raw bytes. The missing GUID (a lowercase
// version 4 UUID without braces) and/or creation time (UTC, seconds zeroed)
// are generated; [Stamp] writes them into the package, after which the file
// is identified by its metadata hash, as the editor does on export.
//
// Parts are located at their conventional paths and elements are matched by
// namespace, not prefix. Input is treated as hostile: the parts read are
// decompressed up to [MaxPartSize] bytes each and packages with more than
// [MaxEntries] entries are refused, so memory stays proportional to the input.
package docid

import (
	"errors"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/google/uuid"
)

// Limits applied to every package read by this package.
const (
	// MaxPartSize caps the decompressed size of each metadata part read.
	MaxPartSize = 8 << 20
	// MaxEntries caps the number of entries in a package.
	MaxEntries = 10000
)

var (
	// ErrNotDOCX reports input that is not a ZIP package holding word/document.xml.
	ErrNotDOCX = errors.New("docid: not a DOCX file")
	// ErrTooLarge reports a package exceeding MaxEntries or MaxPartSize.
	ErrTooLarge = errors.New("docid: package exceeds limits")
)

// Identity is the telemetry identity of one document.
type Identity struct {
	ID      string // "HASH-XXXXXXXX"
	GUID    string // found in the package or generated
	Created string // found in the package (verbatim) or generated
	// Generated is true when the package lacked the GUID, the creation time
	// or both: ID is then the content hash and the missing values were
	// generated. Stamp the package to make the identity permanent.
	Generated bool
}

// Identify computes the identity of a DOCX package. Generated values use the
// current time and crypto/rand. The error is ErrNotDOCX or ErrTooLarge
// (wrapped); unreadable or malformed metadata only leads to the content-hash
// fallback.
func Identify(docx []byte) (Identity, error) {
	pkg, err := openPackage(docx)
	if err != nil {
		return Identity{}, err
	}
	meta, err := pkg.metadata()
	if err != nil {
		return Identity{}, err
	}
	guid := meta.guid()
	if guid != "" && meta.created != "" {
		return Identity{ID: FromMetadata(guid, meta.created), GUID: guid, Created: meta.created}, nil
	}
	id := Identity{ID: FromContent(docx), GUID: guid, Created: meta.created, Generated: true}
	if id.GUID == "" {
		id.GUID = uuid.NewString()
	}
	if id.Created == "" {
		id.Created = time.Now().UTC().Format("2006-01-02T15:04") + ":00Z"
	}
	return id, nil
}

// FromMetadata returns the id of a document with the given GUID and creation time.
func FromMetadata(guid, created string) string {
	return hashID([]byte(guid + "|" + created))
}

// FromContent returns the id of a document identified by its raw bytes.
func FromContent(b []byte) string {
	return hashID(b)
}

func hashID(b []byte) string {
	return fmt.Sprintf("HASH-%08X", crc32.ChecksumIEEE(b))
}
