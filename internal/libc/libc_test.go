package libc

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// childEnv marks the process TestKeepFreed measures in.
const childEnv = "QUIRE_LIBC_TEST_CHILD"

// minorFaults is the process's count of minor page faults.
func minorFaults() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
}

// TestKeepFreed: a statement that builds a temporary b-tree (DISTINCT
// over about 1 MB) faults its pages in anew each time under glibc's
// defaults, which hand them back to the kernel when the statement ends,
// and no longer once KeepFreed has run. KeepFreed cannot be undone, so
// the measure runs in a process of its own.
func TestKeepFreed(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKeepFreed$", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1", "GLIBC_TUNABLES=")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil {
			t.Fatalf("the measuring process: %v", err)
		}
		return
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`,
		`WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000) INSERT INTO t (v) SELECT ? FROM c`} {
		if _, err := db.Exec(q, strings.Repeat("x", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	rounds := func() int64 {
		f0 := minorFaults()
		for range 20 {
			var n int
			if err := db.QueryRow(`SELECT COUNT(*) FROM (SELECT DISTINCT v || id FROM t)`).Scan(&n); err != nil || n != 1000 {
				t.Fatalf("%d distinct, %v", n, err)
			}
		}
		return minorFaults() - f0
	}
	rounds() // the first pass's faults: the file's pages, the heaps' growth
	before := rounds()
	if err := KeepFreed(); err != nil {
		t.Fatal(err)
	}
	rounds() // the heaps grow back once
	after := rounds()
	t.Logf("minor page faults over 20 statements: %d with glibc's defaults, %d after KeepFreed", before, after)
	if after*4 > before {
		t.Errorf("minor page faults: %d after KeepFreed, %d before; want at most a quarter", after, before)
	}
}
