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
	"strings"

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/config"
)

// requireDataDir refuses a data directory that serve or init has not set
// up. A command run from the wrong directory would otherwise create a
// second, empty installation whose keys and certificates the server does
// not know, and nothing would warn.
func requireDataDir(cfg *config.Config) error {
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return err
	}
	fix := "set QUIRE_DATA_DIR (or --data-dir) to the server's data directory, or run `quire init` to set up a new one"
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no data directory at %s: %s", dir, fix)
	}
	for _, name := range dataDirParts(cfg) {
		if _, err := os.Stat(filepath.Join(dir, name)); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is not an initialised data directory (it has no %s): %s", dir, name, fix)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// dataDirParts are the entries serve creates in the data directory under
// cfg: the SQLite database, the server secret and the generated signing
// identity, each unless the configuration puts it elsewhere.
func dataDirParts(cfg *config.Config) []string {
	var parts []string
	if cfg.DatabaseURL == "" {
		parts = append(parts, "quire.db")
	}
	if cfg.Secret == "" {
		parts = append(parts, "secret")
	}
	if cfg.SigningP12 == "" && cfg.SigningCert == "" && cfg.PKCS11Module == "" { // a token's identity is in the token
		parts = append(parts, "signing")
	}
	return parts
}

// runInit sets up the data directory (database, secret, signing identity)
// as serve does at first start, without serving.
func runInit(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("init", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, pos, err := parseArgs(fs, "usage: quire init   (sets up QUIRE_DATA_DIR without serving)", args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire init:", err)
		return 2
	}
	a, err := app.Open(context.Background(), cfg, app.Options{Logger: newLogger(stderr, "warn"), OnDemand: true})
	if err != nil {
		fmt.Fprintln(stderr, "quire init:", err)
		return 1
	}
	a.Close(context.Background()) // nothing was started: nothing to wait for
	dir, _ := filepath.Abs(cfg.DataDir)
	fmt.Fprintf(stdout, "data directory %s ready (%s)\n", dir, strings.Join(dataDirParts(cfg), ", "))
	return 0
}
