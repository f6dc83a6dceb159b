// Package auth issues API keys through e-mailed one-time codes and
// authenticates requests that carry them.
//
// Neither codes nor keys are stored in clear: a code is kept as an HMAC
// under the server secret (a 6-digit code is too small a space for a plain
// hash), a key as its SHA-256. A code is valid for a limited time and a
// limited number of wrong attempts; a new registration replaces it.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/mail"
	"strings"
	"time"

	"github.com/quire-dev/quire"
	qmail "github.com/quire-dev/quire/internal/mail"
	"github.com/quire-dev/quire/internal/ratelimit"
)

// Store is what the service keeps; *store.DB is one.
type Store interface {
	PutCode(ctx context.Context, c quire.LoginCode) error
	AttemptCode(ctx context.Context, email string, now time.Time, maxAttempts int) (hash string, err error)
	RedeemCode(ctx context.Context, email, hash string, key quire.APIKey) error
	DeleteExpiredCodes(ctx context.Context, now time.Time) (int64, error)
	CreateKey(ctx context.Context, key quire.APIKey) error
	KeyByHash(ctx context.Context, hash string) (quire.APIKey, error)
	KeyByID(ctx context.Context, id string) (quire.APIKey, error)
	TouchKey(ctx context.Context, id string, now time.Time, every time.Duration) error
	Keys(ctx context.Context) ([]quire.APIKey, error)
	RevokeKey(ctx context.Context, id string, now time.Time) error
	ratelimit.Counter
	DeleteStaleLimits(ctx context.Context, cutoff time.Time) error
}

// Options are the rules of issuance.
type Options struct {
	KeyPrefix        string
	CodeTTL          time.Duration
	MaxAttempts      int
	RegisterPerEmail ratelimit.Rate
	RegisterPerIP    ratelimit.Rate
	VerifyPerIP      ratelimit.Rate
	Now              func() time.Time // time.Now when nil
	Logger           *slog.Logger     // slog.Default() when nil
}

// Service issues and checks API keys.
type Service struct {
	store   Store
	mail    qmail.Sender
	secret  []byte
	limiter *ratelimit.Limiter
	opt     Options
}

// New returns a service keeping its records in st, sending mail with m,
// keying code hashes with secret and counting attempts with limiter.
func New(st Store, m qmail.Sender, secret []byte, limiter *ratelimit.Limiter, opt Options) *Service {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	return &Service{store: st, mail: m, secret: secret, opt: opt, limiter: limiter}
}

// RegisterMessage is the answer to a registration, the same whether or not
// the address was seen before.
const RegisterMessage = "Check your email for verification code."

// Register e-mails a new one-time code to email, replacing any earlier one.
func (s *Service) Register(ctx context.Context, email, clientIP string) error {
	email, err := NormalizeEmail(email)
	if err != nil {
		return err
	}
	if err := s.limiter.Allow(ctx, "register per client address", clientIP, s.opt.RegisterPerIP); err != nil {
		return err
	}
	if err := s.limiter.Allow(ctx, "register per e-mail address", email, s.opt.RegisterPerEmail); err != nil {
		return err
	}
	code := newCode()
	now := s.opt.Now()
	if err := s.store.PutCode(ctx, quire.LoginCode{Email: email, Hash: s.hashCode(email, code),
		CreatedAt: now, ExpiresAt: now.Add(s.opt.CodeTTL)}); err != nil {
		return fmt.Errorf("store code: %w", err)
	}
	if err := s.mail.Send(ctx, codeMessage(email, code, s.opt.CodeTTL)); err != nil {
		s.opt.Logger.Error("verification mail not sent", "err", err) // the error names the relay, never the address or code
		return &quire.Error{Code: quire.CodeUnavailable, RetryAfter: time.Minute,
			Message: "The verification e-mail could not be sent. Try again later."}
	}
	return nil
}

func codeMessage(to, code string, ttl time.Duration) qmail.Message {
	return qmail.Message{
		To:      to,
		Subject: "Your verification code: " + code,
		Text: fmt.Sprintf("Your verification code is %s\n\nIt is valid for %d minutes. "+
			"If you did not ask for it, ignore this message.\n", code, int(ttl.Minutes())),
	}
}

// Verify checks code for email and, when it matches, consumes it and
// returns a new API key. This is the only time the key is seen.
func (s *Service) Verify(ctx context.Context, email, code, clientIP string) (string, error) {
	email, err := checkVerify(email, code)
	if err != nil {
		return "", err
	}
	if err := s.limiter.Allow(ctx, "verify per client address", clientIP, s.opt.VerifyPerIP); err != nil {
		return "", err
	}
	wrong := quire.Invalid(fmt.Sprintf("The code is wrong or has expired. After %d wrong attempts a code is dead: register again to get a new one.", s.opt.MaxAttempts),
		quire.Detail{Field: "code", Issue: "is wrong or expired"})
	stored, err := s.store.AttemptCode(ctx, email, s.opt.Now(), s.opt.MaxAttempts)
	if errors.Is(err, quire.ErrNotFound) {
		return "", wrong
	}
	if err != nil {
		return "", fmt.Errorf("check code: %w", err)
	}
	if !hmac.Equal([]byte(stored), []byte(s.hashCode(email, code))) {
		return "", wrong
	}
	key, rec := s.newKey(email)
	if err := s.store.RedeemCode(ctx, email, stored, rec); errors.Is(err, quire.ErrNotFound) {
		return "", wrong // a concurrent verify used it first
	} else if err != nil {
		return "", fmt.Errorf("issue key: %w", err)
	}
	return key, nil
}

