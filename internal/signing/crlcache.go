package signing

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"sync"
	"time"
)

// crlCache keeps the CRLs downloaded for long-term validation data, so
// that signatures do not each download the same CRL (a public CA's may
// be megabytes): a CRL is reused for at most crlReuse, and never past its
// nextUpdate.
type crlCache struct {
	get func(ctx context.Context, url string) ([]byte, error)
	now func() time.Time
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]cachedCRL
}

type cachedCRL struct {
	der     []byte
	expires time.Time
}

// crlReuse bounds how old a CRL put into a document may be, and
// maxCachedCRLs how many distribution points are remembered.
const (
	crlReuse      = time.Hour
	maxCachedCRLs = 64
)

// Get returns the CRL at url, downloading it unless a fresh one is cached.
func (c *crlCache) Get(ctx context.Context, url string) ([]byte, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[url]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.der, nil
	}
	der, err := c.get(ctx, url)
	if err != nil {
		// The signature is made without this CRL; the operator should know.
		c.log.Warn("CRL download failed; the signature's validation data lacks it", "url", url, "err", err)
		return nil, err
	}
	expires := now.Add(crlReuse)
	raw := der
	if b, _ := pem.Decode(der); b != nil {
		raw = b.Bytes
	}
	if crl, err := x509.ParseRevocationList(raw); err == nil && !crl.NextUpdate.IsZero() && crl.NextUpdate.Before(expires) {
		expires = crl.NextUpdate
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedCRLs {
		c.entries = map[string]cachedCRL{}
	}
	c.entries[url] = cachedCRL{der: der, expires: expires}
	return der, nil
}
