package pdfsign

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"software.sslmate.com/src/go-pkcs12"
)

// Identity is the service's signing identity: a key usable through
// crypto.Signer (a file today, an HSM or KMS later), its certificate and
// the chain of issuers up to and including the root.
type Identity struct {
	Key         crypto.Signer
	Certificate *x509.Certificate
	Chain       []*x509.Certificate // issuers, nearest first
}

// KeySource says where the identity comes from. With PKCS12File, or with
// CertFile and KeyFile (PEM; CertFile may hold the chain after the
// certificate), those are loaded. Otherwise a CA and a signing certificate
// are generated in DataDir/signing on first use and reused afterwards; the
// CA's private key is used once, to issue the signing certificate, and is
// not stored.
type KeySource struct {
	DataDir        string
	PKCS12File     string
	PKCS12Password string
	CertFile       string
	KeyFile        string
	Organization   string // the O= of generated certificates; empty: quire
}

// oidDocumentSigning is Microsoft's "Document Signing" extended key usage,
// which Adobe Reader and other PDF validators recognise.
var oidDocumentSigning = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 10, 3, 12}

// The directory of a generated identity under DataDir, and its files.
const (
	identityDir = "signing"
	caCertFile  = "ca.pem"
	sigCertFile = "signing.pem"
	sigKeyFile  = "signing-key.pem"
)

// LoadIdentity loads or creates the signing identity described by src.
//
// Generated keys are ECDSA P-256: signing is fast (a signature is one
// scalar multiplication, against RSA-3072's private-key operation that is
// roughly 30 times slower), keys are generated instantly at first start,
// and the signature and certificates are small, so /Contents stays small.
// Adobe Reader (since X), pdfsig/NSS and OpenSSL all verify it. Operators
// who need RSA bring it with a PKCS#12 or PEM file.
func LoadIdentity(src KeySource) (*Identity, error) {
	switch {
	case src.PKCS12File != "":
		return loadPKCS12(src.PKCS12File, src.PKCS12Password)
	case src.CertFile != "" || src.KeyFile != "":
		return loadPEM(src.CertFile, src.KeyFile)
	case src.DataDir == "":
		return nil, errors.New("pdfsign: no key source: set a data directory, a PKCS#12 file or PEM files")
	}
	dir := filepath.Join(src.DataDir, identityDir)
	_, err := os.Stat(filepath.Join(dir, sigCertFile))
	switch {
	case err == nil:
		return loadGenerated(dir)
	case !errors.Is(err, fs.ErrNotExist):
		// Unreadable is not absent: generating would replace an identity
		// that exists, breaking every signature verified against it.
		return nil, fmt.Errorf("pdfsign: signing identity: %w", err)
	}
	return generate(src.DataDir, src.Organization)
}

// loadGenerated loads the identity that generate stored in dir.
func loadGenerated(dir string) (*Identity, error) {
	return loadPEM(filepath.Join(dir, sigCertFile), filepath.Join(dir, sigKeyFile))
}

func loadPKCS12(path, password string) (*Identity, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: PKCS#12: %w", err)
	}
	key, cert, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: PKCS#12 %s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("pdfsign: PKCS#12 %s: key of type %T cannot sign", path, key)
	}
	return newIdentity(signer, cert, cas)
}

func loadPEM(certPath, keyPath string) (*Identity, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: key: %w", err)
	}
	var certs []*x509.Certificate
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("pdfsign: %s: %w", certPath, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("pdfsign: %s holds no certificate", certPath)
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: %s: %w", keyPath, err)
	}
	chain := certs[1:]
	if len(chain) == 0 {
		// A generated identity keeps its CA beside the signing certificate.
		if ca, err := os.ReadFile(filepath.Join(filepath.Dir(certPath), caCertFile)); err == nil {
			if b, _ := pem.Decode(ca); b != nil {
				if c, err := x509.ParseCertificate(b.Bytes); err == nil {
					chain = []*x509.Certificate{c}
				}
			}
		}
	}
	return newIdentity(key, certs[0], chain)
}

