package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// onePagePDF is a small valid PDF with a classic xref table.
func onePagePDF(text string) []byte {
	stream := "BT /F1 18 Tf 72 760 Td (" + text + ") Tj ET"
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	x := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, x)
	return b.Bytes()
}

func TestSignAndVerifyCLI(t *testing.T) {
	data := t.TempDir()
	in := filepath.Join(data, "in.pdf")
	os.WriteFile(in, onePagePDF("CLI agreement"), 0o644)
	out := filepath.Join(data, "out.pdf")
	if o, err := runCLI(t, data, nil, "sign", in, "-o", out, "--name", "Olga Operator", "--email", "olga@example.com", "--event-id", "cli-evt"); err != nil {
		t.Fatalf("sign: %v\n%s", err, o)
	}
	o, err := runCLI(t, data, nil, "verify", out)
	var res struct {
		Valid   bool
		Signers []struct{ EventID string }
	}
	if err != nil || json.Unmarshal([]byte(o), &res) != nil || !res.Valid || len(res.Signers) != 1 || res.Signers[0].EventID != "cli-evt" {
		t.Fatalf("verify (%v):\n%s", err, o)
	}
	signed, _ := os.ReadFile(out)
	signed[100] ^= 1
	os.WriteFile(out, signed, 0o644)
	if o, err := runCLI(t, data, nil, "verify", out); err == nil || !strings.Contains(o, `"valid": false`) {
		t.Errorf("a tampered file verifies (%v):\n%s", err, o)
	}
	if _, err := runCLI(t, data, nil, "sign", in); err == nil {
		t.Error("sign without -o and signer succeeded")
	}
}
