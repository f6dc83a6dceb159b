package signing

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"sync"
	"time"

	"github.com/quire-dev/quire/internal/pdfsign"
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

// CheckLongTerm tells the operator, at startup, when the configured level
// is B-LT or B-LTA and the time-stamp authority's certificates name no
// revocation data, so that every signature would stop at B-T. It returns
// the certificates at fault (their subjects).
func (s *Service) CheckLongTerm(ctx context.Context) []string {
	if s.opt.Level < pdfsign.LevelLT || s.opt.Timestamper == nil {
		return nil
	}
	missing, err := pdfsign.TSAWithoutRevocation(ctx, s.opt.Timestamper)
	switch {
	case err != nil:
		s.opt.Logger.Warn("startup check: the time-stamp authority did not answer; whether it supports PAdES B-LT is unknown", "err", err)
	case len(missing) > 0:
		s.opt.Logger.Warn("startup check: the time-stamp authority's certificates name no CRL or OCSP responder: signatures will reach "+
			"PAdES B-T, not the configured "+s.opt.Level.String()+" (QUIRE_SIGN_LEVEL); use another authority (QUIRE_TSA_URL)", "certificates", missing)
	default:
		s.opt.Logger.Info("startup check: the time-stamp authority supports PAdES " + s.opt.Level.String())
	}
	return missing
}
