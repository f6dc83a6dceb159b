package signing

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"sync"

	"github.com/quire-dev/quire/internal/pdfsign"
)

// learning is the service's time-stamp authority: it passes each token on
// and records the certificate at the top of its chain (pdfsign.
// TimestampAnchor) as a TSA root, once per certificate and process, in
// the database that every instance reads, so that /v1/verify relies on
// the time-stamps of the authorities of QUIRE_TSA_URL and on no other
// unless QUIRE_TRUST_TSA names it.
type learning struct {
	pdfsign.Timestamper
	s    *Service
	mu   sync.Mutex
	seen map[[32]byte]bool
}

// Timestamp implements pdfsign.Timestamper. A token whose anchor cannot
// be recorded is still returned: the signature does not depend on it,
// and the next token tries again.
func (l *learning) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	tok, err := l.Timestamper.Timestamp(ctx, digest)
	if err != nil {
		return nil, err
	}
	anchor, err := pdfsign.TimestampAnchor(tok)
	if err != nil {
		l.s.opt.Logger.Warn("time-stamp token: no anchor learned", "err", err)
		return tok, nil
	}
	sum := sha256.Sum256(anchor.Raw)
	l.mu.Lock()
	known := l.seen[sum]
	l.mu.Unlock()
	if known {
		return tok, nil
	}
	if err := l.s.rec.AddTSARoot(ctx, anchor.Raw, l.s.opt.Now()); err != nil {
		l.s.opt.Logger.Warn("time-stamp authority root not recorded", "subject", anchor.Subject.String(), "err", err)
		return tok, nil
	}
	l.mu.Lock()
	l.seen[sum] = true
	l.mu.Unlock()
	return tok, nil
}

// States passes on the health of a list of authorities.
func (l *learning) States() []pdfsign.TSAState {
	if list, ok := l.Timestamper.(*pdfsign.TSAList); ok {
		return list.States()
	}
	return nil
}

// roots are the certificates a signature must chain to: this instance's
// root, those of the other instances sharing the database, and the
// operator's QUIRE_TRUST_ROOTS. A service without a signing key (one
// that only verifies) finds its instance's root among the recorded ones.
func (s *Service) roots(ctx context.Context) (*x509.CertPool, error) {
	own := x509.NewCertPool()
	if s.id != nil {
		own = s.id.Roots()
	}
	return s.pool(ctx, own, s.rec.SigningRoots, s.opt.TrustRoots, "signing root")
}

// tsaRoots are the roots a time-stamp authority must chain to for its
// time to count: the anchors learned from the configured authorities'
// tokens and the operator's QUIRE_TRUST_TSA.
func (s *Service) tsaRoots(ctx context.Context) (*x509.CertPool, error) {
	return s.pool(ctx, x509.NewCertPool(), s.rec.TSARoots, s.opt.TrustTSA, "time-stamp authority root")
}

// pool adds to pool the certificates recorded in the database (skipping,
// and logging, any that does not parse) and the configured ones.
func (s *Service) pool(ctx context.Context, pool *x509.CertPool, recorded func(context.Context) ([][]byte, error),
	configured []*x509.Certificate, what string) (*x509.CertPool, error) {
	ders, err := recorded(ctx)
	if err != nil {
		return nil, fmt.Errorf("%ss: %w", what, err)
	}
	for _, der := range ders {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			s.opt.Logger.Warn("a recorded "+what+" does not parse; skipped", "err", err)
			continue
		}
		pool.AddCert(c)
	}
	for _, c := range configured {
		pool.AddCert(c)
	}
	return pool, nil
}
