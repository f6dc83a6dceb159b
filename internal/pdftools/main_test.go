package pdftools

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the PDF worker it starts.
func TestMain(m *testing.M) {
	RunWorkerIfAsked()
	os.Exit(m.Run())
}
