package pdfsign

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// Timestamper obtains an RFC 3161 time-stamp token for a SHA-256 digest.
// It is an interface so that tests and other transports can stand in for
// the HTTP client.
type Timestamper interface {
	// Timestamp returns the DER time-stamp token (a CMS ContentInfo).
	Timestamp(ctx context.Context, sha256Digest []byte) ([]byte, error)
}

// TSAClient asks an RFC 3161 time-stamping authority over HTTP.
type TSAClient struct {
	URL    string
	Client *http.Client // nil: a client with a 30-second timeout
}

// maxTSAResponse bounds what is read from a TSA.
const maxTSAResponse = 1 << 20

// Timestamp implements Timestamper. The token is checked to answer this
// request (digest and nonce) before it is returned. Errors name the TSA by
// its scheme and host only: the URL may carry credentials in its user
// information, path or query, and errors end up in logs.
func (c *TSAClient) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	nonce, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, err
	}
	tsa := "TSA " + safeURL(c.URL)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(timeStampRequest(digest, nonce)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tsa, withoutURL(err))
	}
	req.Header.Set("Content-Type", "application/timestamp-query")
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tsa, withoutURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTSAResponse))
	if err != nil {
		return nil, fmt.Errorf("%s: reading response: %w", tsa, withoutURL(err))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP status %s", tsa, resp.Status)
	}
	token, err := timeStampToken(body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tsa, err)
	}
	info, err := parseTimeStampToken(token)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tsa, err)
	}
	if !bytes.Equal(info.digest, digest) || info.nonce == nil || info.nonce.Cmp(nonce) != 0 {
		return nil, fmt.Errorf("%s: token does not answer the request (digest or nonce differ)", tsa)
	}
	return token, nil
}

// safeURL shows a TSA URL as scheme://host[:port] only: no user
// information, path or query, any of which may hold a credential.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

// withoutURL drops the *url.Error wrapper that net/http puts around its
// errors: its text quotes the whole URL (the client strips a password from
// it, but not a user name, a path or a query).
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// timeStampRequest encodes TimeStampReq (RFC 3161, 2.4.1) asking for the
// TSA certificate to be included, so the token can be checked offline.
func timeStampRequest(digest []byte, nonce *big.Int) []byte {
	return derOf(func(b *cryptobyte.Builder) {
		b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
			b.AddASN1Int64(1)
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				addAlgorithm(b, oidSHA256, false)
				b.AddASN1OctetString(digest)
			})
			b.AddASN1BigInt(nonce)
			b.AddASN1Boolean(true)
		})
	})
}

// timeStampToken extracts the token from a TimeStampResp (RFC 3161,
// 2.4.2), failing unless the status is granted (0) or grantedWithMods (1).
func timeStampToken(resp []byte) ([]byte, error) {
	in := cryptobyte.String(resp)
	var r, status cryptobyte.String
	var code int64
	if !in.ReadASN1(&r, cbasn1.SEQUENCE) || !r.ReadASN1(&status, cbasn1.SEQUENCE) || !status.ReadASN1Integer(&code) {
		return nil, errors.New("malformed TimeStampResp")
	}
	if code != 0 && code != 1 {
		return nil, fmt.Errorf("time stamp refused with PKIStatus %d", code)
	}
	var token cryptobyte.String
	if !r.ReadASN1Element(&token, cbasn1.SEQUENCE) {
		return nil, errors.New("TimeStampResp without a token")
	}
	return token, nil
}

// tstInfo is the part of a TSTInfo (RFC 3161, 2.4.2) that is checked.
type tstInfo struct {
	hashAlg asn1.ObjectIdentifier // of the message imprint
	digest  []byte
	genTime time.Time
	nonce   *big.Int
}

// parseTimeStampToken reads the TSTInfo of a token. The token's own CMS
// signature is checked by verifier.timestamp where that matters.
func parseTimeStampToken(token []byte) (tstInfo, error) {
	sd, err := parseSignedData(token)
	if err != nil {
		return tstInfo{}, fmt.Errorf("time-stamp token: %w", err)
	}
	if !sd.contentType.Equal(oidTSTInfo) || sd.content == nil {
		return tstInfo{}, errors.New("time-stamp token does not hold a TSTInfo")
	}
	return parseTSTInfo(sd.content)
}

func parseTSTInfo(der []byte) (tstInfo, error) {
	in := cryptobyte.String(der)
	var s, imprint, alg cryptobyte.String
	var version int64
	var policy asn1.ObjectIdentifier
	var t tstInfo
	var genTime []byte
	serial := new(big.Int)
	ok := in.ReadASN1(&s, cbasn1.SEQUENCE) && s.ReadASN1Integer(&version) &&
		s.ReadASN1ObjectIdentifier(&policy) && s.ReadASN1(&imprint, cbasn1.SEQUENCE) &&
		imprint.ReadASN1(&alg, cbasn1.SEQUENCE) && alg.ReadASN1ObjectIdentifier(&t.hashAlg) &&
		imprint.ReadASN1Bytes(&t.digest, cbasn1.OCTET_STRING) &&
		s.ReadASN1Integer(serial) && s.ReadASN1Bytes(&genTime, cbasn1.GeneralizedTime)
	if !ok {
		return tstInfo{}, errors.New("malformed TSTInfo")
	}
	// Unlike cryptobyte's reader, this accepts the fractional seconds
	// that many TSAs send.
	var err error
	if t.genTime, err = time.Parse("20060102150405.999999999Z", string(genTime)); err != nil {
		return tstInfo{}, fmt.Errorf("TSTInfo genTime: %w", err)
	}
	s.SkipOptionalASN1(cbasn1.SEQUENCE) // accuracy
	s.SkipOptionalASN1(cbasn1.BOOLEAN)  // ordering
	if s.PeekASN1Tag(cbasn1.INTEGER) {
		t.nonce = new(big.Int)
		if !s.ReadASN1Integer(t.nonce) {
			return tstInfo{}, errors.New("malformed TSTInfo nonce")
		}
	}
	return t, nil
}

// TimestampAnchor checks the CMS signature of a time-stamp token and
// returns the certificate at the top of the chain the token carries: its
// self-signed root when it carries one, else the highest certificate
// whose issuer it does not carry (the TSA's own, when it carries only
// that). The service trusts the time-stamps of the authorities it was
// configured with through these (learned as their tokens arrive).
func TimestampAnchor(token []byte) (*x509.Certificate, error) {
	sd, err := parseSignedData(token)
	if err != nil {
		return nil, fmt.Errorf("time-stamp token: %w", err)
	}
	cert, err := sd.signerCert()
	if err != nil {
		return nil, fmt.Errorf("time-stamp token: %w", err)
	}
	h, err := sd.digestHash()
	if err != nil {
		return nil, fmt.Errorf("time-stamp token: %w", err)
	}
	hh := h.New()
	hh.Write(sd.content)
	if _, err := sd.verify(hh.Sum(nil), cert); err != nil {
		return nil, fmt.Errorf("time-stamp token: %w", err)
	}
	for range len(sd.certs) + 1 {
		issuer := issuerOf(cert, sd.certs)
		if issuer == nil || bytes.Equal(issuer.Raw, cert.Raw) {
			return cert, nil
		}
		cert = issuer
	}
	return cert, nil
}
