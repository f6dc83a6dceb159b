package pdfsign

import (
	"errors"
	"fmt"
)

// berToDER re-encodes the first BER element of b in DER's length forms:
// indefinite lengths become definite, long-form lengths minimal, and the
// constructed form of string types (an OCTET STRING sent in pieces) one
// primitive string. SET OF elements keep their order: the bytes a signer
// signed are its own encoding, and checkSignedAttributes tries DER's
// order too. Bytes after the element (the zero padding of /Contents) are
// ignored. cryptobyte, which quire parses CMS with, reads DER only, and
// many signers (Adobe's among them) send BER.
func berToDER(b []byte) ([]byte, error) {
	out, _, err := berElement(b, 0)
	return out, err
}

// maxBERDepth bounds the nesting of a BER element: CMS nests a dozen deep.
const maxBERDepth = 64

var errBER = errors.New("malformed BER")

// berElement converts the element at the start of b and returns it and
// the number of bytes of b it took.
func berElement(b []byte, depth int) ([]byte, int, error) {
	if depth > maxBERDepth {
		return nil, 0, fmt.Errorf("%w: nested deeper than %d", errBER, maxBERDepth)
	}
	tagLen, err := berTagLen(b)
	if err != nil {
		return nil, 0, err
	}
	tag := b[:tagLen]
	constructed := b[0]&0x20 != 0
	length, lenLen, err := berLength(b[tagLen:])
	if err != nil {
		return nil, 0, err
	}
	start := tagLen + lenLen
	if !constructed {
		if length < 0 || length > len(b)-start {
			return nil, 0, fmt.Errorf("%w: primitive element longer than its data", errBER)
		}
		return derTLV(tag, b[start:start+length]), start + length, nil
	}
	var body []byte
	pos := start
	for {
		if length >= 0 && pos == start+length {
			break
		}
		if pos+2 <= len(b) && b[pos] == 0 && b[pos+1] == 0 && length < 0 {
			pos += 2 // end of contents
			break
		}
		if pos >= len(b) || (length >= 0 && pos > start+length) {
			return nil, 0, fmt.Errorf("%w: constructed element runs past its end", errBER)
		}
		child, n, err := berElement(b[pos:], depth+1)
		if err != nil {
			return nil, 0, err
		}
		if length >= 0 && pos+n > start+length {
			return nil, 0, fmt.Errorf("%w: element runs past its parent", errBER)
		}
		if stringTag(b[0]) { // a string in pieces: keep the pieces' contents
			_, cl, _ := berLength(child[1:])
			child = child[1+cl:]
		}
		body = append(body, child...)
		pos += n
	}
	if stringTag(b[0]) {
		return derTLV([]byte{b[0] &^ 0x20}, body), pos, nil
	}
	return derTLV(tag, body), pos, nil
}

// stringTag reports the constructed form of a universal string type.
func stringTag(t byte) bool {
	switch t {
	case 0x23, 0x24, 0x2c, 0x33, 0x34, 0x36, 0x3a, 0x3c, 0x3e: // BIT, OCTET, UTF8, Printable, T61, IA5, Visible, Universal, BMP
		return true
	}
	return false
}

// berTagLen is the length of the identifier octets at the start of b.
func berTagLen(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("%w: missing tag", errBER)
	}
	if b[0]&0x1f != 0x1f {
		return 1, nil
	}
	for i := 1; i < len(b) && i < 6; i++ {
		if b[i]&0x80 == 0 {
			return i + 1, nil
		}
	}
	return 0, fmt.Errorf("%w: tag number too long", errBER)
}

// berLength reads the length octets; -1 is the indefinite form.
func berLength(b []byte) (length, n int, err error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("%w: missing length", errBER)
	}
	if b[0] < 0x80 {
		return int(b[0]), 1, nil
	}
	if b[0] == 0x80 {
		return -1, 1, nil
	}
	k := int(b[0] & 0x7f)
	if k > 4 || len(b) < 1+k {
		return 0, 0, fmt.Errorf("%w: length of %d octets", errBER, k)
	}
	for _, c := range b[1 : 1+k] {
		length = length<<8 | int(c)
	}
	return length, 1 + k, nil
}

// derTLV encodes tag, a minimal definite length and body.
func derTLV(tag, body []byte) []byte {
	out := append([]byte{}, tag...)
	switch n := len(body); {
	case n < 0x80:
		out = append(out, byte(n))
	case n < 1<<8:
		out = append(out, 0x81, byte(n))
	case n < 1<<16:
		out = append(out, 0x82, byte(n>>8), byte(n))
	case n < 1<<24:
		out = append(out, 0x83, byte(n>>16), byte(n>>8), byte(n))
	default:
		out = append(out, 0x84, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(out, body...)
}
