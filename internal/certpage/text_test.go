package certpage

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestCleanText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		max      int
	}{
		{"  Anna\t\n Karenina  ", "Anna Karenina", 50},
		{"a\x00b\x1bc\u0085d\u007f", "abc d", 50},                      // NEL is a line break: a space
		{"abc\u202edef\u2066g\u200eh", "abcdefgh", 50},                 // bidi controls removed
		{"\u0644\u200d\u0627 \u200c", "\u0644\u200d\u0627 \u200c", 50}, // ZWJ and ZWNJ kept
		{"\xff\xfeok", "\ufffd\ufffdok", 50},
		{"e" + strings.Repeat("\u0301", 9), "e" + strings.Repeat("\u0301", maxMarksInARow), 50},
		{"abcdef ghi", "abcdef…", 7},
		{"abc", "abc", 3},
	} {
		if got, _ := cleanText(tc.in, tc.max); got != tc.want {
			t.Errorf("cleanText(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
	if got := cleanShort(strings.Repeat("x", 10), 4); got != "xxxx… (shortened: first 4 of 10 characters)" {
		t.Errorf("cleanShort: %q", got)
	}
}

func TestFlattenData(t *testing.T) {
	t.Parallel()
	rows, omitted := flattenData(map[string]any{
		"value":   "Anna",
		"b":       map[string]any{"c": true, "d": []any{1.5, nil}},
		"fieldId": "name",
		"empty":   map[string]any{},
		"sig":     "data:image/png;base64,AAAA",
	}, fieldChangeKeys)
	var got []string
	for _, r := range rows {
		got = append(got, r.key+"="+r.value+r.image)
	}
	want := "fieldId=name value=Anna b.c=true b.d[0]=1.5 b.d[1]=null empty={} sig=data:image/png;base64,AAAA"
	if strings.Join(got, " ") != want || omitted != 0 {
		t.Errorf("got %q (%d omitted), want %q", strings.Join(got, " "), omitted, want)
	}
}

// FuzzRender renders arbitrary text as every caller-supplied field: it must
// give a PDF, never an error or a panic.
func FuzzRender(f *testing.F) {
	for _, s := range scriptNames {
		f.Add(s)
	}
	f.Add("a\u202e\u0301\u0301\u0301\u0301\u0301\u0301b\x00")
	f.Add("data:image/png;base64,iVBORw0KGgo=")
	r := testRenderer(f)
	f.Fuzz(func(t *testing.T, s string) {
		d := Data{
			DocumentSHA256: s, EventID: s, SignedAt: time.Now(),
			Signer:   Signer{Name: s, Email: s, IP: s, UserAgent: s},
			Events:   []Event{{Type: s, Data: map[string]any{s: s, "v": s}}},
			Metadata: map[string]any{s: []any{s}},
		}
		pdf, _, err := r.Render(d, a6)
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF-1.7")) || !bytes.HasSuffix(pdf, []byte("%%EOF\n")) {
			t.Fatalf("Render(%q): %v", s, err)
		}
	})
}
