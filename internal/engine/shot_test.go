package engine

import (
	"errors"
	"slices"
	"testing"

	"github.com/quire-dev/quire"
)

// A screenshot's options and the media type are validated with the
// others, each bad one named by Gotenberg's field.
func TestShotAndMediaValidate(t *testing.T) {
	for _, c := range []struct {
		o    JobOptions
		want []string
	}{
		{JobOptions{Shot: Shot{Format: "png", Width: 800, Height: 600}}, nil},
		{JobOptions{Shot: Shot{Format: "webp", Width: MaxShotWidth, Height: MaxShotHeight, Quality: 100}, Media: "screen"}, nil},
		{JobOptions{Shot: Shot{Width: -1}}, nil}, // no Format: a print, the rest unread
		{JobOptions{Shot: Shot{Format: "gif", Width: 0, Height: MaxShotHeight + 1, Quality: 101}},
			[]string{"format", "width", "height", "quality"}},
		{JobOptions{Shot: Shot{Format: "jpeg", Width: MaxShotWidth + 1, Height: 1, Quality: -1}}, []string{"width", "quality"}},
		{JobOptions{Media: "tv"}, []string{"emulatedMediaType"}},
	} {
		err := c.o.Validate(FromHTML, ToPDF)
		if fields := detailFields(err); !slices.Equal(fields, c.want) || (err == nil) != (c.want == nil) {
			t.Errorf("%+v: %v, want the fields %v", c.o, err, c.want)
		}
	}
}

// detailFields are the fields that err's details name, in their order.
func detailFields(err error) []string {
	var fields []string
	var qe *quire.Error
	if errors.As(err, &qe) {
		for _, d := range qe.Details {
			fields = append(fields, d.Field)
		}
	}
	return fields
}
