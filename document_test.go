package quire_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/quire-dev/quire"
)

// TestInvalidRequest: a field that did not decode is reported for that
// alone, with the rules' findings about every other field, sorted.
func TestInvalidRequest(t *testing.T) {
	malformed := []quire.Detail{{Field: "signer.email", Issue: "must be a string"}, {Field: "document", Issue: "is required"}}
	found := []quire.Detail{{Field: "signer.email", Issue: "is required"}, {Field: "document", Issue: "must hold exactly one of base64 and url"},
		{Field: "document.url", Issue: "x"}, {Field: "signer", Issue: "y"}, {Field: "signer.name", Issue: "is required"}, {Field: "auditTrail", Issue: "is required"}}
	err := quire.InvalidRequest("The sign request is not valid.", malformed, found)
	var qe *quire.Error
	want := []quire.Detail{{Field: "auditTrail", Issue: "is required"}, {Field: "document", Issue: "is required"},
		{Field: "signer.email", Issue: "must be a string"}, {Field: "signer.name", Issue: "is required"}}
	if !errors.As(err, &qe) || qe.Code != quire.CodeValidation || qe.Message != "The sign request is not valid." || !reflect.DeepEqual(qe.Details, want) {
		t.Errorf("InvalidRequest = %#v\nwant details %v", err, want)
	}
	if err := quire.InvalidRequest("m", nil, nil); err != nil {
		t.Errorf("nothing wrong: %v", err)
	}
	if p := (quire.Document{URL: "https://example.com/a.pdf"}).Problems(); p != nil {
		t.Errorf("a URL alone: %v", p)
	}
	for _, d := range []quire.Document{{}, {Bytes: []byte("%PDF"), URL: "https://example.com/a.pdf"}} {
		if p := d.Problems(); len(p) != 1 || p[0].Field != "document" {
			t.Errorf("%+v: %v", d, p)
		}
	}
}
