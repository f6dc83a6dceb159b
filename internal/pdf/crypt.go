package pdf

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/md5"
	"crypto/rc4"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
)

// decryptor undoes the standard security handler (ISO 32000-2, 7.6.4) of
// a file whose user password is empty, for reading: a signed PDF may be
// encrypted so that it cannot be changed without the owner's password,
// and still open for anyone.
type decryptor struct {
	key       []byte // the file encryption key
	strings   cryptMethod
	streams   cryptMethod
	encrypt   int  // object number of the /Encrypt dictionary; 0 when direct
	clearMeta bool // /EncryptMetadata false: XMP metadata streams are in clear
}

// cryptMethod is how strings or streams are encrypted.
type cryptMethod int

const (
	cryptNone  cryptMethod = iota // the Identity crypt filter
	cryptRC4                      // RC4 with a key per object (V1, V2, V4 /V2)
	cryptAESV2                    // AES-128-CBC with a key per object (V4 /AESV2)
	cryptAESV3                    // AES-256-CBC with the file key (V5 /AESV3)
)

// errPassword: the file opens only with a password, which quire does not have.
var errPassword = errors.New("pdf: document is encrypted with a user password")

// padding is the password padding string of ISO 32000-2, 7.6.4.3.
var padding = []byte{0x28, 0xBF, 0x4E, 0x5E, 0x4E, 0x75, 0x8A, 0x41, 0x64, 0x00, 0x4E, 0x56, 0xFF, 0xFA, 0x01, 0x08,
	0x2E, 0x2E, 0x00, 0xB6, 0xD0, 0x68, 0x3E, 0x80, 0x2F, 0x0C, 0xA9, 0xFE, 0x64, 0x53, 0x69, 0x7A}

// newDecryptor reads the /Encrypt dictionary of d's trailer and derives
// the file key from the empty user password; it fails with errPassword
// when another password is needed and with an unsupported-handler error
// for anything but the standard security handler.
func newDecryptor(d *Document) (*decryptor, error) {
	enc := d.xref.trailer["Encrypt"]
	dc := &decryptor{}
	if r, ok := enc.(Ref); ok {
		dc.encrypt = r.Num
	}
	e, err := d.Dict(enc)
	if err != nil {
		return nil, fmt.Errorf("pdf: /Encrypt: %w", err)
	}
	if e["Filter"] != Name("Standard") {
		return nil, fmt.Errorf("pdf: unsupported security handler /%v", e["Filter"])
	}
	v, r := IntOr(e["V"], 0), IntOr(e["R"], 0)
	o, u := stringBytes(e["O"]), stringBytes(e["U"])
	dc.clearMeta = e["EncryptMetadata"] == Bool(false)
	switch {
	case v == 1 || v == 2:
		dc.strings, dc.streams = cryptRC4, cryptRC4
	case v == 4 || v == 5:
		cf, _ := d.Dict(e["CF"])
		dc.strings, dc.streams = cryptFilter(d, cf, e["StrF"]), cryptFilter(d, cf, e["StmF"])
	default:
		return nil, fmt.Errorf("pdf: unsupported encryption /V %d", v)
	}
	if r >= 5 {
		dc.key, err = aes256Key(r, o, u, stringBytes(e["UE"]))
		return dc, err
	}
	length := 5
	if v >= 2 {
		length = IntOr(e["Length"], 128) / 8
	}
	if length < 5 || length > 16 || len(o) < 32 || len(u) < 16 {
		return nil, errors.New("pdf: /Encrypt /Length, /O or /U out of range")
	}
	id, _ := d.xref.trailer["ID"].(Array)
	var id0 []byte
	if len(id) > 0 {
		id0 = stringBytes(id[0])
	}
	dc.key = rc4FileKey(r, length, o[:32], int32(IntOr(e["P"], 0)), id0, dc.clearMeta)
	if !bytes.Equal(userHash(r, dc.key, id0)[:16], u[:16]) {
		return nil, errPassword
	}
	return dc, nil
}

// cryptFilter maps a /StmF or /StrF name to its method through /CF.
func cryptFilter(d *Document, cf Dict, name Object) cryptMethod {
	n, _ := name.(Name)
	if n == "" || n == "Identity" {
		return cryptNone
	}
	f, _ := d.Dict(cf[n])
	switch f["CFM"] {
	case Name("V2"):
		return cryptRC4
	case Name("AESV2"):
		return cryptAESV2
	case Name("AESV3"):
		return cryptAESV3
	}
	return cryptNone
}

func stringBytes(o Object) []byte {
	switch s := o.(type) {
	case String:
		return s
	case HexString:
		return s
	}
	return nil
}

// rc4FileKey is algorithm 2 of ISO 32000-2 with the empty password.
func rc4FileKey(r, length int, o []byte, p int32, id0 []byte, clearMeta bool) []byte {
	h := md5.New()
	h.Write(padding)
	h.Write(o)
	binary.Write(h, binary.LittleEndian, p)
	h.Write(id0)
	if r >= 4 && clearMeta {
		h.Write([]byte{0xFF, 0xFF, 0xFF, 0xFF})
	}
	key := h.Sum(nil)
	if r >= 3 {
		for range 50 {
			sum := md5.Sum(key[:length])
			key = sum[:]
		}
	}
	return key[:length]
}

// userHash is the /U value the key gives (algorithms 4 and 5).
func userHash(r int, key, id0 []byte) []byte {
	if r == 2 {
		return rc4Apply(key, padding)
	}
	h := md5.New()
	h.Write(padding)
	h.Write(id0)
	out := rc4Apply(key, h.Sum(nil))
	k := make([]byte, len(key))
	for i := byte(1); i <= 19; i++ {
		for j := range key {
			k[j] = key[j] ^ i
		}
		out = rc4Apply(k, out)
	}
	return out
}