func parseKeyPEM(data []byte) (crypto.Signer, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("no PEM key block")
	}
	var key any
	var err error
	switch b.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return nil, err
	}
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key of type %T cannot sign", key)
	}
	return s, nil
}

// newIdentity checks that key belongs to cert before accepting them.
func newIdentity(key crypto.Signer, cert *x509.Certificate, chain []*x509.Certificate) (*Identity, error) {
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return nil, errors.New("pdfsign: the private key does not belong to the certificate")
	}
	if _, err := signatureAlgorithm(key.Public()); err != nil {
		return nil, err
	}
	return &Identity{Key: key, Certificate: cert, Chain: chain}, nil
}

// generate creates a self-signed issuing CA and a document-signing
// certificate issued by it, both naming org as their organisation (quire
// when empty), and stores the CA certificate, the signing
// certificate and its key in dataDir/signing. The files are written to a
// temporary directory beside it, which is then renamed into place, so the
// directory holds a complete identity or does not exist. When another
// process (or goroutine) got there first, the rename fails and its
// identity is loaded instead: all of them end up with the same one.
func generate(dataDir, org string) (*Identity, error) {
	if org == "" {
		org = "quire"
	}
	host, _ := os.Hostname()
	install := make([]byte, 4)
	if _, err := rand.Read(install); err != nil {
		return nil, err
	}
	id := host + "-" + hex.EncodeToString(install)
	now := time.Now().Add(-time.Hour) // tolerate clock skew of verifiers

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "quire signing CA " + id, Organization: []string{org}},
		NotBefore:             now,
		NotAfter:              now.AddDate(20, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	ca, err := createCert(caTmpl, caKey, nil, caKey)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "quire document signing " + id, Organization: []string{org}},
		NotBefore:             now,
		NotAfter:              now.AddDate(5, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageEmailProtection},
		UnknownExtKeyUsage:    []asn1.ObjectIdentifier{oidDocumentSigning},
		BasicConstraintsValid: true,
	}
	cert, err := createCert(tmpl, key, ca, caKey)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("pdfsign: %w", err)
	}
	tmp, err := os.MkdirTemp(dataDir, "."+identityDir+"-*") // mode 0700
	if err != nil {
		return nil, fmt.Errorf("pdfsign: storing identity: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing is left once renamed
	for name, block := range map[string]*pem.Block{
		caCertFile:  {Type: "CERTIFICATE", Bytes: ca.Raw},
		sigKeyFile:  ecKeyBlock(key),
		sigCertFile: {Type: "CERTIFICATE", Bytes: cert.Raw},
	} {
		if err := writeSynced(filepath.Join(tmp, name), pem.EncodeToMemory(block)); err != nil {
			return nil, fmt.Errorf("pdfsign: storing identity: %w", err)
		}
	}
	dir := filepath.Join(dataDir, identityDir)
	if err := os.Rename(tmp, dir); err != nil {
		// Renaming onto a directory that is not empty fails: another
		// instance stored its identity first. Use that one.
		if _, serr := os.Stat(filepath.Join(dir, sigCertFile)); serr == nil {
			return loadGenerated(dir)
		}
		return nil, fmt.Errorf("pdfsign: storing identity (remove %s if it is an incomplete identity): %w", dir, err)
	}
	return &Identity{Key: key, Certificate: cert, Chain: []*x509.Certificate{ca}}, nil
}

// writeSynced writes a new file (mode 0600) and flushes it to disk, so that
// a directory renamed into place after a crash never holds empty files.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func createCert(tmpl *x509.Certificate, key *ecdsa.PrivateKey, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: creating certificate: %w", err)
	}
	return x509.ParseCertificate(der)
}

func ecKeyBlock(k *ecdsa.PrivateKey) *pem.Block {
	der, _ := x509.MarshalECPrivateKey(k) // cannot fail for a P-256 key
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: der}
}

