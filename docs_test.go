package quire_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeFuzzRunsEveryTarget: make fuzz runs every fuzz target of the
// repository, and the README's make fuzz line names each.
func TestMakeFuzzRunsEveryTarget(t *testing.T) {
	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readmeLine := regexp.MustCompile(`(?m)^make fuzz .*$`).Find(readme)
	fuzz := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	targets := 0
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		for _, m := range fuzz.FindAllSubmatch(src, -1) {
			targets++
			name, pkg := string(m[1]), "./"+filepath.Dir(path)
			if !strings.Contains(string(makefile), "go test "+pkg+" -run '^$$' -fuzz '^"+name+"$$'") {
				t.Errorf("make fuzz does not run %s of %s", name, pkg)
			}
			if !strings.Contains(string(readmeLine), name) {
				t.Errorf("the README's make fuzz line does not name %s: %s", name, readmeLine)
			}
		}
		return err
	})
	if err != nil || targets == 0 {
		t.Fatalf("found %d fuzz targets: %v", targets, err)
	}
	if !strings.Contains(string(readmeLine), fmt.Sprintf("the %d fuzz targets", targets)) {
		t.Errorf("the README's make fuzz line does not count %d targets: %s", targets, readmeLine)
	}
}
