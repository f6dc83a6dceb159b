package mailtest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"unicode/utf8"
)

// parseMessage decodes a single-part text/plain message, the only kind quire
// sends. Anything else is an error rather than a guess.
func parseMessage(raw []byte) (Received, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return Received{}, err
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return Received{}, fmt.Errorf("subject: %w", err)
	}
	text, err := decodeText(msg.Header, msg.Body)
	if err != nil {
		return Received{}, err
	}
	return Received{Subject: subject, Text: text, Raw: raw}, nil
}

// decodeText checks the content type and undoes the transfer encoding.
func decodeText(h mail.Header, body io.Reader) (string, error) {
	if ct := h.Get("Content-Type"); ct != "" {
		mediaType, params, err := mime.ParseMediaType(ct)
		if err != nil {
			return "", fmt.Errorf("content type: %w", err)
		}
		if mediaType != "text/plain" {
			return "", fmt.Errorf("content type %s is not text/plain", mediaType)
		}
		if cs := params["charset"]; cs != "" && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
			return "", fmt.Errorf("charset %s is not utf-8", cs)
		}
	}
	switch cte := strings.ToLower(h.Get("Content-Transfer-Encoding")); cte {
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "", "7bit", "8bit":
	default:
		return "", fmt.Errorf("transfer encoding %s is not supported", cte)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return "", fmt.Errorf("body: %w", err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("body is not valid UTF-8")
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), nil
}
