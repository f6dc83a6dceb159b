// Package secretfile keeps a secret that an installation makes once, in
// a file of its data directory: the server secret, the webhooks' key.
package secretfile

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Load returns the secret in dir/name, read by decode (which names the
// file in its errors). When there is no such file it makes one: 32 random
// bytes written as encode says, mode 0600, in dir (created 0700). The
// file appears whole or not at all, so that processes starting at the same
// moment agree on one secret.
func Load(dir, name string, encode func([]byte) string, decode func(text, where string) ([]byte, error)) ([]byte, error) {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if err == nil {
		return decode(string(b), path)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	// Write a temporary file, then hard-link it into place: the link either
	// appears with its full content or fails because another process,
	// starting at the same moment, linked its own first (then use that one).
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(encode(secret) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	if err := os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
		return Load(dir, name, encode, decode)
	} else if err != nil {
		return nil, fmt.Errorf("create %s: %w", name, err)
	}
	return secret, nil
}
