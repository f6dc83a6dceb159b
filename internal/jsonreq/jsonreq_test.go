package jsonreq

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/quire-dev/quire"
)

func TestUnknownField(t *testing.T) {
	allowed := []string{"document", "fields", "options"}
	for name, want := range map[string]string{
		"optoins": "is not a known field; did you mean options?",
		"doc":     "is not a known field; did you mean document?",
		"zzz":     "is not a known field (known: document, fields, options)",
	} {
		if got := UnknownField(name, allowed); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestValidatorCollectsEverything(t *testing.T) {
	var v Validator
	m := v.Object("", json.RawMessage(`{"document":{"base64":"data:text/plain,x"},"fieldz":1}`), []string{"document", "fields"})
	data, url := v.Document("document", m["document"], 10)
	if data != nil || url != "" {
		t.Errorf("document %q %q", data, url)
	}
	v.Document("other", json.RawMessage(`{"base64":"`+"QUJDREVGR0hJSktM"+`"}`), 10) // 12 bytes
	err := v.Err("The request is not valid.")
	var qe *quire.Error
	if !errors.As(err, &qe) || qe.Code != quire.CodeValidation || len(qe.Details) != 3 {
		t.Fatalf("%v", err)
	}
	want := []string{"document.base64", "fieldz", "other.base64"} // sorted by field
	for i, d := range qe.Details {
		if d.Field != want[i] {
			t.Errorf("detail %d: %+v, want field %s", i, d, want[i])
		}
	}
	var ok Validator
	if b := ok.Base64("f", " QUJD\nREVG ", 10); string(b) != "ABCDEF" || !ok.OK() {
		t.Errorf("base64 with white space: %q %v", b, ok.Err("x"))
	}
}
