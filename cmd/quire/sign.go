package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/quire-dev/quire/internal/app"
	"github.com/quire-dev/quire/internal/signing"
)

const signUsage = "usage: quire sign IN.pdf|IN.docx -o OUT.pdf --name NAME --email EMAIL [--event-id ID] [--no-certificate]"

// runSign signs a local file as POST /v1/sign would, with an audit trail
// of one submit event by the operator, and records the signing.
func runSign(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sign", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "where to write the signed PDF (required)")
	name := fs.String("name", "", "signer's name (required)")
	email := fs.String("email", "", "signer's e-mail (required)")
	eventID := fs.String("event-id", "", "signing event id (default: a new UUID)")
	noCert := fs.Bool("no-certificate", false, "do not append the certificate pages")
	cfg, pos, err := parseArgs(fs, signUsage, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(pos) != 1 || *out == "" || *name == "" || *email == "" {
		fmt.Fprintln(stderr, signUsage)
		return 2
	}
	return withApp(cfg, stderr, "quire sign", signUsage, app.Open, func(ctx context.Context, a *app.App) error {
		in, err := os.ReadFile(pos[0])
		if err != nil {
			return err
		}
		id := *eventID
		if id == "" {
			id = uuid.NewString()
		}
		req := signing.Request{Document: signing.Document{Bytes: in}, EventID: id, Certificate: !*noCert,
			Signer:     signing.Signer{Name: *name, Email: *email},
			AuditTrail: []signing.AuditEvent{{Type: "submit", Timestamp: time.Now().UTC(), Data: map[string]any{"via": "quire sign"}}}}
		res, err := a.Signing.Sign(ctx, req, "cli")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*out, res.PDF, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "signed %s -> %s (event %s, SHA-256 %s)\n", pos[0], *out, res.EventID, res.SHA256)
		return nil
	})
}

const verifyUsage = "usage: quire verify FILE.pdf"

// runVerify prints the JSON of POST /v1/verify for a local file; it exits
// 0 when the document is valid and 1 when it is not.
func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, pos, err := parseArgs(fs, verifyUsage, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil || len(pos) != 1 {
		fmt.Fprintln(stderr, verifyUsage)
		return 2
	}
	valid := false
	code := withApp(cfg, stderr, "quire verify", verifyUsage, app.OpenVerifier, func(ctx context.Context, a *app.App) error {
		pdf, err := os.ReadFile(pos[0])
		if err != nil {
			return err
		}
		res, err := a.Signing.Verify(ctx, signing.Document{Bytes: pdf})
		if err != nil {
			return err
		}
		valid = res.Valid
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	})
	if code == 0 && !valid {
		return 1
	}
	return code
}
