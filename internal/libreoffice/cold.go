package libreoffice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/quire-dev/quire/internal/engine"
)

// LibreOfficeKit 7.4 refuses to load any Writer document that contains a
// comment (DOCX, ODT or RTF alike: "loadComponentFromURL returned an empty
// reference"), although soffice opens the same files. A DOCX loses its
// comments before it reaches a worker (safeinput/comments.go); for the other
// formats, when a worker cannot load a document, the supervisor converts
// it once more with a one-off headless soffice, as a user would from the
// command line: slower (1-3 s, a cold start), same fidelity, same safety
// settings (a profile of its own written by writeProfile). A document
// soffice cannot convert either is unprocessable.
//
// CSV went to soffice straight away on LibreOffice 7.4, whose
// LibreOfficeKit had Calc's CSV import wait for its options dialog until
// the job timed out; 25.2 converts it warm (csvLoadOptions).

// coldConvert converts in (of format from) to format to with soffice and
// the export filter's options filter, using the directory dir for its
// profile and files, within timeout. It returns the output, its pages
// (outputPages) and soffice's run time.
// soffice is killed when ctx ends (the pool's abort), or when it and its
// children use more than o.MaxWorkerMemory (memory.go).
func coldConvert(ctx context.Context, o *Options, dir string, in []byte, from, to, filter string, timeout time.Duration) ([]byte, int64, time.Duration, error) {
	profile, work := filepath.Join(dir, "cold-profile"), filepath.Join(dir, "cold-job")
	if err := writeProfile(profile); err != nil {
		return nil, 0, 0, err
	}
	if err := resetDir(work); err != nil {
		return nil, 0, 0, err
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "input."+from)
	if err := os.WriteFile(src, in, 0o600); err != nil {
		return nil, 0, 0, fmt.Errorf("convert: cold conversion: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out bytes.Buffer
	newCmd := func(isolated bool) *exec.Cmd {
		args := []string{"--headless", "--norestore", "--nologo", "--nodefault", "--nolockcheck", "-env:UserInstallation=" + fileURL(profile),
			"--convert-to", exportSpec(from, to, filter), "--outdir", work, src}
		cmd := exec.CommandContext(ctx, filepath.Join(o.ProgramDir, "soffice"), args...)
		if isolated { // the worker program confines itself, then becomes soffice
			engine.Confine(cmd, engine.Confinement{Executable: o.Executable, WorkerArgs: o.WorkerArgs, Root: filepath.Join(dir, "cold-root"),
				Dirs: []string{profile, work}, Dir: work})
		}
		cmd.Dir = work // not the server's working directory, which soffice's messages could show
		cmd.Env = append(workerEnv(os.Environ(), work), cmd.Env...)
		// soffice starts soffice.bin: a timeout must kill the whole group.
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 2 * time.Second
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd
	}
	t0 := time.Now()
	cmd, err := startIsolated(o, newCmd)
	if err == nil {
		pid := cmd.Process.Pid
		watch := engine.WatchMemory(o.MaxWorkerMemory, func() int64 { return treeRSS(pid) }, func() { syscall.Kill(-pid, syscall.SIGKILL) })
		err = cmd.Wait()
		if over, peak := watch.End(); over {
			return nil, 0, time.Since(t0), &memoryError{limit: o.MaxWorkerMemory, peak: peak, sampled: peak}
		}
	}
	took := time.Since(t0)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, 0, took, fmt.Errorf("%w (%v, cold soffice)", engine.ErrTimeout, timeout)
	}
	dst := filepath.Join(work, "input."+to)
	pdf, readErr := os.ReadFile(dst)
	if err != nil || readErr != nil || !looksLike(pdf, to) {
		// soffice's output is the engine's: it goes to the log, and the
		// client gets quire's own words.
		o.Logger.Warn("cold soffice could not convert a document", "err", err, "read_err", readErr,
			"output", string(bytes.TrimSpace(out.Bytes())))
		return nil, 0, took, errors.New("soffice could not convert it either")
	}
	return pdf, outputPages(pdf, to), took, nil
}
