package pdfsign

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"
)

// ErrNoCRL: the identity's CA is not quire's own (it came from operator
// files, or was generated before quire kept the CA key), so quire cannot
// issue its CRL.
var ErrNoCRL = errors.New("pdfsign: this signing identity has no CA of quire's own to issue CRLs")

// crlValidity is how long a CRL of quire's CA stays current (its
// nextUpdate). A CRL is issued at every request, so a relying party that
// refetches it before then always gets a fresh one.
const crlValidity = 7 * 24 * time.Hour

// authority is the CA of a generated identity, kept to issue its CRLs.
type authority struct {
	cert *x509.Certificate
	key  crypto.Signer

	mu      sync.Mutex
	lastNum *big.Int // CRL numbers must increase (RFC 5280, 5.2.3)
}

// CAID names the identity's own CA in the URLs of its CRL and certificate
// (several instances may each have one); empty when it has none.
func (id *Identity) CAID() string {
	if id.ca == nil {
		return ""
	}
	return caID(id.ca.cert)
}

func caID(ca *x509.Certificate) string {
	h := sha256.Sum256(ca.Raw)
	return hex.EncodeToString(h[:8])
}

// CACertificate is the DER certificate of the identity's own CA, the
// target of the signing certificate's caIssuers link.
func (id *Identity) CACertificate() ([]byte, error) {
	if id.ca == nil {
		return nil, ErrNoCRL
	}
	return id.ca.cert.Raw, nil
}

// CRL returns a DER CRL of the identity's own CA issued at now, valid for
// a week. It revokes nothing: the CA issues one certificate, and retiring
// it means generating a new identity.
func (id *Identity) CRL(now time.Time) ([]byte, error) {
	if id.ca == nil {
		return nil, ErrNoCRL
	}
	return id.ca.issueCRL(now)
}

func (a *authority) issueCRL(now time.Time) ([]byte, error) {
	a.mu.Lock()
	num := big.NewInt(now.UnixNano())
	if a.lastNum != nil && num.Cmp(a.lastNum) <= 0 {
		num.Add(a.lastNum, big.NewInt(1))
	}
	a.lastNum = num
	a.mu.Unlock()
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number: num, ThisUpdate: now.UTC(), NextUpdate: now.Add(crlValidity).UTC(),
	}, a.cert, a.key)
	if err != nil {
		return nil, fmt.Errorf("pdfsign: issuing the CRL: %w", err)
	}
	return der, nil
}

// caURLs are the addresses under publicURL where quire serves the CRL and
// the certificate of the CA ca (see internal/httpapi); empty without a
// public URL, since a certificate can only name an absolute address.
func caURLs(publicURL string, ca *x509.Certificate) (crl, cert string) {
	if publicURL == "" {
		return "", ""
	}
	base := strings.TrimRight(publicURL, "/") + "/v1/ca/" + caID(ca)
	return base + "/crl", base + "/certificate"
}
