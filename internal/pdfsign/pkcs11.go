package pdfsign

import (
	"bytes"
	"crypto"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/ThalesGroup/crypto11"
)

// ErrKeyUnavailable: the token holding the signing key failed (unplugged,
// logged out, module error). The next signature reconnects to it.
var ErrKeyUnavailable = errors.New("pdfsign: the signing key's token is unavailable")

// Token names a key pair in a PKCS#11 token.
type Token struct {
	Module string // path of the PKCS#11 module (shared library)
	Label  string // the token's label
	PIN    string // the user PIN
	Key    string // the signing key pair's label
	// Exclusive, when set, runs fn while no other instance sharing the
	// token runs it (store.DB.Exclusive); nil: only this process's own
	// loads are kept apart.
	Exclusive func(fn func() error) error
}

// setupMu keeps apart the loads of identities from tokens in this process.
var setupMu sync.Mutex

func (t *Token) exclusive(fn func() error) error {
	setupMu.Lock()
	defer setupMu.Unlock()
	if t.Exclusive == nil {
		return fn()
	}
	return t.Exclusive(fn)
}

// caLabel is the label of the CA key pair generated beside the key
// labelled key.
func caLabel(key string) string { return key + "-ca" }

// loadToken loads the identity whose key is in src.Token. Its certificate
// is src.CertFile's, or the token's certificate with the key's CKA_ID.
// With neither, a CA key pair and the signing key pair are generated in
// the token, and the CA's certificate and the signing certificate it
// issues are stored there: the keys never leave the token, and every
// instance using it signs with the same key and certificate. Instances
// starting together look for them and make them one at a time
// (Token.Exclusive, and a lock within this process).
func loadToken(src KeySource) (*Identity, error) {
	tok := &token{cfg: crypto11.Config{Path: src.Token.Module, TokenLabel: src.Token.Label, Pin: src.Token.PIN}}
	var id *Identity
	err := src.Token.exclusive(func() (err error) {
		id, err = tok.identity(src)
		return err
	})
	if err != nil {
		tok.Close()
		return nil, fmt.Errorf("pdfsign: PKCS#11 token %q: %w", src.Token.Label, err)
	}
	id.closer = tok
	return id, nil
}

func (t *token) identity(src KeySource) (*Identity, error) {
	c, err := t.context()
	if err != nil {
		return nil, err
	}
	key, err := t.keyPair(c, src.Token.Key, true)
	if err != nil {
		return nil, err
	}
	if src.CertFile != "" {
		certs, err := readCertificates(src.CertFile)
		if err != nil {
			return nil, err
		}
		return newIdentity(key, certs[0], certs[1:])
	}
	stored, err := c.FindCertificate(key.id, nil, nil)
	if err != nil {
		return nil, err
	}
	ca, err := t.authority(c, src, stored == nil)
	if err != nil {
		return nil, err
	}
	if stored != nil && (ca == nil || stored.CheckSignatureFrom(ca.cert) != nil) {
		// A certificate put in the token by its operator: its chain
		// is not in the token (QUIRE_SIGNING_CERT can bring it).
		return newIdentity(key, stored, nil)
	}
	cert, err := t.certificate(c, key, src.Token.Key, func() (*x509.Certificate, error) {
		tmpl := signingTemplate(orgName(src.Organization), installID(key), time.Now().Add(-time.Hour), src.PublicURL, ca.cert)
		return createCert(tmpl, key.Public(), ca.cert, ca.key)
	})
	if err != nil {
		return nil, err
	}
	id, err := newIdentity(key, cert, []*x509.Certificate{ca.cert})
	if err != nil {
		return nil, err
	}
	id.ca = ca
	return id, nil
}

// authority returns the CA of the token: its key pair labelled
// caLabel(key) and its self-signed certificate, both made on first use
// when create is set; otherwise nil when there is none.
func (t *token) authority(c *crypto11.Context, src KeySource, create bool) (*authority, error) {
	key, err := t.keyPair(c, caLabel(src.Token.Key), create)
	if err != nil || key == nil {
		return nil, err
	}
	cert, err := t.certificate(c, key, caLabel(src.Token.Key), func() (*x509.Certificate, error) {
		tmpl := caTemplate(orgName(src.Organization), installID(key), time.Now().Add(-time.Hour))
		return createCert(tmpl, key.Public(), nil, key)
	})
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key}, nil
}

// certificate returns the token's certificate of key, which issue makes
// and stores with label when there is none.
func (t *token) certificate(c *crypto11.Context, key *tokenKey, label string, issue func() (*x509.Certificate, error)) (*x509.Certificate, error) {
	cert, err := c.FindCertificate(key.id, nil, nil)
	if err != nil || cert != nil {
		return cert, err
	}
	if cert, err = issue(); err != nil {
		return nil, err
	}
	if err := c.ImportCertificateWithLabel(key.id, []byte(label), cert); err != nil {
		return nil, fmt.Errorf("storing the certificate: %w", err)
	}
	return cert, nil
}

