package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/auth"
	"github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/mail/mailtest"
	"github.com/quire-dev/quire/internal/ratelimit"
	"github.com/quire-dev/quire/internal/store"
	"github.com/quire-dev/quire/internal/store/storetest"
)

func TestKeyIssuanceAndUse(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		r := e.register("Ann@Example.com")
		var msg string
		r.json(t, &msg)
		if r.status != 200 || msg != auth.RegisterMessage {
			t.Fatalf("register = %d %q", r.status, msg)
		}
		m := e.SMTP.WaitFor(t, "ann@example.com", 10*time.Second)
		code := mailtest.Code(m.Text)
		if !m.TLS {
			t.Error("the code travelled without TLS")
		}

		r = e.verify("ann@example.com", code)
		var key string
		r.json(t, &key)
		if r.status != 200 || !strings.HasPrefix(key, "sd_") || len(key) != 52 {
			t.Fatalf("verify = %d %q, want a 52-character sd_ key", r.status, key)
		}
		if r.header.Get("Cache-Control") != "no-store" {
			t.Error("the key answer may be cached")
		}
		if r := e.verify("ann@example.com", code); r.status != 400 {
			t.Errorf("a used code worked again: %d", r.status)
		}

		// The key authenticates: the empty request gets past 401 to validation.
		r = e.do("POST", "/v1/sign", strings.NewReader("{}"), map[string]string{"Authorization": "Bearer " + key})
		r.errorBody(t, 400, "VALIDATION_ERROR")
		keys, _ := db.Keys(context.Background())
		if len(keys) != 1 || keys[0].Email != "ann@example.com" || keys[0].LastUsedAt.IsZero() {
			t.Fatalf("keys = %+v, want ann's key marked used", keys)
		}

		// Only hashes are stored: the key's SHA-256, and an HMAC of the code.
		sum := sha256.Sum256([]byte(key))
		if keys[0].Hash != hex.EncodeToString(sum[:]) || strings.Contains(keys[0].Prefix, key[12:]) {
			t.Errorf("stored key record %+v is not the SHA-256 of the key", keys[0])
		}
		e.codeFor("ann@example.com")
		if dump := dumpTables(t, db); strings.Contains(dump, key) || strings.Contains(dump, key[3:20]) {
			t.Error("the database holds the key in clear")
		}
		if logs := e.Logs.String(); strings.Contains(logs, code) || strings.Contains(logs, key[3:20]) || strings.Contains(logs, "ann@example.com") {
			t.Errorf("a log line holds the code, the key or the address:\n%s", logs)
		}
	})
}

// dumpTables returns every stored value of the auth tables as text.
func dumpTables(t *testing.T, db *store.DB) string {
	t.Helper()
	var b strings.Builder
	keys, err := db.Keys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, "%+v\n", k)
	}
	return b.String()
}

func TestAuthenticationFailures(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		key := e.key("bob@example.com")
		unknown := "sd_" + strings.Repeat("A", 43)
		for name, header := range map[string]string{
			"missing":   "",
			"no bearer": "Basic " + key,
			"malformed": "Bearer sd_short",
			"checksum":  "Bearer " + key[:len(key)-1] + string(key[len(key)-1]^1), // another character, always
			"unknown":   "Bearer " + unknown + checksumOf(unknown),
		} {
			r := e.do("POST", "/v1/convert?from=docx", nil, map[string]string{"Authorization": header})
			if b := r.errorBody(t, 401, "AUTHENTICATION_ERROR"); b.Message == "" {
				t.Errorf("%s: no message", name)
			}
		}
		keys, _ := db.Keys(context.Background())
		if err := db.RevokeKey(context.Background(), keys[0].ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		r := e.do("POST", "/v1/sign", nil, map[string]string{"Authorization": "Bearer " + key})
		if b := r.errorBody(t, 401, "AUTHENTICATION_ERROR"); !strings.Contains(b.Message, "revoked") {
			t.Errorf("revoked key: %q", b.Message)
		}
	})
}

// checksumOf computes the documented checksum of a key (base62 CRC-32 of
// everything before it), to build a well-formed key that was never issued.
func checksumOf(s string) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	v := crc32.ChecksumIEEE([]byte(s))
	out := make([]byte, 6)
	for i := 5; i >= 0; i-- {
		out[i], v = digits[v%62], v/62
	}
	return string(out)
}

