package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
	"github.com/quire-dev/quire/internal/pdfsign"
)

// Settings of the verification benchmark.
const (
	verifyDuration = 5 * time.Second // each load run of POST /v1/verify
	verifyRuns     = 30              // in-process verifications and pdfsig runs of each file
)

// verifyBenchmark measures the verification of a PDF with one signature
// and of one with five (each in a revision of its own, every revision
// compared with the next), three ways in one run: quire's verifier
// in-process, POST /v1/verify on a running quire (one connection), and
// poppler's pdfsig, which checks each signature's digest and certificate
// but no revision, with an NSS database trusting the same CA. Goal: the
// /v1/verify p50 no slower than pdfsig's.
func verifyBenchmark() result {
	const title = "Verification (POST /v1/verify) against pdfsig"
	dir, err := os.MkdirTemp("", "quire-bench-verify-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	id, err := pdfsign.LoadIdentity(pdfsign.KeySource{DataDir: filepath.Join(dir, "id")})
	if err != nil {
		panic(err)
	}
	rootPEM := filepath.Join(dir, "root.pem")
	os.WriteFile(rootPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: id.Root().Raw}), 0o600)
	nss := nssTrusting(dir, rootPEM)
	one := signTimes(id, pdftest.Generated(3, false, 0), 1)
	five := signTimes(id, one, 4)
	q := startQuire("QUIRE_CONVERT_WORKERS=-1", "QUIRE_TRUST_ROOTS="+rootPEM)
	defer q.stop()

	var table, notes strings.Builder
	var figs []figure
	table.WriteString("| document | bytes | quire in-process p50 ms | quire /v1/verify p50 ms | pdfsig p50 ms | /v1/verify / pdfsig | met |\n|---|---|---|---|---|---|---|\n")
	for _, d := range []struct {
		name string
		pdf  []byte
		sigs int
	}{{"1 signature", one, 1}, {"5 signatures", five, 5}} {
		file := filepath.Join(dir, fmt.Sprintf("%d.pdf", d.sigs))
		os.WriteFile(file, d.pdf, 0o600)
		opts := pdfsign.VerifyOptions{Roots: id.Roots()}
		res, err := pdfsign.VerifyWith(d.pdf, opts, pdf.Limits{})
		if err != nil || !res.Valid || len(res.Signers) != d.sigs {
			panic(fmt.Sprintf("bench verify: %s does not verify: %v %+v", d.name, err, res))
		}
		lib := medianOf(verifyRuns, func() { pdfsign.VerifyWith(d.pdf, opts, pdf.Limits{}) })
		s := load(1, verifyDuration, 200, verifyRequest(q.url+"/v1/verify", d.pdf))
		out, _ := exec.Command("pdfsig", "-nssdir", nss, "-no-ocsp", file).CombinedOutput()
		if n := strings.Count(string(out), "Signature is Valid."); n != d.sigs {
			fmt.Fprintf(&notes, "pdfsig found %d valid signatures in the %s file, not %d:\n\n```\n%s\n```\n\n", n, d.name, d.sigs, out)
		}
		poppler := medianOf(verifyRuns, func() { exec.Command("pdfsig", "-nssdir", nss, "-no-ocsp", file).Run() })
		ratio := ms(s.p50) / ms(poppler)
		fmt.Fprintf(&table, "| %s | %d | %.2f | %.2f | %.2f | %.2f | %s |\n", d.name, len(d.pdf), ms(lib), ms(s.p50), ms(poppler), ratio, yesNo(ratio <= 1 && s.failures == 0))
		figs = append(figs, goalFigure(d.name+": /v1/verify p50 over pdfsig's", "at most 1",
			fmt.Sprintf("%.2f ms / %.2f ms = %.2f", ms(s.p50), ms(poppler), ratio), ratio <= 1 && s.failures == 0))
	}
	notes.WriteString("Goal: the /v1/verify p50 no slower than pdfsig's on the same file (ratio at most 1). pdfsig runs as a " +
		"process per file, as a script would run it; its p50 includes that start. quire's in-process figure is the verifier " +
		"alone (pdfsign.VerifyWith): every signature's digest and CMS, its chain, and every later revision compared object by " +
		"object with the one before it.\n")
	return result{title: title, table: table.String(), notes: notes.String(), figures: figs}
}

// signTimes signs b n times with id, each signature in a revision of its
// own.
func signTimes(id *pdfsign.Identity, b []byte, n int) []byte {
	for i := range n {
		d, err := pdf.Open(context.Background(), b, pdf.Limits{})
		if err != nil {
			panic(err)
		}
		if b, _, err = pdfsign.Sign(context.Background(), d, id, pdfsign.Options{Name: fmt.Sprintf("Signer %d", i+1)}); err != nil {
			panic(err)
		}
	}
	return b
}

// nssTrusting makes an NSS database under dir that trusts the CA in
// caPEM, for pdfsig.
func nssTrusting(dir, caPEM string) string {
	db := filepath.Join(dir, "nss")
	os.Mkdir(db, 0o700)
	for _, args := range [][]string{{"-N", "-d", "sql:" + db, "--empty-password"}, {"-A", "-d", "sql:" + db, "-n", "bench-ca", "-t", "CT,C,C", "-i", caPEM}} {
		if out, err := exec.Command("certutil", args...).CombinedOutput(); err != nil {
			panic(fmt.Sprintf("certutil %v: %v\n%s", args, err, out))
		}
	}
	return "sql:" + db
}

// verifyRequest posts pdf to /v1/verify as JSON.
func verifyRequest(target string, pdf []byte) request {
	body := []byte(`{"document":{"base64":"` + base64.StdEncoding.EncodeToString(pdf) + `"}}`)
	return func(int64) (*http.Request, error) {
		r, err := http.NewRequest("POST", target, bytes.NewReader(body))
		if err == nil {
			r.Header.Set("Content-Type", "application/json")
		}
		return r, err
	}
}
