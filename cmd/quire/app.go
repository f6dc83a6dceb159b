package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/config"
)

// errUsage makes withApp print the command's usage and exit 2.
var errUsage = errors.New("usage")

// opener opens the services of a Config that a command uses: app.Open
// (all of them), app.OpenRecords, app.OpenJobs or app.OpenVerifier.
type opener func(context.Context, *config.Config, app.Options) (*app.App, error)

// withApp opens the services of cfg that open builds, runs fn, and turns
// its error into an exit status: 2 and the usage for errUsage, 1 for
// other failures. The data directory must have been set up by serve or
// init.
func withApp(cfg *config.Config, stderr io.Writer, name, usage string, open opener, fn func(context.Context, *app.App) error) int {
	if err := requireDataDir(cfg); err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
	ctx := context.Background()
	a, err := open(ctx, cfg, app.Options{Logger: newLogger(stderr, "warn"), OnDemand: true})
	if err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a.Close(ctx)
	}()
	switch err := fn(ctx, a); {
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, usage)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, name+":", describe(err))
		return 1
	}
	return 0
}

// describe is err for an operator: an error of the API's contract with
// its message and every bad field, one to a line.
func describe(err error) string {
	var qe *quire.Error
	if !errors.As(err, &qe) {
		return err.Error()
	}
	var b strings.Builder
	b.WriteString(qe.Message)
	for _, d := range qe.Details {
		if d.Issue != qe.Message { // the file's detail of a one-file conversion says it again
			fmt.Fprintf(&b, "\n  %s %s", d.Field, d.Issue)
		}
	}
	return b.String()
}
