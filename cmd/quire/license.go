package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/config"
)

const licenseUsage = "usage: quire license create --org NAME --email CONTACT | list | revoke ID"

// runLicense implements quire license create | list | revoke: commercial
// license keys, each tied to an organization and its contact e-mail.
func runLicense(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, licenseUsage)
		return 2
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("license "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	org, email := "", ""
	if sub == "create" {
		fs.StringVar(&org, "org", "", "organization the license belongs to (required)")
		fs.StringVar(&email, "email", "", "contact e-mail; an API key issued to it reads this license's usage (required)")
	}
	cfg, pos, err := config.Parse(fs, args)
	if err != nil {
		fmt.Fprintln(stderr, "quire license:", err)
		return 2
	}
	return withApp(cfg, stderr, "quire license", licenseUsage, func(ctx context.Context, a *app) error {
		switch {
		case sub == "create" && len(pos) == 0 && org != "" && email != "":
			l, err := a.telemetry.CreateLicense(ctx, org, email)
			if err == nil {
				fmt.Fprintf(stdout, "created %s for %s (%s); the license key:\n%s\n", l.ID, l.Organization, l.Email, l.Key)
			}
			return err
		case sub == "list" && len(pos) == 0:
			return listLicenses(ctx, a, stdout)
		case sub == "revoke" && len(pos) == 1:
			err := a.telemetry.RevokeLicense(ctx, pos[0])
			if errors.Is(err, quire.ErrNotFound) {
				return fmt.Errorf("no license with id %q", pos[0])
			}
			if err == nil {
				fmt.Fprintln(stdout, "revoked", pos[0])
			}
			return err
		}
		return errUsage
	})
}

func listLicenses(ctx context.Context, a *app, w io.Writer) error {
	ls, err := a.telemetry.Licenses(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKEY\tORGANIZATION\tCONTACT\tCREATED\tSTATUS")
	for _, l := range ls {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.Key, l.Organization, l.Email, stamp(l.CreatedAt), status(l.RevokedAt))
	}
	return tw.Flush()
}