// CreateKey issues a key for email without a code (operator CLI).
func (s *Service) CreateKey(ctx context.Context, email string) (string, quire.APIKey, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return "", quire.APIKey{}, err
	}
	key, rec := s.newKey(email)
	return key, rec, s.store.CreateKey(ctx, rec)
}

func (s *Service) newKey(email string) (string, quire.APIKey) {
	key := newKey(s.opt.KeyPrefix)
	return key, quire.APIKey{ID: newID(), Email: email, Prefix: shownPrefix(key),
		Hash: hashKey(key), CreatedAt: s.opt.Now()}
}

// Authenticate returns the active key record for the bearer token key.
// Missing, malformed, unknown and revoked keys all give the same
// AUTHENTICATION_ERROR kind, with a message saying which.
func (s *Service) Authenticate(ctx context.Context, key string) (quire.APIKey, error) {
	if key == "" {
		return quire.APIKey{}, quire.Errorf(quire.CodeAuthentication, "An API key is required: send Authorization: Bearer <key>.")
	}
	if !wellFormed(key) {
		return quire.APIKey{}, quire.Errorf(quire.CodeAuthentication, "The API key is malformed.")
	}
	rec, err := active(s.store.KeyByHash(ctx, hashKey(key)))
	if err != nil {
		return rec, err
	}
	// Record the use at most once a minute: a write per request would
	// serialise every authenticated request behind the database's writer.
	// It is bookkeeping: failing to record it does not fail the request.
	if now := s.opt.Now(); now.Sub(rec.LastUsedAt) >= time.Minute {
		if err := s.store.TouchKey(ctx, rec.ID, now, time.Minute); err != nil {
			s.opt.Logger.Warn("last use of an API key not recorded", "key_id", rec.ID, "err", err)
		}
	}
	return rec, nil
}

// Recheck returns the record of key id, which authenticated a request
// earlier (a job's), with the error Authenticate would give the key now:
// a key revoked or gone since does not run what it submitted.
func (s *Service) Recheck(ctx context.Context, id string) (quire.APIKey, error) {
	return active(s.store.KeyByID(ctx, id))
}

// active passes on a key record found only when the key is still valid.
func active(rec quire.APIKey, err error) (quire.APIKey, error) {
	if errors.Is(err, quire.ErrNotFound) {
		return rec, quire.Errorf(quire.CodeAuthentication, "The API key is not valid.")
	}
	if err != nil {
		return rec, fmt.Errorf("look up key: %w", err)
	}
	if !rec.Active() {
		return rec, quire.Errorf(quire.CodeAuthentication, "The API key has been revoked.")
	}
	return rec, nil
}

// Keys lists every issued key (records only: keys are never stored).
func (s *Service) Keys(ctx context.Context) ([]quire.APIKey, error) { return s.store.Keys(ctx) }

// Revoke revokes key id; quire.ErrNotFound when there is none.
func (s *Service) Revoke(ctx context.Context, id string) error {
	return s.store.RevokeKey(ctx, id, s.opt.Now())
}

// Cleanup deletes expired codes and finished rate-limit windows.
func (s *Service) Cleanup(ctx context.Context) error {
	now := s.opt.Now()
	if _, err := s.store.DeleteExpiredCodes(ctx, now); err != nil {
		return err
	}
	longest := max(s.opt.RegisterPerEmail.Per, s.opt.RegisterPerIP.Per, s.opt.VerifyPerIP.Per)
	return s.store.DeleteStaleLimits(ctx, now.Add(-longest))
}

func (s *Service) hashCode(email, code string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte("code\x00" + email + "\x00" + code))
	return hex.EncodeToString(m.Sum(nil))
}

func newCode() string {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return fmt.Sprintf("%06d", n.Int64())
}

// checkVerify validates both query fields, reporting every bad one.
func checkVerify(email, code string) (string, error) {
	var details []quire.Detail
	email, err := NormalizeEmail(email)
	var qe *quire.Error
	if errors.As(err, &qe) {
		details = append(details, qe.Details...)
	}
	switch {
	case code == "":
		details = append(details, quire.Detail{Field: "code", Issue: "is required"})
	case !isCode(code):
		details = append(details, quire.Detail{Field: "code", Issue: "must be the 6 digits from the e-mail"})
	}
	if len(details) > 0 {
		return "", quire.Invalid("The request is not valid.", details...)
	}
	return email, nil
}

func isCode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// NormalizeEmail checks the syntax of an e-mail address (a bare
// addr-spec, at most 254 characters, a domain with a dot) and returns it
// lowercased, the form under which codes and keys are recorded.
func NormalizeEmail(s string) (string, error) {
	bad := func(issue string) error {
		return quire.Invalid("The e-mail address is not valid.", quire.Detail{Field: "email", Issue: issue})
	}
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", bad("is required")
	case len(s) > 254:
		return "", bad("must be at most 254 characters")
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", bad("is not a valid e-mail address")
	}
	local, domain, _ := strings.Cut(s, "@")
	if len(local) > 64 || !strings.Contains(domain, ".") || strings.HasPrefix(domain, "[") ||
		strings.HasSuffix(domain, ".") || strings.Contains(domain, "..") {
		return "", bad("is not a valid e-mail address")
	}
	return strings.ToLower(s), nil
}
