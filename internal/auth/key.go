package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash/crc32"
	"strings"
)

// An API key is PREFIX_ + 43 characters of base64url (256 random bits) +
// a 6-character base62 CRC-32 of everything before it. The checksum lets
// a malformed or mistyped key be refused without a database look-up, and
// lets secret scanners recognise quire keys.
const (
	bodyLen     = 43
	checksumLen = 6
	shownLen    = 8 // random characters kept in the stored prefix for operators
)

func newKey(prefix string) string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	s := prefix + "_" + base64.RawURLEncoding.EncodeToString(b)
	return s + checksum(s)
}

// wellFormed reports whether key has the shape and checksum of a quire key,
// whatever its prefix (keys issued under an earlier prefix stay valid).
func wellFormed(key string) bool {
	n := len(key) - bodyLen - checksumLen
	if n < 2 || key[n-1] != '_' || !lowerAlnum(key[:n-1]) {
		return false
	}
	body := key[n : n+bodyLen]
	if _, err := base64.RawURLEncoding.Strict().DecodeString(body); err != nil {
		return false
	}
	return key[n+bodyLen:] == checksum(key[:n+bodyLen])
}

// ValidKeyPrefix reports whether p can prefix API keys: 1 to 16 lowercase
// letters or digits.
func ValidKeyPrefix(p string) bool { return len(p) >= 1 && len(p) <= 16 && lowerAlnum(p) }

func lowerAlnum(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

func checksum(s string) string {
	v := crc32.ChecksumIEEE([]byte(s))
	out := make([]byte, checksumLen)
	for i := checksumLen - 1; i >= 0; i-- {
		out[i] = base62[v%62]
		v /= 62
	}
	return string(out)
}

// hashKey is what is stored of a key: its SHA-256. Keys carry 256 random
// bits, so an unkeyed hash is enough to make a stolen table useless.
func hashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// shownPrefix is the part of a key kept for operators to recognise it.
func shownPrefix(key string) string {
	i := strings.LastIndexByte(key[:len(key)-bodyLen-checksumLen], '_')
	return key[:i+1+shownLen]
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return "key_" + hex.EncodeToString(b)
}
