package telemetry

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/auth"
)

// CreateLicense issues a commercial license key for an organization whose
// contact is email, with the customer's own hosts (ParseHosts; "": any
// host). License keys are not secrets (they sit in browser code); they
// only need to be unique and hard to guess by accident.
func (s *Service) CreateLicense(ctx context.Context, organization, email, hosts string) (quire.License, error) {
	organization = strings.TrimSpace(organization)
	if organization == "" || len(organization) > 200 {
		return quire.License{}, quire.Invalid("The organization is required.", quire.Detail{Field: "org", Issue: "must be 1 to 200 characters"})
	}
	email, err := auth.NormalizeEmail(email)
	if err != nil {
		return quire.License{}, err
	}
	list, err := ParseHosts(hosts)
	if err != nil {
		return quire.License{}, err
	}
	l := quire.License{ID: "lic_" + randomHex(8), Key: "ql_" + randomHex(16), Organization: organization,
		Email: email, Hosts: list, CreatedAt: s.opt.Now()}
	if err := s.store.CreateLicense(ctx, l); err != nil {
		return quire.License{}, fmt.Errorf("create license: %w", err)
	}
	s.loadHosts()
	return l, nil
}

// SetLicenseHosts replaces the host list of the license with key (hosts
// as ParseHosts reads them; "" clears the list). Opens received from then
// on are classified by the new list: at once on this instance, within
// Options.HostsRefresh on the others.
func (s *Service) SetLicenseHosts(ctx context.Context, key, hosts string) error {
	list, err := ParseHosts(hosts)
	if err != nil {
		return err
	}
	if err := s.store.SetLicenseHosts(ctx, strings.TrimSpace(key), list); err != nil {
		return err
	}
	s.loadHosts()
	return nil
}

// maxHosts bounds the hosts of one license: each open is compared with
// them.
const maxHosts = 100

// ParseHosts reads a list of host names separated by commas or white
// space (a.example, www.a.example), as an operator writes it, into the
// stored form: lower case, sorted, each once. Host names are matched
// exactly: list every subdomain that serves the editor.
func ParseHosts(list string) ([]string, error) {
	var hosts []string
	for _, h := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		h = normalHost(h)
		if !validHost(h) {
			return nil, quire.Invalid("The host list is not valid.", quire.Detail{Field: "hosts",
				Issue: fmt.Sprintf("%q is not a host name (letters, digits, '.', '-', '_', ':'; at most %d characters)", h, maxHostname)})
		}
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	if len(hosts) > maxHosts {
		return nil, quire.Invalid("The host list is too long.", quire.Detail{Field: "hosts", Issue: fmt.Sprintf("at most %d hosts", maxHosts)})
	}
	return hosts, nil
}

func validHost(h string) bool {
	return h != "" && len(h) <= maxHostname && strings.IndexFunc(h, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune(".-_:", r))
	}) < 0
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
