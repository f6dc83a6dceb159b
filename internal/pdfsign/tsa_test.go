package pdfsign

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/asn1"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"
)

// tsaServer is a real RFC 3161 responder on loopback: it parses the
// TimeStampReq, builds a TSTInfo and signs it with the CMS code.
func tsaServer(t *testing.T) *httptest.Server {
	tsa := testIdentity(t)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		in := cryptobyte.String(body)
		var req, imprint, alg cryptobyte.String
		var version int64
		var digest []byte
		nonce := new(big.Int)
		if r.Header.Get("Content-Type") != "application/timestamp-query" ||
			!in.ReadASN1(&req, cbasn1.SEQUENCE) || !req.ReadASN1Integer(&version) ||
			!req.ReadASN1(&imprint, cbasn1.SEQUENCE) || !imprint.ReadASN1(&alg, cbasn1.SEQUENCE) ||
			!imprint.ReadASN1Bytes(&digest, cbasn1.OCTET_STRING) || !req.ReadASN1Integer(nonce) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		tst := derOf(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1Int64(1)
				b.AddASN1ObjectIdentifier(asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 99999, 1})
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
					addAlgorithm(b, oidSHA256, false)
					b.AddASN1OctetString(digest)
				})
				b.AddASN1Int64(time.Now().UnixNano())
				b.AddASN1GeneralizedTime(time.Now().UTC().Truncate(time.Second))
				b.AddASN1BigInt(nonce)
			})
		})
		d := sha256.Sum256(tst)
		token, err := signCMS(r.Context(), cmsSigner{key: tsa.Key, cert: tsa.Certificate, chain: tsa.Chain},
			cmsContent{contentType: oidTSTInfo, digest: d[:], embedded: tst}, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp := derOf(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { b.AddASN1Int64(0) })
				b.AddBytes(token)
			})
		})
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write(resp)
	}))
}

func TestTimestampedSignature(t *testing.T) {
	requireValidators(t)
	srv := tsaServer(t)
	defer srv.Close()
	id := testIdentity(t)
	out, _, err := Sign(context.Background(), testPDF(t, 1, false, 0), id, Options{Timestamper: &TSAClient{URL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(out, id.Roots())
	if err != nil || !res.Valid || res.Signers[0].TimestampTime == nil {
		t.Fatalf("verify: %v %+v", err, res)
	}
	report := pdfsig(t, nssDB(t, id), out)
	if !strings.Contains(report, "Signature is Valid.") {
		t.Fatalf("pdfsig:\n%s", report)
	}
	if printed := opensslVerify(t, id, out); !strings.Contains(printed, "id-smime-aa-timeStampToken") {
		t.Fatalf("no timeStampToken attribute:\n%s", printed)
	}
	t.Logf("timestamp %v", res.Signers[0].TimestampTime)
}

func TestTSARefusesWrongAnswer(t *testing.T) {
	srv := tsaServer(t)
	defer srv.Close()
	c := &TSAClient{URL: srv.URL + "/x"}
	token, err := c.Timestamp(context.Background(), make([]byte, 32))
	if err != nil || token == nil {
		t.Fatalf("timestamp: %v", err)
	}
	// A token for one digest must not pass as the token of another.
	other := sha256.Sum256([]byte("other signature"))
	if _, err := (&verifier{}).timestamp(token, func(crypto.Hash) []byte { return other[:] }); err == nil {
		t.Fatal("token accepted for a different signature")
	}
}

func TestTSAErrorsHideURLCredentials(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer failing.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close() // nothing listens there any more
	for _, base := range []string{failing.URL, closedURL} {
		u := strings.Replace(base, "http://", "http://alice:s3cret@", 1) + "/tsa/key-PATHSECRET?token=QUERYSECRET"
		_, err := (&TSAClient{URL: u}).Timestamp(context.Background(), make([]byte, 32))
		if err == nil {
			t.Fatalf("%s: no error", base)
		}
		msg := err.Error()
		for _, secret := range []string{"alice", "s3cret", "PATHSECRET", "QUERYSECRET"} {
			if strings.Contains(msg, secret) {
				t.Errorf("error shows %q: %s", secret, msg)
			}
		}
		if !strings.Contains(msg, strings.TrimPrefix(base, "http://")) {
			t.Errorf("error does not name the TSA host: %s", msg)
		}
	}
	if _, err := (&TSAClient{URL: "http://a b/?token=QUERYSECRET"}).Timestamp(context.Background(), make([]byte, 32)); err == nil ||
		strings.Contains(err.Error(), "QUERYSECRET") {
		t.Errorf("unparsable URL: %v", err)
	}
}
