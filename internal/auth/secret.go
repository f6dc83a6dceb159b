package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/quire-dev/quire/internal/secretfile"
)

// LoadSecret returns the server secret: the hex value given (from
// QUIRE_SECRET), or the one in dataDir/secret, generated there with mode
// 0600 on first start. It keys the hashes of one-time codes and of
// rate-limit buckets.
func LoadSecret(given, dataDir string) ([]byte, error) {
	if given != "" {
		return decodeSecret(given, "QUIRE_SECRET")
	}
	return secretfile.Load(dataDir, "secret", hex.EncodeToString, decodeSecret)
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