func TestCodeRules(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())

		old := e.codeFor("c@example.com")
		fresh := e.codeFor("c@example.com")
		if old != fresh {
			if r := e.verify("c@example.com", old); r.status != 400 {
				t.Errorf("the replaced code still works: %d", r.status)
			}
		}
		if r := e.verify("c@example.com", fresh); r.status != 200 {
			t.Errorf("the new code fails: %d %s", r.status, r.body)
		}

		code := e.codeFor("d@example.com")
		wrong := fmt.Sprintf("%06d", (atoi(code)+1)%1_000_000)
		for i := 0; i < 5; i++ {
			b := e.verify("d@example.com", wrong).errorBody(t, 400, "VALIDATION_ERROR")
			if len(b.Details) != 1 || b.Details[0].Field != "code" {
				t.Fatalf("details %+v", b.Details)
			}
		}
		e.verify("d@example.com", code).errorBody(t, 400, "VALIDATION_ERROR") // dead after 5 wrong attempts
		if r := e.verify("d@example.com", e.codeFor("d@example.com")); r.status != 200 {
			t.Errorf("registering again gives a working code: %d %s", r.status, r.body)
		}

		code = e.codeFor("x@example.com")
		e.Clock.Advance(15*time.Minute + time.Second)
		e.verify("x@example.com", code).errorBody(t, 400, "VALIDATION_ERROR")
	})
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

func TestRegisterAnswerDoesNotRevealKnownAddresses(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		e.key("known@example.com")
		a, b := e.register("known@example.com"), e.register("new@example.com")
		if a.status != b.status || string(a.body) != string(b.body) {
			t.Errorf("known: %d %s; new: %d %s", a.status, a.body, b.status, b.body)
		}
	})
}

func TestValidation(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited())
		long := strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + ".com"
		for _, c := range []struct{ path, field, issue string }{
			{"/v1/auth/register", "email", "is required"},
			{"/v1/auth/register?email=not-an-address", "email", "is not a valid e-mail address"},
			{"/v1/auth/register?email=Ann%20%3Cann@example.com%3E", "email", "is not a valid e-mail address"},
			{"/v1/auth/register?email=ann@localhost", "email", "is not a valid e-mail address"},
			{"/v1/auth/register?email=" + long, "email", "must be at most 254 characters"},
			{"/v1/auth/verify?email=ann@example.com", "code", "is required"},
			{"/v1/auth/verify?email=ann@example.com&code=12345", "code", "must be the 6 digits from the e-mail"},
			{"/v1/auth/verify?code=123456", "email", "is required"},
		} {
			b := e.get(c.path).errorBody(t, 400, "VALIDATION_ERROR")
			if len(b.Details) == 0 || b.Details[0].Field != c.field || b.Details[0].Issue != c.issue {
				t.Errorf("%s: details %+v, want %s %s", c.path, b.Details, c.field, c.issue)
			}
		}
		b := e.get("/v1/auth/verify?email=x&code=1").errorBody(t, 400, "VALIDATION_ERROR")
		if len(b.Details) != 2 {
			t.Errorf("both bad fields are reported: %+v", b.Details)
		}
		if len(e.SMTP.Messages()) != 0 {
			t.Error("mail was sent for an invalid request")
		}
	})
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		opt := unlimited()
		opt.RegisterPerEmail = ratelimit.Rate{N: 2, Per: time.Hour}
		opt.RegisterPerIP = ratelimit.Rate{N: 3, Per: time.Hour}
		opt.VerifyPerIP = ratelimit.Rate{N: 2, Per: time.Minute}
		e := newEnv(t, db, opt)

		e.register("r@example.com")
		e.register("r@example.com")
		r := e.register("r@example.com")
		r.errorBody(t, 429, "RATE_LIMIT_ERROR")
		if ra := atoi(r.header.Get("Retry-After")); ra < 1 || ra > 3600 {
			t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
		}
		// The third call from this address went through the per-address
		// check: a fourth, for another e-mail, is over the per-IP limit.
		e.register("s@example.com").errorBody(t, 429, "RATE_LIMIT_ERROR")

		e.verify("r@example.com", "000000")
		e.verify("r@example.com", "000000")
		r = e.verify("r@example.com", "000000")
		r.errorBody(t, 429, "RATE_LIMIT_ERROR")
		if r.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
		e.Clock.Advance(time.Minute)
		if r := e.verify("r@example.com", "000000"); r.status != 400 {
			t.Errorf("after the window, verify is answered again: %d", r.status)
		}
	})
}

func TestMailFailureIsUnavailable(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, unlimited(), withMail(mail.Options{URL: "smtp://127.0.0.1:1?starttls=none"}))
		r := e.register("m@example.com")
		r.errorBody(t, 503, "SERVICE_UNAVAILABLE")
		if r.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	})
}
