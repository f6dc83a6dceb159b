package mail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// outbox is the development transport: instead of sending, it writes each
// message as an RFC 5322 .eml file that any mail client can open. The files
// hold live login codes, so they are readable by the owner only.
type outbox struct {
	dir    string
	build  builder
	logger *slog.Logger
}

func newOutbox(dir string, b builder, logger *slog.Logger) (*outbox, error) {
	if dir == "" {
		return nil, errors.New("mail: QUIRE_SMTP_URL is unset and the dev outbox has no directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("mail: create dev outbox: %w", err)
	}
	logger.Info("mail: QUIRE_SMTP_URL is unset, writing mail to the dev outbox", "dir", dir)
	return &outbox{dir: dir, build: b, logger: logger}, nil
}

// Send writes m to a new file and logs its path. The body is never logged: it
// holds the secret code.
func (o *outbox) Send(ctx context.Context, m Message) error {
	if err := ctx.Err(); err != nil {
		return sendError(o.dir, err)
	}
	now := time.Now()
	msg, err := o.build.build(m, now)
	if err != nil {
		return err
	}
	path := filepath.Join(o.dir, outboxName(now))
	if err := writeAtomic(path, msg); err != nil {
		return sendError(o.dir, err)
	}
	o.logger.InfoContext(ctx, "mail written to dev outbox", "path", path, "to", m.To)
	return nil
}

// outboxName makes names that sort by time (UTC, to the second) and stay
// unique within a second thanks to 64 random bits.
func outboxName(now time.Time) string {
	var suffix [8]byte
	_, _ = rand.Read(suffix[:]) // crypto/rand.Read never fails since Go 1.24
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(suffix[:]) + ".eml"
}

// writeAtomic writes msg to a hidden temporary file in the same directory and
// renames it into place, so a reader watching for *.eml never sees half a
// message. os.CreateTemp creates the file with mode 0600.
func writeAtomic(path string, msg *gomail.Msg) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".outbox-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err = msg.WriteTo(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