// Root is the last certificate of the chain: the root the service's
// signatures chain to.
func (id *Identity) Root() *x509.Certificate {
	if n := len(id.Chain); n > 0 {
		return id.Chain[n-1]
	}
	return id.Certificate
}

// Roots returns a pool holding Root, for Verify.
func (id *Identity) Roots() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(id.Root())
	return pool
}

// KeyInfo describes the signing certificate, as GET /v1/verify/key shows it:
// the hosted API's fields first, then quire's own.
type KeyInfo struct {
	Version     string `json:"version"`     // "v" and the certificate's start date: changes when the key does
	Algorithm   string `json:"algorithm"`   // what signatures are made with, e.g. "ECDSA-SHA256"
	PublicKey   string `json:"publicKey"`   // PEM, PKIX
	Fingerprint string `json:"fingerprint"` // SHA-256 of the certificate, upper-case hex pairs joined by ':'
	ValidFrom   string `json:"validFrom"`   // date (YYYY-MM-DD, UTC)
	ValidTo     string `json:"validTo"`
	Issuer      string `json:"issuer"` // the issuing organisation's name

	PEM               string    `json:"pem"`
	ChainPEM          string    `json:"chainPem,omitempty"`
	FingerprintSHA256 string    `json:"fingerprintSha256"` // lower-case hex
	Subject           string    `json:"subject"`
	IssuerDN          string    `json:"issuerDn"`
	SerialNumber      string    `json:"serialNumber"`
	NotBefore         time.Time `json:"notBefore"`
	NotAfter          time.Time `json:"notAfter"`
}

// Info returns the public description of the identity.
func (id *Identity) Info() KeyInfo {
	c := id.Certificate
	fp := sha256.Sum256(c.Raw)
	var chain []byte
	for _, ca := range id.Chain {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})...)
	}
	pub, _ := x509.MarshalPKIXPublicKey(c.PublicKey) // parsed from a certificate, so it marshals
	return KeyInfo{
		Version:           "v" + c.NotBefore.UTC().Format("20060102"),
		Algorithm:         algorithmName(c.PublicKey),
		PublicKey:         string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})),
		Fingerprint:       colonHex(fp[:]),
		ValidFrom:         c.NotBefore.UTC().Format(time.DateOnly),
		ValidTo:           c.NotAfter.UTC().Format(time.DateOnly),
		Issuer:            organisation(c.Issuer),
		PEM:               string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})),
		ChainPEM:          string(chain),
		FingerprintSHA256: hex.EncodeToString(fp[:]),
		Subject:           c.Subject.String(),
		IssuerDN:          c.Issuer.String(),
		SerialNumber:      serialString(c.SerialNumber),
		NotBefore:         c.NotBefore.UTC(),
		NotAfter:          c.NotAfter.UTC(),
	}
}

// algorithmName names the signature algorithm of a key in the hosted API's
// words; the digest is always SHA-256 (see signCMS).
func algorithmName(pub crypto.PublicKey) string {
	switch pub.(type) {
	case *ecdsa.PublicKey:
		return "ECDSA-SHA256"
	case *rsa.PublicKey:
		return "RSA-SHA256"
	}
	return fmt.Sprintf("%T", pub)
}

// colonHex writes b as upper-case hex pairs joined by colons, the way
// certificate viewers show fingerprints.
func colonHex(b []byte) string {
	s := strings.ToUpper(hex.EncodeToString(b))
	var out strings.Builder
	for i := 0; i < len(s); i += 2 {
		if i > 0 {
			out.WriteByte(':')
		}
		out.WriteString(s[i : i+2])
	}
	return out.String()
}

// organisation is the organisation of a name, or its common name when it
// has none.
func organisation(n pkix.Name) string {
	if len(n.Organization) > 0 {
		return n.Organization[0]
	}
	return n.CommonName
}
