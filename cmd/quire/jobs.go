package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/jobs"
)

const jobsUsage = "usage: quire jobs list [--key ID] [--limit N] [--json] | show ID | cancel ID"

// runJobs implements quire jobs list | show | cancel.
func runJobs(args []string, stdout, stderr io.Writer) int {
	sub, args, fs, code, done := subcommand("jobs", jobsUsage, args, stdout, stderr)
	if done {
		return code
	}
	key, limit, asJSON := "", 50, false
	if sub == "list" {
		fs.StringVar(&key, "key", "", "only the jobs of this API key id")
		fs.IntVar(&limit, "limit", 50, "most jobs listed, newest first")
		fs.BoolVar(&asJSON, "json", false, "print the jobs as JSON")
	}
	cfg, pos, err := parseArgs(fs, jobsUsage, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "quire jobs:", err)
		return 2
	}
	return withApp(cfg, stderr, "quire jobs", jobsUsage, app.OpenJobs, func(ctx context.Context, a *app.App) error {
		svc := a.Jobs
		switch {
		case sub == "list" && len(pos) == 0:
			list, err := svc.List(ctx, key, limit)
			if err != nil {
				return err
			}
			if asJSON {
				return printJobsJSON(stdout, list)
			}
			printJobs(stdout, list)
			return nil
		case sub == "show" && len(pos) == 1:
			j, err := svc.Get(ctx, "", pos[0])
			if err != nil {
				return err
			}
			return printJobJSON(stdout, j)
		case sub == "cancel" && len(pos) == 1:
			j, err := svc.Cancel(ctx, pos[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s %s %s\n", j.ID, j.Status, j.Error)
			return nil
		}
		return errUsage
	})
}

func printJobs(w io.Writer, list []quire.Job) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKEY\tOPERATION\tSTATUS\tCREATED\tFINISHED\tWEBHOOK")
	for _, j := range list {
		status, finished, webhook := j.Status, "-", "-"
		if j.Waiting != "" { // the reason is in show and --json
			status += ", waiting"
		}
		if !j.FinishedAt.IsZero() {
			finished = j.FinishedAt.Format(time.RFC3339)
		}
		if j.Webhook.URL != "" {
			webhook = fmt.Sprintf("%d attempts", j.Webhook.Attempts)
			if !j.Webhook.DeliveredAt.IsZero() {
				webhook += ", delivered"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.ID, j.KeyID, j.Operation, status, j.CreatedAt.Format(time.RFC3339), finished, webhook)
	}
	tw.Flush()
}

// jobJSON is a job for an operator: the API's resource and its key.
type jobJSON struct {
	jobs.Resource
	KeyID string `json:"keyId"`
	Runs  int    `json:"runs"`
}

func printJobJSON(w io.Writer, j quire.Job) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jobJSON{Resource: jobs.View(j), KeyID: j.KeyID, Runs: j.Runs})
}

func printJobsJSON(w io.Writer, list []quire.Job) error {
	out := make([]jobJSON, len(list))
	for i, j := range list {
		out[i] = jobJSON{Resource: jobs.View(j), KeyID: j.KeyID, Runs: j.Runs}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
