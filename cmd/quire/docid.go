package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/quire-dev/quire/docid"
)

// runDocid implements `quire docid FILE.docx` (prints the documentId) and
// `quire docid --stamp IN -o OUT` (writes the stamped file, prints the id it will have).
func runDocid(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("docid", flag.ContinueOnError)
	fs.SetOutput(stderr)
	stamp := fs.String("stamp", "", "write the GUID and creation time of DOCX file `IN` into its metadata (needs -o)")
	out := fs.String("o", "", "with --stamp, the `OUT` file to write")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: quire docid FILE.docx\n       quire docid --stamp IN.docx -o OUT.docx\n\n"+
			"Prints the documentId the editor library reports for a DOCX file. With --stamp,\n"+
			"writes a copy whose metadata carries the GUID and creation time, so that the id\n"+
			"stays the same across later edits, and prints that id.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case *stamp == "" && *out == "" && fs.NArg() == 1:
		return printDocid(fs.Arg(0), stdout, stderr)
	case *stamp != "" && *out != "" && fs.NArg() == 0:
		return stampDocid(*stamp, *out, stdout, stderr)
	}
	fs.Usage()
	return 2
}

func printDocid(path string, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "quire docid: %v\n", err)
		return 1
	}
	id, err := docid.Identify(data)
	if err != nil {
		fmt.Fprintf(stderr, "quire docid: %s: %v\n", path, err)
		return 1
	}
	fmt.Fprintln(stdout, id.ID)
	return 0
}

func stampDocid(in, out string, stdout, stderr io.Writer) int {
	data, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintf(stderr, "quire docid: %v\n", err)
		return 1
	}
	id, err := docid.Identify(data)
	if err == nil {
		data, err = docid.Stamp(data, id)
	}
	if err != nil {
		fmt.Fprintf(stderr, "quire docid: %s: %v\n", in, err)
		return 1
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "quire docid: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, docid.FromMetadata(id.GUID, id.Created))
	return 0
}
