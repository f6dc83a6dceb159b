package pdfsign

import (
	"context"
	"crypto"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

func TestTimestampedSignature(t *testing.T) {
	requireValidators(t)
	tsa := pdftest.NewTSA(t)
	id := testIdentity(t)
	out, _, err := signBytes(context.Background(), pdftest.Generated(1, false, 0), id, Options{Timestamper: &TSAClient{URL: tsa.URL}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Verify(out, id.Roots(), pdf.Limits{})
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
	c := &TSAClient{URL: pdftest.NewTSA(t).URL + "/x"}
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
