package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/app"
)

const keysUsage = "usage: quire keys list [--json] | revoke ID | create --email ADDRESS | limit ID [--concurrent N] [--rate N/DUR] [--quota N/month] [--clear]"

// runKeys implements quire keys list | revoke | create | limit.
func runKeys(args []string, stdout, stderr io.Writer) int {
	sub, args, fs, code, done := subcommand("keys", keysUsage, args, stdout, stderr)
	if done {
		return code
	}
	email, asJSON := "", false
	var lf limitFlags
	switch sub {
	case "create":
		fs.StringVar(&email, "email", "", "e-mail address the key is issued to (required)")
	case "list":
		fs.BoolVar(&asJSON, "json", false, "print the keys as JSON, with their limits and this month's use")
	case "limit":
		lf.define(fs)
	}
	cfg, pos, err := parseArgs(fs, keysUsage, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire keys:", err)
		return 2
	}
	return withApp(cfg, stderr, "quire keys", keysUsage, app.OpenRecords, func(ctx context.Context, a *app.App) error {
		switch {
		case sub == "list" && len(pos) == 0 && asJSON:
			return listKeysJSON(ctx, a, stdout)
		case sub == "list" && len(pos) == 0:
			return listKeys(ctx, a, stdout)
		case sub == "limit" && len(pos) == 1:
			return lf.apply(ctx, a, pos[0], stdout)
		case sub == "revoke" && len(pos) == 1:
			err := a.Auth.Revoke(ctx, pos[0])
			if errors.Is(err, quire.ErrNotFound) {
				return fmt.Errorf("no key with id %q", pos[0])
			}
			if err == nil {
				fmt.Fprintln(stdout, "revoked", pos[0])
			}
			return err
		case sub == "create" && len(pos) == 0 && email != "":
			key, rec, err := a.Auth.CreateKey(ctx, email)
			if err == nil {
				fmt.Fprintf(stdout, "created %s for %s; the key is shown only now:\n%s\n", rec.ID, rec.Email, key)
			}
			return err
		}
		return errUsage
	})
}

func listKeys(ctx context.Context, a *app.App, w io.Writer) error {
	keys, err := a.Auth.Keys(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEMAIL\tPREFIX\tCREATED\tLAST USED\tSTATUS")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\t%s\n", k.ID, k.Email, k.Prefix, stamp(k.CreatedAt), stamp(k.LastUsedAt), status(k.RevokedAt))
	}
	return tw.Flush()
}

func status(revoked time.Time) string {
	if revoked.IsZero() {
		return "active"
	}
	return "revoked " + stamp(revoked)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}
