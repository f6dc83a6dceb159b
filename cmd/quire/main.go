// Command quire is the quire service and its operator tools.
//
//	quire serve                          run the HTTP service
//	quire init                           set up the data directory without serving
//	quire backup FILE                    write a backup archive, also while serving
//	quire restore FILE                   restore it into a new data directory
//	quire health [--live]                probe the local server (container HEALTHCHECK)
//	quire keys list|revoke ID|create     manage API keys
//	quire license create|list|revoke     manage commercial license keys
//	quire usage [--json]                 print the usage report
//	quire convert IN -o OUT.pdf          convert a document to PDF
//	quire sign IN -o OUT.pdf             sign a file locally
//	quire verify FILE.pdf                check its signatures (JSON)
//	quire docid FILE.docx                print the documentId of a DOCX
//	quire version, quire --version       print the version
//
// Every command reads the QUIRE_* environment variables; flags override them.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/quire-dev/quire/internal/pdftools"
)

// version is set at build time: go build -ldflags "-X main.version=...".
var version = "dev"

type command struct {
	name, summary string
	run           func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"serve", "run the HTTP service", runServe},
		{"init", "set up the data directory without serving", runInit},
		{"backup", "write a backup archive of the data directory, also while serving", runBackup},
		{"restore", "restore a backup archive into a new data directory", runRestore},
		{"health", "probe the local server: exit 0 when ready (--live: when it answers)", runHealth},
		{"keys", "list, revoke or create API keys", runKeys},
		{"jobs", "list, show or cancel jobs (Prefer: respond-async)", runJobs},
		{"license", "create, list or revoke commercial license keys", runLicense},
		{"usage", "print the usage report (documents per license key and period)", runUsage},
		{"convert", "convert a document to PDF with the conversion engine", runConvert},
		{"pdf", "run a PDF operation (merge, split, rotate, ...) locally", runPDF},
		{"sign", "sign a PDF or DOCX file locally", runSign},
		{"verify", "check the signatures of a PDF file (JSON)", runVerify},
		{"docid", "print the documentId of a DOCX file, or stamp it", runDocid},
		{"version", "print the version (also: quire --version)", func(_ []string, stdout, _ io.Writer) int { fmt.Fprintln(stdout, version); return 0 }},
	}
}

func main() {
	pdftools.RunWorkerIfAsked()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	if args[0] == "convert-worker" { // hidden: started by the conversion pool
		return runConvertWorker(args[1:], stdout, stderr)
	}
	if args[0] == "--version" || args[0] == "-version" {
		fmt.Fprintln(stdout, version)
		return 0
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "quire: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: quire COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun quire COMMAND -h for the flags of a command; each flag can also be set by its QUIRE_* variable.")
}
