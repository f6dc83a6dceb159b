package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/quire-dev/quire"
)

// Shot asks a browser for an image of a page instead of its print
// (Gotenberg's screenshot routes): the viewport it is laid out in, in
// CSS pixels, and whether the image is that viewport (Clip) or the whole
// page, as tall as its content.
type Shot struct {
	Format           string // one of ShotFormats; "": a print, no image
	Width, Height    int    // the viewport
	Clip             bool
	Quality          int  // jpeg and webp, 0 to 100 (png has none); 0: the browser's default
	OmitBackground   bool // transparent where the page paints no background (png, webp)
	OptimizeForSpeed bool // a faster encoding, a larger image
	// DeviceScaleFactor is the device pixels per CSS pixel of the image,
	// from MinDeviceScale to MaxDeviceScale; 0 for 1.
	DeviceScaleFactor float64
}

// ShotFormats are the formats of a Shot, and their media types.
var ShotFormats = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}

// Bounds of a Shot: the viewport's width and height, and the height of an
// image of a whole page (beyond: 422, ErrUnprocessable).
const (
	MaxShotWidth  = 4096
	MaxShotHeight = 16384
)

// Bounds of Shot.DeviceScaleFactor; the image's pixels are also at most
// those of the largest image at scale 1 (MaxShotWidth by MaxShotHeight).
const (
	MinDeviceScale = 0.25
	MaxDeviceScale = 4.0
)

// details name what is wrong with s, by Gotenberg's field names.
func (s Shot) details() []quire.Detail {
	if s.Format == "" {
		return nil
	}
	var d []quire.Detail
	bad := func(field, issue string, a ...any) {
		d = append(d, quire.Detail{Field: field, Issue: fmt.Sprintf(issue, a...)})
	}
	if _, ok := ShotFormats[s.Format]; !ok {
		bad("format", "must be one of %s", strings.Join(slices.Sorted(maps.Keys(ShotFormats)), ", "))
	}
	if s.Width < 1 || s.Width > MaxShotWidth {
		bad("width", "must be from 1 to %d pixels", MaxShotWidth)
	}
	if s.Height < 1 || s.Height > MaxShotHeight {
		bad("height", "must be from 1 to %d pixels", MaxShotHeight)
	}
	if s.DeviceScaleFactor != 0 && (s.DeviceScaleFactor < MinDeviceScale || s.DeviceScaleFactor > MaxDeviceScale) {
		bad("deviceScaleFactor", "must be from %g to %g", MinDeviceScale, MaxDeviceScale)
	}
	if s.Quality < 0 || s.Quality > 100 {
		bad("quality", "must be from 0 to 100")
	}
	return d
}
