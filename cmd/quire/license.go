package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/app"
)

const licenseUsage = "usage: quire license create --org NAME --email CONTACT [--hosts HOST,...] | list | revoke ID | hosts KEY (HOST,... | --clear)"

// runLicense implements quire license create | list | revoke | hosts:
// commercial license keys, each tied to an organization and its contact
// e-mail, optionally to the customer's own hosts.
func runLicense(args []string, stdout, stderr io.Writer) int {
	sub, args, fs, code, done := subcommand("license", licenseUsage, args, stdout, stderr)
	if done {
		return code
	}
	org, email, hosts, clear := "", "", "", false
	switch sub {
	case "create":
		fs.StringVar(&org, "org", "", "organization the license belongs to (required)")
		fs.StringVar(&email, "email", "", "contact e-mail; an API key issued to it reads this license's usage (required)")
		fs.StringVar(&hosts, "hosts", "", "the customer's own hosts, separated by commas; opens from others are counted as otherHostOpens (default: any host)")
	case "hosts":
		fs.BoolVar(&clear, "clear", false, "remove the host list: opens from any host count as the customer's")
	}
	cfg, pos, err := parseArgs(fs, licenseUsage, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire license:", err)
		return 2
	}
	return withApp(cfg, stderr, "quire license", licenseUsage, app.OpenRecords, func(ctx context.Context, a *app.App) error {
		switch {
		case sub == "create" && len(pos) == 0 && org != "" && email != "":
			l, err := a.Telemetry.CreateLicense(ctx, org, email, hosts)
			if err == nil {
				fmt.Fprintf(stdout, "created %s for %s (%s); the license key:\n%s\n", l.ID, l.Organization, l.Email, l.Key)
			}
			return err
		case sub == "hosts" && (len(pos) == 2 && !clear || len(pos) == 1 && clear):
			return setHosts(ctx, a, stdout, pos)
		case sub == "list" && len(pos) == 0:
			return listLicenses(ctx, a, stdout)
		case sub == "revoke" && len(pos) == 1:
			err := a.Telemetry.RevokeLicense(ctx, pos[0])
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

func listLicenses(ctx context.Context, a *app.App, w io.Writer) error {
	ls, err := a.Telemetry.Licenses(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKEY\tORGANIZATION\tCONTACT\tCREATED\tSTATUS\tHOSTS")
	for _, l := range ls {
		hosts := strings.Join(l.Hosts, ",")
		if hosts == "" {
			hosts = "(any)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", l.ID, l.Key, l.Organization, l.Email, stamp(l.CreatedAt), status(l.RevokedAt), hosts)
	}
	return tw.Flush()
}

// setHosts sets (KEY HOSTS) or, with --clear, removes (KEY) the host list
// of a license.
func setHosts(ctx context.Context, a *app.App, w io.Writer, pos []string) error {
	key, hosts := pos[0], ""
	if len(pos) == 2 {
		hosts = pos[1]
	}
	err := a.Telemetry.SetLicenseHosts(ctx, key, hosts)
	switch {
	case errors.Is(err, quire.ErrNotFound):
		return fmt.Errorf("no license with key %q", key)
	case err != nil:
		return err
	case hosts == "":
		fmt.Fprintln(w, "cleared the hosts of", key, "(opens from any host count as its own)")
	default:
		fmt.Fprintln(w, "set the hosts of", key, "(other instances apply them within QUIRE_TELEMETRY_HOSTS_REFRESH)")
	}
	return nil
}
