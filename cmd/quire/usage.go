package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/metering"
	"github.com/quire-dev/quire/internal/telemetry"
)

const usageUsage = "usage: quire usage [--api] [--json | --csv] [--from RFC3339] [--to RFC3339] [--group-by day|month] [--license-key KEY]"

// runUsage prints the usage report of GET /v1/usage, for every license,
// or with --api that of GET /v1/usage/api, for every API key.
func runUsage(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as the API's JSON")
	asCSV := fs.Bool("csv", false, "print the report as CSV")
	from := fs.String("from", "", "start of the report, RFC 3339 (default: start of the current UTC month)")
	to := fs.String("to", "", "end of the report, exclusive, RFC 3339 (default: start of the next UTC month)")
	groupBy := fs.String("group-by", "month", "day or month")
	key := fs.String("license-key", "", "only this license key")
	api := fs.Bool("api", false, "the metering of API operations per API key (GET /v1/usage/api) instead of telemetry")
	cfg, pos, err := parseArgs(fs, usageUsage, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(pos) > 0 {
		fmt.Fprintln(stderr, usageUsage)
		return 2
	}
	var keys []string
	if *key != "" {
		keys = []string{*key}
	}
	if *api {
		return withApp(cfg, stderr, "quire usage", usageUsage, app.OpenRecords, func(ctx context.Context, a *app.App) error {
			return apiUsage(ctx, a, stdout, *from, *to, *groupBy, *asJSON, *asCSV)
		})
	}
	return withApp(cfg, stderr, "quire usage", usageUsage, app.OpenRecords, func(ctx context.Context, a *app.App) error {
		q, err := telemetry.ParseQuery(*from, *to, *groupBy, keys, time.Now())
		if err != nil {
			return err
		}
		rep, err := a.Telemetry.Report(ctx, q)
		switch {
		case err != nil:
			return err
		case *asJSON:
			return printJSON(stdout, rep)
		case *asCSV:
			return telemetry.WriteCSV(stdout, rep)
		}
		return printUsage(stdout, rep)
	})
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// apiUsage prints the metering of API operations of every key.
func apiUsage(ctx context.Context, a *app.App, w io.Writer, from, to, groupBy string, asJSON, asCSV bool) error {
	q, err := metering.ParseQuery(from, to, groupBy, time.Now())
	if err != nil {
		return err
	}
	rep, err := metering.Build(ctx, a.DB, q)
	switch {
	case err != nil:
		return err
	case asJSON:
		return printJSON(w, rep)
	case asCSV:
		return metering.WriteCSV(w, rep)
	}
	fmt.Fprintf(w, "API usage from %s to %s, by %s\n\n", rep.From.Format(time.DateOnly), rep.To.Format(time.DateOnly), rep.GroupBy)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tEMAIL\tPERIOD\tOPERATION\tREQUESTS\tDOCUMENTS\tPAGES\tINPUT BYTES\tENGINE S")
	for _, k := range rep.Keys {
		for _, p := range k.Periods {
			for _, op := range quire.Operations {
				if u := p.Operations.Of(op); u.Requests+u.Documents > 0 {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%.1f\n", k.KeyID, k.Email, period(p.Start, rep.GroupBy), op,
						u.Requests, u.Documents, u.Pages, u.InputBytes, u.EngineSeconds)
				}
			}
		}
	}
	return tw.Flush()
}

func period(start time.Time, groupBy string) string {
	if groupBy == "month" {
		return start.Format("2006-01")
	}
	return start.Format(time.DateOnly)
}

func printUsage(w io.Writer, rep telemetry.Report) error {
	fmt.Fprintf(w, "usage from %s to %s, by %s\n\n", rep.From.Format(time.DateOnly), rep.To.Format(time.DateOnly), rep.GroupBy)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LICENSE KEY\tORGANIZATION\tPERIOD\tNEW DOCS\tACTIVE DOCS\tOPENS\tANONYMOUS\tOTHER HOSTS")
	for _, l := range rep.Licenses {
		org := "(unregistered)"
		switch {
		case l.Community:
			org = "(community)"
		case l.Organization != nil:
			org = strings.ReplaceAll(*l.Organization, "\t", " ")
		}
		if len(l.Periods) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t0\t0\t0\t0\t0\n", l.LicenseKey, org)
		}
		for _, p := range l.Periods {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", l.LicenseKey, org, period(p.Start, rep.GroupBy),
				p.NewDocuments, p.ActiveDocuments, p.Opens, p.AnonymousOpens, p.OtherHostOpens)
		}
	}
	return tw.Flush()
}
