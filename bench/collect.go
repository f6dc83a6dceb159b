package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib"
)

// collectThroughput measures POST /v1/collect under concurrent load with a
// distinct documentId per request (every request writes new rows), on
// SQLite and PostgreSQL, against the do-nothing handler taking the same
// bodies. Every 204 quire answers is committed (SQLite: WAL with
// synchronous=FULL; PostgreSQL: synchronous_commit as configured, on by
// default).
func collectThroughput() result {
	base := startBaseline()
	b := base.load(conns, duration, 204, collectRequests(base.url+"/"))
	base.stop()
	table := tableHead + row("do-nothing Go handler", b, b.rate())
	notes := ""
	for _, backend := range []string{"sqlite", "postgres"} {
		env, cleanup, err := databaseEnv(backend)
		if err != nil {
			notes += fmt.Sprintf("%s skipped: %v\n", backend, err)
			continue
		}
		q := startQuire(env...)
		s := q.load(conns, duration, 204, collectRequests(q.url+"/v1/collect"))
		q.stop()
		cleanup()
		table += row("quire /v1/collect, "+backend, s, b.rate())
	}
	return result{title: "Telemetry intake (POST /v1/collect)", table: table, notes: notes + fmt.Sprintf(
		"%d keep-alive connections for %s each; one event per request (as the deployed editor library sends), "+
			"a distinct documentId each time; requests and events per second are the same number. "+
			"The CPU columns are the CPU time per request of the server process (for PostgreSQL, without the database "+
			"server's own) and of the load generator: the load generator and the server share the machine's cores, "+
			"so the rate follows their sum. "+
			"Goal of the issue: quire on SQLite at 0.6 or more of the do-nothing handler's rate.\n", conns, duration)}
}

func collectRequests(target string) request {
	run := make([]byte, 4)
	rand.Read(run)
	prefix := "HASH-" + strings.ToUpper(hex.EncodeToString(run)) + "-"
	return func(i int64) (*http.Request, error) {
		body := `{"superdocVersion":"1.46.3","browserInfo":{},"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"` +
			fmt.Sprintf("%s%d", prefix, i) + `","documentCreatedAt":null}]}`
		r, err := http.NewRequest("POST", target, strings.NewReader(body))
		if err == nil {
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("X-License-Key", "")
		}
		return r, err
	}
}

// databaseEnv returns the QUIRE_DATABASE_URL for backend: SQLite is the
// default (nothing to set); PostgreSQL gets a fresh schema on the server of
// QUIRE_TEST_DATABASE_URL, dropped by cleanup.
func databaseEnv(backend string) ([]string, func(), error) {
	if backend == "sqlite" {
		return nil, func() {}, nil
	}
	base := os.Getenv("QUIRE_TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, nil, err
	}
	schema := fmt.Sprintf("quire_bench_%d", os.Getpid())
	if _, err := admin.ExecContext(context.Background(), "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return nil, nil, err
	}
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return []string{"QUIRE_DATABASE_URL=" + u.String()}, func() {
		admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}, nil
}