// keyPair finds the key pair labelled label, generating it (ECDSA P-256,
// see LoadIdentity) when the token has none and create is set (otherwise
// it returns nil). Should the token hold
// several (made by hand, or by instances that did not share a lock),
// the one with the smallest CKA_ID is used: the same for every instance.
func (t *token) keyPair(c *crypto11.Context, label string, create bool) (*tokenKey, error) {
	pairs, err := c.FindKeyPairs(nil, []byte(label))
	switch {
	case err != nil:
		return nil, err
	case len(pairs) == 0 && !create:
		return nil, nil
	case len(pairs) == 0:
		id := make([]byte, 16)
		if _, err := rand.Read(id); err != nil {
			return nil, err
		}
		p, err := c.GenerateECDSAKeyPairWithLabel(id, []byte(label), elliptic.P256())
		if err != nil {
			return nil, fmt.Errorf("generating key pair %q: %w", label, err)
		}
		pairs = append(pairs, p)
	}
	keys := make([]*tokenKey, len(pairs))
	for i, p := range pairs {
		a, err := c.GetAttribute(p, crypto11.CkaId)
		if err != nil {
			return nil, err
		}
		keys[i] = &tokenKey{tok: t, id: a.Value, pub: p.Public(), signer: p, ctx: c}
	}
	return slices.MinFunc(keys, func(a, b *tokenKey) int { return bytes.Compare(a.id, b.id) }), nil
}

// installID names what quire generates in a token in its certificates'
// subjects: the last bytes of the key's CKA_ID (random when quire
// generated the key).
func installID(k *tokenKey) string { return "token-" + hex.EncodeToString(k.id[max(len(k.id)-4, 0):]) }

func orgName(org string) string {
	if org == "" {
		return "quire"
	}
	return org
}

// token is the connection to a PKCS#11 token. After a failure it is
// closed, and the next use opens it anew: a token plugged back in, or a
// module that recovered, serves again without a restart.
type token struct {
	cfg crypto11.Config

	mu  sync.Mutex
	ctx *crypto11.Context // nil: closed
}

func (t *token) context() (*crypto11.Context, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx == nil {
		c, err := crypto11.Configure(&t.cfg)
		if err != nil {
			return nil, err
		}
		t.ctx = c
	}
	return t.ctx, nil
}

// fail closes c after an operation on it failed, unless it was already
// replaced.
func (t *token) fail(c *crypto11.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx == c {
		t.ctx = nil
		c.Close() // an error here says again what the failure said
	}
}

// Close logs out of the token.
func (t *token) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx == nil {
		return nil
	}
	err := t.ctx.Close()
	t.ctx = nil
	return err
}

// tokenKey is a key pair in a token, a crypto.Signer whose private key
// never leaves it. Its errors wrap ErrKeyUnavailable.
type tokenKey struct {
	tok *token
	id  []byte // CKA_ID
	pub crypto.PublicKey

	mu     sync.Mutex
	ctx    *crypto11.Context // the connection signer belongs to
	signer crypto.Signer
}

func (k *tokenKey) Public() crypto.PublicKey { return k.pub }

// Sign signs in the token.
func (k *tokenKey) Sign(r io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	c, s, err := k.current()
	if err == nil {
		var sig []byte
		if sig, err = s.Sign(r, digest, opts); err == nil {
			return sig, nil
		}
		k.tok.fail(c)
	}
	return nil, fmt.Errorf("%w: %w", ErrKeyUnavailable, err)
}

// current returns the key's signer on the token's connection, finding the
// key again (by CKA_ID) after the connection was reopened.
func (k *tokenKey) current() (*crypto11.Context, crypto.Signer, error) {
	c, err := k.tok.context()
	if err != nil {
		return nil, nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ctx == c {
		return c, k.signer, nil
	}
	s, err := c.FindKeyPair(k.id, nil)
	switch {
	case err != nil:
		k.tok.fail(c)
		return nil, nil, err
	case s == nil:
		return nil, nil, errors.New("the key pair is no longer in the token")
	case !publicKeysEqual(s.Public(), k.pub):
		return nil, nil, errors.New("the key pair in the token has changed")
	}
	k.ctx, k.signer = c, s
	return c, s, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	pa, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && pa.Equal(b)
}

// Close releases what holds the key (the session with its token).
func (id *Identity) Close() error {
	if id.closer == nil {
		return nil
	}
	return id.closer.Close()
}
