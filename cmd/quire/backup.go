package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/backup"
	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/store"
)

const (
	backupUsage  = "usage: quire backup FILE.tar.gz   (FILE must not exist)"
	restoreUsage = "usage: quire restore FILE.tar.gz   (into QUIRE_DATA_DIR, which must not exist or be empty)"
)

// runBackup writes a consistent archive of the data directory while the
// service may be running: a copy of the SQLite database, the server
// secret and the generated signing identity.
func runBackup(args []string, stdout, stderr io.Writer) int {
	cfg, file, code := parseFileCommand("backup", backupUsage, args, stderr)
	if cfg == nil {
		return code
	}
	return withApp(cfg, stderr, "quire backup", backupUsage, app.OpenRecords, func(ctx context.Context, a *app.App) error {
		m, err := writeBackup(ctx, a, file)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "backup %s written: %d files, database %s at schema version %d\n", file, len(m.Files), m.Database, m.SchemaVersion)
		if m.Database != "sqlite" {
			fmt.Fprintln(stdout, "the PostgreSQL database is not in the archive: back it up with pg_dump (docs/operations.md)")
		}
		return nil
	})
}

func writeBackup(ctx context.Context, a *app.App, file string) (backup.Manifest, error) {
	m := backup.Manifest{QuireVersion: version, Database: a.DB.Backend(), Created: time.Now().UTC()}
	if _, err := os.Lstat(file); err == nil {
		return m, fmt.Errorf("%s exists: choose a new file name", file)
	}
	var err error
	if m.SchemaVersion, err = a.DB.SchemaVersion(ctx); err != nil {
		return m, err
	}
	stage, err := os.MkdirTemp(filepath.Dir(file), ".quire-backup-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(stage)
	var files []backup.File
	if m.Database == "sqlite" {
		snapshot := filepath.Join(stage, "quire.db")
		if err := a.DB.Snapshot(ctx, snapshot); err != nil {
			return m, err
		}
		events := store.EventLogPath(snapshot)
		files = append(files, backup.File{Name: "quire.db", Path: snapshot},
			backup.File{Name: filepath.Base(events), Path: events})
	}
	parts, err := dataFiles(a.Config)
	if err != nil {
		return m, err
	}
	files = append(files, parts...)
	// Written beside FILE, then linked: FILE appears complete or not at all.
	tmp, err := os.CreateTemp(filepath.Dir(file), ".quire-backup-*.tar.gz")
	if err != nil {
		return m, err
	}
	defer os.Remove(tmp.Name())
	err = backup.Write(tmp, m, files)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return m, err
	}
	m.Files = make([]string, len(files))
	for i, f := range files {
		m.Files[i] = f.Name
	}
	return m, keepAs(tmp.Name(), file)
}

// keepAs gives the finished archive its name, never replacing a file.
func keepAs(tmp, file string) error {
	if err := os.Link(tmp, file); errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists: choose a new file name", file)
	} else if err != nil {
		return err
	}
	return nil
}

// dataFiles are the secrets (the server's, the webhooks') and the
// generated signing identity of the data directory, unless the
// configuration keeps them elsewhere.
func dataFiles(cfg *config.Config) ([]backup.File, error) {
	var files []backup.File
	for _, s := range []struct{ name, setting string }{{"secret", cfg.Secret}, {"webhook-secret", cfg.WebhookSecret}} {
		if s.setting == "" {
			files = append(files, backup.File{Name: s.name, Path: filepath.Join(cfg.DataDir, s.name)})
		}
	}
	if cfg.SigningP12 != "" || cfg.SigningCert != "" {
		return files, nil
	}
	dir := filepath.Join(cfg.DataDir, "signing")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(cfg.DataDir, path)
		files = append(files, backup.File{Name: filepath.ToSlash(rel), Path: path})
		return err
	})
	return files, err
}

// runRestore puts an archive of runBackup into QUIRE_DATA_DIR, which must
// not exist or be empty, and checks that the database opens.
func runRestore(args []string, stdout, stderr io.Writer) int {
	cfg, file, code := parseFileCommand("restore", restoreUsage, args, stderr)
	if cfg == nil {
		return code
	}
	m, err := restore(context.Background(), cfg, file)
	if err != nil {
		fmt.Fprintln(stderr, "quire restore:", err)
		return 1
	}
	dir, _ := filepath.Abs(cfg.DataDir)
	fmt.Fprintf(stdout, "restored %s into %s: backup of %s by quire %s, database %s at schema version %d\n",
		file, dir, m.Created.Format(time.RFC3339), m.QuireVersion, m.Database, m.SchemaVersion)
	if m.Database != "sqlite" {
		fmt.Fprintln(stdout, "the PostgreSQL database is not in the archive: restore it from its pg_dump (docs/operations.md)")
	}
	return 0
}

func restore(ctx context.Context, cfg *config.Config, file string) (backup.Manifest, error) {
	var m backup.Manifest
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return m, err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return m, fmt.Errorf("%s is not empty: restore into a new data directory", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return m, err
	}
	f, err := os.Open(file)
	if err != nil {
		return m, err
	}
	defer f.Close()
	// Extracted beside the data directory, then renamed into place: a
	// failed restore leaves nothing half-written where serve would look.
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return m, err
	}
	stage, err := os.MkdirTemp(filepath.Dir(dir), ".quire-restore-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(stage)
	if m, err = backup.Extract(f, stage); err != nil {
		return m, err
	}
	switch {
	case m.Database == "sqlite" && cfg.DatabaseURL != "":
		return m, errors.New("the archive holds a SQLite database, but QUIRE_DATABASE_URL names another database: unset it")
	case m.Database == "sqlite":
		db, err := store.Open(ctx, "", stage) // checks the copy and the schema version
		if err != nil {
			return m, err
		}
		if err := db.Close(); err != nil {
			return m, err
		}
	}
	if err := os.Chmod(stage, 0o700); err != nil {
		return m, err
	}
	return m, os.Rename(stage, dir) // rename(2) replaces an empty directory
}

// parseFileCommand parses the flags and the one FILE argument of backup
// and restore; a nil Config means exit with code.
func parseFileCommand(name, usage string, args []string, stderr io.Writer) (*config.Config, string, int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, pos, err := parseArgs(fs, usage, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, "", 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "quire %s: %v\n", name, err)
		return nil, "", 2
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, usage)
		return nil, "", 2
	}
	return cfg, pos[0], 0
}
