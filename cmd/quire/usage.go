package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quire-dev/quire/internal/config"
	"github.com/quire-dev/quire/internal/telemetry"
)

const usageUsage = "usage: quire usage [--json | --csv] [--from RFC3339] [--to RFC3339] [--group-by day|month] [--license-key KEY]"

// runUsage prints the usage report of GET /v1/usage, for every license.
func runUsage(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("usage", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the report as the API's JSON")
	asCSV := fs.Bool("csv", false, "print the report as CSV")
	from := fs.String("from", "", "start of the report, RFC 3339 (default: start of the current UTC month)")
	to := fs.String("to", "", "end of the report, exclusive, RFC 3339 (default: start of the next UTC month)")
	groupBy := fs.String("group-by", "month", "day or month")
	key := fs.String("license-key", "", "only this license key")
	cfg, pos, err := config.Parse(fs, args)
	if err != nil || len(pos) > 0 {
		fmt.Fprintln(stderr, usageUsage)
		return 2
	}
	var keys []string
	if *key != "" {
		keys = []string{*key}
	}
	return withApp(cfg, stderr, "quire usage", usageUsage, func(ctx context.Context, a *app) error {
		q, err := telemetry.ParseQuery(*from, *to, *groupBy, keys, time.Now())
		if err != nil {
			return err
		}
		rep, err := a.telemetry.Report(ctx, q)
		switch {
		case err != nil:
			return err
		case *asJSON:
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(rep)
		case *asCSV:
			return telemetry.WriteCSV(stdout, rep)
		}
		return printUsage(stdout, rep)
	})
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
			period := p.Start.Format(time.DateOnly)
			if rep.GroupBy == "month" {
				period = p.Start.Format("2006-01")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n", l.LicenseKey, org, period,
				p.NewDocuments, p.ActiveDocuments, p.Opens, p.AnonymousOpens, p.OtherHostOpens)
		}
	}
	return tw.Flush()
}
