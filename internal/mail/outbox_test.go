package mail

import (
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	netmail "net/mail"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

var outboxFileName = regexp.MustCompile(`^\d{8}T\d{6}Z-[0-9a-f]{16}\.eml$`)

// outboxFiles lists the directory, failing the test on leftovers that are not
// finished .eml files (such as a temporary file that was never renamed).
func outboxFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !outboxFileName.MatchString(e.Name()) {
			t.Errorf("unexpected file %q in outbox", e.Name())
		}
		names = append(names, e.Name())
	}
	return names
}

func TestOutboxWritesParsableEML(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	sender, logs := newSender(t, Options{OutboxDir: dir})
	msg := Message{To: "ana@example.com", Subject: "Votre code – quire", Text: "Bonjour Zoë, votre code est 915273.\n"}

	// The Date header has whole seconds: the window starts at the second
	// Send began in.
	sent := window{from: time.Now().Truncate(time.Second)}
	if err := sender.Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	sent.to = time.Now()

	names := outboxFiles(t, dir)
	if len(names) != 1 {
		t.Fatalf("outbox holds %v, want one file", names)
	}
	path := filepath.Join(dir, names[0])
	assertMode(t, dir, 0o700)
	assertMode(t, path, 0o600)

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parsed, err := netmail.ReadMessage(f)
	if err != nil {
		t.Fatalf("net/mail cannot parse %s: %v", path, err)
	}
	assertHeaders(t, parsed.Header, msg, sent)
	if ct := parsed.Header.Get("Content-Type"); !strings.EqualFold(ct, "text/plain; charset=utf-8") {
		t.Errorf("Content-Type = %q, want text/plain; charset=utf-8", ct)
	}
	if cte := parsed.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
		t.Fatalf("Content-Transfer-Encoding = %q, want quoted-printable", cte)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(parsed.Body))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.ReplaceAll(string(body), "\r\n", "\n"); got != msg.Text {
		t.Errorf("body = %q, want %q", got, msg.Text)
	}

	line := logs.String()
	if !strings.Contains(line, `msg="mail written to dev outbox"`) || !strings.Contains(line, "path="+path) {
		t.Errorf("log %q lacks the message or the path %s", line, path)
	}
	if strings.Contains(line, "915273") {
		t.Errorf("log %q contains the code", line)
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %o, want %o", path, got, want)
	}
}

// window is the span of time in which a message was sent.
type window struct{ from, to time.Time }

func assertHeaders(t *testing.T, h netmail.Header, want Message, sent window) {
	t.Helper()
	from, err := h.AddressList("From")
	if err != nil || len(from) != 1 || from[0].Address != "no-reply@localhost" || from[0].Name != "quire" {
		t.Errorf("From = %v (%v), want quire <no-reply@localhost>", from, err)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != want.To {
		t.Errorf("To = %v (%v), want %s", to, err, want.To)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject"))
	if err != nil || subject != want.Subject {
		t.Errorf("Subject = %q (%v), want %q", subject, err, want.Subject)
	}
	if date, err := h.Date(); err != nil || date.Before(sent.from) || date.After(sent.to) {
		t.Errorf("Date = %v (%v), want the time of sending, between %v and %v", date, err, sent.from, sent.to)
	}
	if id := h.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@localhost>") {
		t.Errorf("Message-ID = %q, want <...@localhost>", id)
	}
}

func TestOutboxGivesEveryMessageItsOwnFile(t *testing.T) {
	dir := t.TempDir()
	sender, _ := newSender(t, Options{OutboxDir: dir})
	for range 3 {
		if err := sender.Send(context.Background(), Message{To: "bo@example.com", Subject: "s", Text: "t"}); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if names := outboxFiles(t, dir); len(names) != 3 {
		t.Errorf("outbox holds %v, want three files", names)
	}
}

func TestOutboxRefusesInvalidRecipientAndCanceledContext(t *testing.T) {
	dir := t.TempDir()
	sender, _ := newSender(t, Options{OutboxDir: dir})
	if err := sender.Send(context.Background(), Message{To: "a@example.com\r\nBcc: eve@example.com", Subject: "s", Text: "t"}); err == nil {
		t.Error("Send with a header-injecting recipient succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sender.Send(ctx, Message{To: "a@example.com", Subject: "s", Text: "t"}); err == nil {
		t.Error("Send with a canceled context succeeded")
	}
	if names := outboxFiles(t, dir); len(names) != 0 {
		t.Errorf("outbox holds %v, want nothing", names)
	}
}

func TestNewOutboxNeedsDirectory(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without URL and OutboxDir succeeded")
	}
}
