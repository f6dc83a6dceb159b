package signing

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"sync"
	"time"
)

// revocationCache keeps the CRLs and OCSP responses downloaded for
// long-term validation data, so that signatures do not each download the
// same CRL (a public CA's may be megabytes): an answer is reused for at
// most revocationReuse, and a CRL never past its nextUpdate.
type revocationCache struct {
	get func(ctx context.Context, url string) ([]byte, error)
	now func() time.Time
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]cachedAnswer
}

type cachedAnswer struct {
	der     []byte
	expires time.Time
}

// revocationReuse bounds how old revocation data put into a document may
// be, and maxCachedAnswers how many URLs are remembered.
const (
	revocationReuse  = time.Hour
	maxCachedAnswers = 64
)

// Get returns the answer at url, downloading it unless a fresh one is
// cached.
func (c *revocationCache) Get(ctx context.Context, url string) ([]byte, error) {
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
		c.log.Warn("revocation data download failed; the signature's validation data lacks it", "url", url, "err", err)
		return nil, err
	}
	expires := now.Add(revocationReuse)
	raw := der
	if b, _ := pem.Decode(der); b != nil {
		raw = b.Bytes
	}
	if crl, err := x509.ParseRevocationList(raw); err == nil && !crl.NextUpdate.IsZero() && crl.NextUpdate.Before(expires) {
		expires = crl.NextUpdate
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedAnswers {
		c.entries = map[string]cachedAnswer{}
	}
	c.entries[url] = cachedAnswer{der: der, expires: expires}
	return der, nil
}