func rc4Apply(key, in []byte) []byte {
	c, _ := rc4.NewCipher(key) // the key is 5 to 16 bytes
	out := make([]byte, len(in))
	c.XORKeyStream(out, in)
	return out
}

// aes256Key checks the empty password against /U and unwraps the file key
// from /UE (algorithms 2.A and 2.B; R5 hashes once with SHA-256).
func aes256Key(r int, o, u, ue []byte) ([]byte, error) {
	if len(u) < 48 || len(ue) < 32 {
		return nil, errors.New("pdf: /Encrypt /U or /UE too short")
	}
	if !bytes.Equal(hash2B(r, u[32:40], nil), u[:32]) {
		return nil, errPassword
	}
	block, _ := aes.NewCipher(hash2B(r, u[40:48], nil)) // 32 bytes
	key := make([]byte, 32)
	cipher.NewCBCDecrypter(block, make([]byte, 16)).CryptBlocks(key, ue[:32])
	return key, nil
}

// hash2B is the hash of algorithm 2.B over the empty password and salt
// (R6), or the SHA-256 of the salt (R5).
func hash2B(r int, salt, udata []byte) []byte {
	first := sha256.Sum256(append(append([]byte{}, salt...), udata...))
	k := first[:]
	if r < 6 {
		return k
	}
	for round := 0; ; round++ {
		k1 := bytes.Repeat(append(append([]byte{}, k...), udata...), 64)
		block, _ := aes.NewCipher(k[:16])
		e := make([]byte, len(k1))
		cipher.NewCBCEncrypter(block, k[16:32]).CryptBlocks(e, k1)
		var h hash.Hash
		switch sum := bigMod3(e[:16]); sum {
		case 0:
			h = sha256.New()
		case 1:
			h = sha512.New384()
		default:
			h = sha512.New()
		}
		h.Write(e)
		k = h.Sum(nil)
		if round >= 63 && int(e[len(e)-1]) <= round-32 {
			return k[:32]
		}
	}
}

// bigMod3 is the 16-byte big-endian number b modulo 3.
func bigMod3(b []byte) int {
	s := 0
	for _, c := range b {
		s += int(c)
	}
	return s % 3 // 256 ≡ 1 (mod 3)
}

// object decrypts the strings of o, object num gen, and its stream data.
// The /Contents of a signature dictionary is never encrypted (ISO
// 32000-2, 7.6.2), nor are cross-reference streams and the clear XMP
// metadata of /EncryptMetadata false.
func (dc *decryptor) object(num, gen int, o Object) (Object, error) {
	if num == dc.encrypt {
		return o, nil
	}
	if st, ok := o.(*Stream); ok {
		dict, err := dc.value(num, gen, st.Dict, 0)
		if err != nil {
			return nil, err
		}
		data := st.Data
		if dc.streams != cryptNone && !dc.clearStream(st.Dict) {
			if data, err = dc.apply(dc.streams, num, gen, data); err != nil {
				return nil, fmt.Errorf("stream: %w", err)
			}
		}
		return &Stream{Dict: dict.(Dict), Data: data}, nil
	}
	return dc.value(num, gen, o, 0)
}

func (dc *decryptor) clearStream(d Dict) bool {
	if d["Type"] == Name("XRef") || (d["Type"] == Name("Metadata") && dc.clearMeta) {
		return true
	}
	filters, _ := filterList(d)
	return len(filters) > 0 && filters[0] == "Crypt" // an Identity crypt filter, the only one quire meets
}

func (dc *decryptor) value(num, gen int, o Object, depth int) (Object, error) {
	switch v := o.(type) {
	case String, HexString:
		if dc.strings == cryptNone {
			return v, nil
		}
		b, err := dc.apply(dc.strings, num, gen, stringBytes(v))
		if err != nil {
			return nil, fmt.Errorf("string: %w", err)
		}
		if _, hex := v.(HexString); hex {
			return HexString(b), nil
		}
		return String(b), nil
	case Array:
		out := make(Array, len(v))
		for i, e := range v {
			var err error
			if out[i], err = dc.value(num, gen, e, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	case Dict:
		_, signature := v["ByteRange"]
		out := make(Dict, len(v))
		for k, e := range v {
			if signature && k == "Contents" {
				out[k] = e
				continue
			}
			var err error
			if out[k], err = dc.value(num, gen, e, depth+1); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return o, nil
}

// apply decrypts b with the key of object num gen.
func (dc *decryptor) apply(m cryptMethod, num, gen int, b []byte) ([]byte, error) {
	key := dc.key
	if m != cryptAESV3 {
		h := md5.New()
		h.Write(dc.key)
		h.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), byte(gen), byte(gen >> 8)})
		if m == cryptAESV2 {
			h.Write([]byte("sAlT"))
		}
		key = h.Sum(nil)[:min(len(dc.key)+5, 16)]
	}
	if m == cryptRC4 {
		return rc4Apply(key, b), nil
	}
	if len(b) == 0 {
		return b, nil
	}
	if len(b) < 32 || len(b)%16 != 0 {
		return nil, fmt.Errorf("AES data of %d bytes is not an IV and whole blocks", len(b))
	}
	block, _ := aes.NewCipher(key)
	out := make([]byte, len(b)-16)
	cipher.NewCBCDecrypter(block, b[:16]).CryptBlocks(out, b[16:])
	if n := int(out[len(out)-1]); n >= 1 && n <= 16 && n <= len(out) {
		out = out[:len(out)-n]
	}
	return out, nil
}
