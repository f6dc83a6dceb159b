package store

import "context"

// EnsureSetting stores value under name unless a value is already there,
// and returns the stored value: the first instance to start decides.
func (db *DB) EnsureSetting(ctx context.Context, name, value string) (string, error) {
	if _, err := db.exec(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, value); err != nil {
		return "", err
	}
	var stored string
	err := db.queryRow(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&stored)
	return stored, err
}
