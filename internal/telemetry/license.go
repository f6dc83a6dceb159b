package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/auth"
)

// CreateLicense issues a commercial license key for an organization whose
// contact is email. License keys are not secrets (they sit in browser
// code); they only need to be unique and hard to guess by accident.
func (s *Service) CreateLicense(ctx context.Context, organization, email string) (quire.License, error) {
	organization = strings.TrimSpace(organization)
	if organization == "" || len(organization) > 200 {
		return quire.License{}, quire.Invalid("The organization is required.", quire.Detail{Field: "org", Issue: "must be 1 to 200 characters"})
	}
	email, err := auth.NormalizeEmail(email)
	if err != nil {
		return quire.License{}, err
	}
	l := quire.License{ID: "lic_" + randomHex(8), Key: "ql_" + randomHex(16), Organization: organization,
		Email: email, CreatedAt: s.opt.Now()}
	if err := s.store.CreateLicense(ctx, l); err != nil {
		return quire.License{}, fmt.Errorf("create license: %w", err)
	}
	return l, nil
}

// Licenses lists every license.
func (s *Service) Licenses(ctx context.Context) ([]quire.License, error) {
	return s.store.Licenses(ctx)
}

// RevokeLicense revokes license id. Events under a revoked key are still
// counted (usage is usage); the report still names its organization.
func (s *Service) RevokeLicense(ctx context.Context, id string) error {
	return s.store.RevokeLicense(ctx, id, s.opt.Now())
}

// KeysOf returns the keys of the active licenses whose contact is email:
// what the holder of an API key issued to that address may read.
func (s *Service) KeysOf(ctx context.Context, email string) ([]string, error) {
	all, err := s.store.Licenses(ctx)
	if err != nil {
		return nil, err
	}
	keys := []string{}
	for _, l := range all {
		if l.RevokedAt.IsZero() && strings.EqualFold(l.Email, email) {
			keys = append(keys, l.Key)
		}
	}
	return keys, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
