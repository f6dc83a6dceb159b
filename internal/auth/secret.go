package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LoadSecret returns the server secret: the hex value given (from
// QUIRE_SECRET), or the one in dataDir/secret, generated there with mode
// 0600 on first start. It keys the hashes of one-time codes and of
// rate-limit buckets.
func LoadSecret(given, dataDir string) ([]byte, error) {
	if given != "" {
		return decodeSecret(given, "QUIRE_SECRET")
	}
	path := filepath.Join(dataDir, "secret")
	b, err := os.ReadFile(path)
	if err == nil {
		return decodeSecret(string(b), path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read secret: %w", err)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	// Write a temporary file, then hard-link it into place: the link either
	// appears with its full content or fails because another process,
	// starting at the same moment, linked its own first (then use that one).
	tmp, err := os.CreateTemp(dataDir, ".secret-*")
	if err != nil {
		return nil, fmt.Errorf("create secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(hex.EncodeToString(secret) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write secret: %w", err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return LoadSecret("", dataDir)
	} else if err != nil {
		return nil, fmt.Errorf("create secret: %w", err)
	}
	return secret, nil
}

func decodeSecret(text, where string) ([]byte, error) {
	b, err := hex.DecodeString(strings.TrimSpace(text))
	if err != nil || len(b) < 32 {
		return nil, fmt.Errorf("secret in %s: want at least 64 hex digits", where)
	}
	return b, nil
}

// SettingStore keeps installation-wide values; *store.DB is one.
type SettingStore interface {
	EnsureSetting(ctx context.Context, name, value string) (string, error)
}

// CheckSecret makes sure every instance sharing a database uses the same
// secret: the first one records a check value derived from its secret, and
// an instance with another secret refuses to start (codes sent by one would
// never verify on the other).
func CheckSecret(ctx context.Context, st SettingStore, secret []byte) error {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("quire secret check v1"))
	mine := hex.EncodeToString(m.Sum(nil)[:16])
	stored, err := st.EnsureSetting(ctx, "secret_check", mine)
	if err != nil {
		return fmt.Errorf("check secret: %w", err)
	}
	if stored != mine {
		return errors.New("this database was set up with another server secret: give every instance the same QUIRE_SECRET (or copy DATA_DIR/secret)")
	}
	return nil
}
