package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// Settings of the token signing benchmark.
const (
	tokenModule = "/usr/lib/softhsm/libsofthsm2.so" // Debian's softhsm2
	tokenRounds = 3                                 // alternations of the two servers
)

// signTokenBenchmark measures POST /v1/sign of the 1-page PDF with the
// certificate page, one connection, by two servers started alike but for
// the signing key: a key file generated in the data directory, and a key
// generated in a SoftHSM2 token. Their runs alternate, so that both see
// the same machine.
func signTokenBenchmark() result {
	const title = "Signing with a key in a PKCS#11 token (POST /v1/sign)"
	tokenEnv, cleanup, err := softHSMToken()
	if err != nil {
		return result{title: title, notes: fmt.Sprintf("Not measured: %v (apt-get install softhsm2).\n", err)}
	}
	defer cleanup()
	var table, checks strings.Builder
	p50 := signAlternating([]signServer{{name: "key file"}, {name: "SoftHSM2 token", env: tokenEnv}}, tokenRounds, &table, &checks)
	file, token := medianDuration(p50[0]), medianDuration(p50[1])
	var n strings.Builder
	fmt.Fprintf(&n, "Two `bin/quire serve` processes (SQLite, QUIRE_CONVERT_WORKERS=-1), one signing with the key file generated in "+
		"its data directory, the other with an ECDSA P-256 key generated on first start in a SoftHSM2 token "+
		"(QUIRE_SIGNING_PKCS11_*; file object store in a temporary directory). Each row: POST /v1/sign of the 1-page PDF with "+
		"the certificate page, one keep-alive connection, %s; the two servers take turns, %d rounds each.\n\n", signDuration, tokenRounds)
	fmt.Fprintf(&n, "Median of the rounds' p50: key file %.2f ms, token %.2f ms: the token adds %.2f ms (%.2fx).\n\n",
		ms(file), ms(token), ms(token-file), float64(token)/float64(file))
	n.WriteString(checks.String())
	n.WriteString("The machine is shared and the client runs on it too.\n")
	figs := []figure{infoFigure("SoftHSM2 token over key file, median of the rounds' p50", fmt.Sprintf("%.2f ms / %.2f ms = %.2fx", ms(token), ms(file), float64(token)/float64(file)))}
	return result{title: title, table: table.String(), notes: n.String(), figures: figs}
}

// softHSMToken initialises a SoftHSM2 token in a temporary directory and
// returns the settings that make quire use it.
func softHSMToken() (env []string, cleanup func(), err error) {
	if _, err := os.Stat(tokenModule); err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "quire-bench-token-")
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	conf := filepath.Join(dir, "softhsm2.conf")
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		cleanup()
		return nil, nil, err
	}
	if err := os.WriteFile(conf, []byte("directories.tokendir = "+tokens+"\nobjectstore.backend = file\n"), 0o600); err != nil {
		cleanup()
		return nil, nil, err
	}
	env = []string{"SOFTHSM2_CONF=" + conf, "QUIRE_SIGNING_PKCS11_MODULE=" + tokenModule, "QUIRE_SIGNING_PKCS11_TOKEN=bench",
		"QUIRE_SIGNING_PKCS11_PIN=1234", "QUIRE_SIGNING_PKCS11_KEY=bench-signing"}
	init := exec.Command("softhsm2-util", "--init-token", "--free", "--label", "bench", "--pin", "1234", "--so-pin", "5678")
	init.Env = append(os.Environ(), env[0])
	if out, err := init.CombinedOutput(); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("softhsm2-util: %v: %s", err, out)
	}
	return env, cleanup, nil
}

// signServer is one configuration of bin/quire that signAlternating runs.
type signServer struct {
	name string
	env  []string // settings added to QUIRE_CONVERT_WORKERS=-1
	bin  string   // the build of quire; "": bin/quire
}

// signAlternating starts one bin/quire per server and measures POST
// /v1/sign of the 1-page PDF with the certificate page, one connection,
// the servers taking turns for rounds rounds so that all see the same
// machine. It writes a row per round into table, the validators' verdicts
// into checks, and returns each server's p50 of every round.
func signAlternating(servers []signServer, rounds int, table, checks *strings.Builder) [][]time.Duration {
	table.WriteString("| server | round | requests | req/s | p50 ms | p95 ms | p99 ms | failures |\n|---|---|---|---|---|---|---|---|\n")
	enc := base64.StdEncoding.EncodeToString(pdftest.OnePage("Service agreement"))
	var next []request
	for _, s := range servers {
		bin := s.bin
		if bin == "" {
			bin = quireBinary()
		}
		q := startQuireBin(bin, append([]string{"QUIRE_CONVERT_WORKERS=-1"}, s.env...)...)
		defer q.stop()
		key := q.keyOf("bench@example.com", s.env...)
		n := signRequests(q.url+"/v1/sign", key, enc, true)
		checks.WriteString(checkSigned(q.url+"/v1/sign", key, n, "1-page PDF ("+s.name+")", true))
		next = append(next, n)
	}
	p50 := make([][]time.Duration, len(servers))
	for round := 1; round <= rounds; round++ {
		for i, s := range servers {
			st := load(1, signDuration, 200, next[i])
			p50[i] = append(p50[i], st.p50)
			fmt.Fprintf(table, "| %s | %d | %d | %.1f | %.2f | %.2f | %.2f | %d |\n", s.name, round, st.requests, st.rate(),
				ms(st.p50), ms(st.p95), ms(st.p99), st.failures)
		}
	}
	return p50
}

// medianDuration is the median of d (d is reordered).
func medianDuration(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
