package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/config"
)

// parseArgs is config.Parse for a command whose usage lines are usage:
// the flags defined on fs so far are the command's own. Asked for help
// (-h or --help), it prints the usage, the command's own flags and then
// the settings every command shares, and returns flag.ErrHelp, before
// anything needs a data directory or a database.
func parseArgs(fs *flag.FlagSet, usage string, args []string) (*config.Config, []string, error) {
	own := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { own[f.Name] = true })
	fs.Usage = func() { printHelp(fs, usage, own) }
	cfg, rest, err := config.Parse(fs, args)
	if err != nil {
		return nil, nil, err
	}
	return cfg, rest, app.Check(cfg)
}

// printHelp writes fs's help to its output: usage, the flags named in own,
// then the others (the settings).
func printHelp(fs *flag.FlagSet, usage string, own map[string]bool) {
	w := fs.Output()
	mine, shared := flag.NewFlagSet(fs.Name(), flag.ContinueOnError), flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		set := shared
		if own[f.Name] {
			set = mine
		}
		set.Var(f.Value, f.Name, f.Usage)
		set.Lookup(f.Name).DefValue = f.DefValue // the default, not a value parsed before -h
	})
	fmt.Fprintln(w, usage)
	if len(own) > 0 {
		fmt.Fprintln(w, "\nflags:")
		mine.SetOutput(w)
		mine.PrintDefaults()
	}
	fmt.Fprintln(w, "\nsettings (every command's; each can also be set by its QUIRE_* variable):")
	shared.SetOutput(w)
	shared.PrintDefaults()
}

// isHelp reports whether arg asks for help, where a command expects a
// subcommand.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// subcommand starts a command with subcommands (quire keys list ...): it
// answers no subcommand (the usage, exit 2) and a request for help (exit
// 0) itself; otherwise it returns the subcommand, the arguments after it
// and a flag set named for both, and done is false.
func subcommand(name, usage string, args []string, stdout, stderr io.Writer) (sub string, rest []string, fs *flag.FlagSet, code int, done bool) {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return "", nil, nil, 2, true
	}
	if isHelp(args[0]) {
		fmt.Fprintln(stdout, usage+"\n\nRun quire "+name+" SUBCOMMAND -h for its flags.")
		return "", nil, nil, 0, true
	}
	fs = flag.NewFlagSet(name+" "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	return args[0], args[1:], fs, 0, false
}
