// Command worker is the PDF worker of pdftools' tests when they run
// without -cover (see buildWorker): built by their TestMain without the
// race detector, it serves the task it was started with, as the quire
// binary does.
package main

import (
	"fmt"
	"os"

	"github.com/quire-dev/quire/internal/pdftools"
)

func main() {
	pdftools.RunWorkerIfAsked()
	fmt.Fprintln(os.Stderr, "worker: started without a task (QUIRE_PDFTOOLS_WORKER unset)")
	os.Exit(2)
}
