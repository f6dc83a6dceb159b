package store_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// TestLicenses: licenses are listed oldest first with their hosts; only
// those with hosts have a host list; hosts are replaced and cleared; a
// revocation keeps its first time; an unknown license is ErrNotFound.
func TestLicenses(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		for _, l := range []quire.License{
			{ID: "lic_2", Key: "k2", Organization: "Two", Email: "two@example.com", CreatedAt: now.Add(time.Hour)},
			{ID: "lic_1", Key: "k1", Organization: "One", Email: "one@example.com", Hosts: []string{"a.example", "b.example"}, CreatedAt: now},
		} {
			if err := db.CreateLicense(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		got, err := db.Licenses(ctx)
		if err != nil || len(got) != 2 {
			t.Fatalf("Licenses = %+v, %v; want two", got, err)
		}
		if l := got[0]; l.ID != "lic_1" || l.Key != "k1" || l.Organization != "One" || l.Email != "one@example.com" ||
			!slices.Equal(l.Hosts, []string{"a.example", "b.example"}) || !l.CreatedAt.Equal(now) || !l.RevokedAt.IsZero() {
			t.Errorf("first license: %+v, want lic_1 with its two hosts, created at %v, active", l, now)
		}
		if l := got[1]; l.ID != "lic_2" || l.Hosts != nil {
			t.Errorf("second license: %+v, want lic_2 without hosts", l)
		}
		assertHosts(t, db, map[string][]string{"k1": {"a.example", "b.example"}})

		if err := db.SetLicenseHosts(ctx, "k2", []string{"c.example"}); err != nil {
			t.Fatal(err)
		}
		if err := db.SetLicenseHosts(ctx, "k1", nil); err != nil {
			t.Fatal(err)
		}
		assertHosts(t, db, map[string][]string{"k2": {"c.example"}})
		if err := db.SetLicenseHosts(ctx, "k404", []string{"x.example"}); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("hosts of an unknown license: %v, want ErrNotFound", err)
		}

		for _, at := range []time.Time{now.Add(2 * time.Hour), now.Add(3 * time.Hour)} {
			if err := db.RevokeLicense(ctx, "lic_1", at); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.RevokeLicense(ctx, "lic_404", now); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("revoke of an unknown license: %v, want ErrNotFound", err)
		}
		got, _ = db.Licenses(ctx)
		if !got[0].RevokedAt.Equal(now.Add(2*time.Hour)) || !got[1].RevokedAt.IsZero() {
			t.Errorf("revoked at %v and %v, want %v (the first revocation) and never", got[0].RevokedAt, got[1].RevokedAt, now.Add(2*time.Hour))
		}
	})
}

func assertHosts(t *testing.T, db *store.DB, want map[string][]string) {
	t.Helper()
	got, err := db.LicenseHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("LicenseHosts = %v, want %v", got, want)
	}
	for key, hosts := range want {
		if !slices.Equal(got[key], hosts) {
			t.Errorf("LicenseHosts = %v, want %v", got, want)
		}
	}
}

// TestKeyByID finds a key by its id, revoked or not.
func TestKeyByID(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		now := time.UnixMilli(1_700_000_000_000).UTC()
		if err := db.CreateKey(ctx, quire.APIKey{ID: "key_1", Email: "a@example.com", Prefix: "sd_abc", Hash: "h1", CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		if err := db.RevokeKey(ctx, "key_1", now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		k, err := db.KeyByID(ctx, "key_1")
		if err != nil || k.Email != "a@example.com" || k.Hash != "h1" || !k.RevokedAt.Equal(now.Add(time.Hour)) {
			t.Errorf("KeyByID = %+v, %v; want key_1, revoked at %v", k, err, now.Add(time.Hour))
		}
		if _, err := db.KeyByID(ctx, "key_404"); !errors.Is(err, quire.ErrNotFound) {
			t.Errorf("unknown id: %v, want ErrNotFound", err)
		}
	})
}
