package client_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/quire-dev/quire/client"
)

// fakeQuire stands in for a quire server so that the example runs
// anywhere: it refuses an invalid e-mail address and "signs" by returning
// a fixed PDF, with the answers' shapes of the real service.
func fakeQuire() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-1")
		switch r.URL.Path {
		case "/v1/auth/register":
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"code": "VALIDATION_ERROR", "error": "Bad Request",
				"message": "The e-mail address is not valid.", "requestId": "req-1",
				"details": []map[string]string{{"field": "email", "issue": "is not a valid e-mail address"}}})
		case "/v1/sign":
			json.NewEncoder(w).Encode(map[string]any{"document": map[string]string{
				"base64": base64.StdEncoding.EncodeToString([]byte("%PDF-1.7 ...")), "contentType": "application/pdf"}})
		}
	}))
}

func Example() {
	srv := fakeQuire()
	defer srv.Close()
	ctx := context.Background()

	c := client.New(srv.URL, client.WithAPIKey("sd_example"))

	// Answers outside 2xx are *client.Error values.
	err := c.Register(ctx, "not-an-address")
	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.Status, e.Code, e.Details[0].Field, e.RequestID)
	}
	fmt.Println(err)

	res, err := c.Sign(ctx, client.SignRequest{
		Document: client.DocumentFromBytes([]byte("%PDF-1.7 the contract")),
		Signer:   client.Signer{Email: "ann@example.com", Name: "Ann Example"},
		AuditTrail: []client.AuditEvent{
			{Type: client.AuditSubmit, Timestamp: time.Date(2026, 11, 22, 9, 1, 0, 0, time.UTC)},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	pdf, err := res.PDF()
	fmt.Printf("%s %q %v\n", res.Document.ContentType, pdf[:8], err)
	// Output:
	// 400 VALIDATION_ERROR email req-1
	// quire: GET /v1/auth/register: 400 VALIDATION_ERROR: The e-mail address is not valid. (email is not a valid e-mail address) [request id req-1]
	// application/pdf "%PDF-1.7" <nil>
}
