// Package client is the Go SDK for quire's HTTP API: API keys by e-mailed
// code, signing, conversion, signature verification, usage reports and
// health.
//
// A Client is created once with the base address of the service and reused;
// its methods are safe for concurrent use and take a context that bounds
// and cancels each request:
//
//	c := client.New("https://quire.example.com", client.WithAPIKey(key))
//	res, err := c.Sign(ctx, client.SignRequest{
//		Document:   client.DocumentFromBytes(pdf),
//		Signer:     client.Signer{Email: "ann@example.com", Name: "Ann Example"},
//		AuditTrail: []client.AuditEvent{{Type: "submit", Timestamp: time.Now()}},
//	})
//
// # Errors
//
// Every answer of the service outside 2xx comes back as an *Error carrying
// the HTTP status, the error code of the contract (VALIDATION_ERROR,
// RATE_LIMIT_ERROR, ...), the message, the request id to quote in support
// requests, the fields at fault, and how long to wait before retrying.
// Use errors.As to reach it. Failures that never reached the service
// (network errors, a cancelled context) are returned as they are, wrapped
// with the operation, so errors.Is(err, context.Canceled) works. The API
// key never appears in an error or in the printed form of a Client.
//
// # Field names the contract leaves open
//
// The JSON shapes of sign (SignRequest, SignResponse) follow sections
// 2.1-2.6 of the service contract, and the error body, register, verify,
// usage and health follow quire's design notes and its OpenAPI document.
// For signature verification the design notes give only the outline; the
// field names used here mirror the server's contract: POST /v1/verify
// answers {valid, reason?, signer, document, signers: [{name, email, subject, signingTime, eventId, signerEmail,
// coversWholeDocument, trusted, valid, reason?}]} and GET /v1/verify/key
// answers {version, algorithm, publicKey, fingerprint, validFrom, validTo, issuer,
// pem, fingerprintSha256, notBefore, notAfter, issuerDn, subject}.
// Fields the server adds beyond these are ignored.
package client
