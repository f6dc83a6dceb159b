//go:build cgo

package lok

import (
	"os"
	"testing"
)

// LibreOffice's lock is not part of LibreOfficeKit's API; if an update of
// LibreOffice stopped exporting it, conversions would still work, only
// slower, so this test is what notices.
func TestLockIsExported(t *testing.T) {
	const dir = "/usr/lib/libreoffice/program"
	if _, err := os.Stat(dir + "/libmergedlo.so"); err != nil {
		t.Fatalf("LibreOffice is not installed (%v): run scripts/setup, which installs libreoffice-writer-nogui", err)
	}
	if !findLock(dir, 0) {
		t.Fatalf("%s/libmergedlo.so does not export Application::AcquireSolarMutex and ReleaseSolarMutex: Office.Lock does nothing", dir)
	}
}
