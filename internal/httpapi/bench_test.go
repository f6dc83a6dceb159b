package httpapi_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quire-dev/quire/internal/httpapi/apitest"
	"github.com/quire-dev/quire/internal/store/storetest"
)

// BenchmarkCollect measures the intake path in process, without the
// network: middleware, decoding, validation, the hand-off to the writer
// and the group commit to SQLite, for 64 concurrent callers (on 2
// processors), each request a new document. allocs/op, which includes
// building the request, is what the garbage collector is left with;
// make bench measures the whole over TCP.
func BenchmarkCollect(b *testing.B) {
	s := apitest.Start(b, storetest.Open(b, storetest.URL(b, "sqlite")), apitest.Config{})
	var n atomic.Int64
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest("POST", "/v1/collect", strings.NewReader(deployedPayload(fmt.Sprintf("HASH-B%d", n.Add(1)))))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			s.API.ServeHTTP(w, r)
			if w.Code != 204 {
				b.Errorf("collect = %d %s", w.Code, w.Body)
				return
			}
		}
	})
}
