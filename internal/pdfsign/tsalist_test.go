package pdfsign

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quire-dev/quire/internal/pdf/pdftest"
)

// deadTSAs are loopback authorities that fail in each way a TSA fails:
// nothing listening, no answer in time, and an answer that is not a token.
func deadTSAs(t *testing.T) map[string]string {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	hung := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(hung) }) // runs first: frees the handler so Close returns
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write([]byte("not a TimeStampResp"))
	}))
	t.Cleanup(garbage.Close)
	return map[string]string{"refused": closed.URL, "timeout": slow.URL, "garbage": garbage.URL}
}

func TestTSAListFailsOver(t *testing.T) {
	good := pdftest.NewTSA(t)
	for name, dead := range deadTSAs(t) {
		t.Run(name, func(t *testing.T) {
			l := NewTSAList([]string{dead, good.URL}, 500*time.Millisecond)
			token, err := l.Timestamp(context.Background(), make([]byte, 32))
			if err != nil || token == nil {
				t.Fatalf("timestamp: %v", err)
			}
			st := l.States()
			if st[0].State != "failing" || st[0].LastFailure == nil || st[0].LastError == "" || st[0].LastSuccess != nil {
				t.Errorf("first TSA: %+v", st[0])
			}
			if st[1].State != "ok" || st[1].LastSuccess == nil || st[1].LastFailure != nil {
				t.Errorf("second TSA: %+v", st[1])
			}
		})
	}
}

func TestTSAListAllDown(t *testing.T) {
	dead := deadTSAs(t)
	urls := []string{dead["refused"], dead["timeout"], dead["garbage"]}
	l := NewTSAList(urls, 300*time.Millisecond)
	_, err := l.Timestamp(context.Background(), make([]byte, 32))
	if !errors.Is(err, ErrTSAUnavailable) {
		t.Fatalf("error %v, want ErrTSAUnavailable", err)
	}
	for i, s := range l.States() {
		if s.State != "failing" || !strings.Contains(err.Error(), s.URL) {
			t.Errorf("TSA %d: %+v; error %v", i, s, err)
		}
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the hung TSA's timeout is not among the causes: %v", err)
	}
}

func TestTSAListStopsWhenCallerGivesUp(t *testing.T) {
	good := pdftest.NewTSA(t)
	l := NewTSAList([]string{deadTSAs(t)["timeout"], good.URL}, time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := l.Timestamp(ctx, make([]byte, 32)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the caller's deadline", err)
	}
	if st := l.States(); st[0].State != "unknown" || st[1].State != "unknown" {
		t.Errorf("states blame a TSA for the caller's deadline: %+v", st)
	}
}

func TestSplitTSAURLs(t *testing.T) {
	got := SplitTSAURLs(" http://a/tsa, http://b/x?y=1\nhttp://c ,")
	want := []string{"http://a/tsa", "http://b/x?y=1", "http://c"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
