package gotenberg

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/pdftools"
)

// markPrefix is the prefix of the fields of a watermark or stamp.
func markPrefix(req pdftools.Request) string {
	if req.Stamp {
		return "stamp"
	}
	return "watermark"
}

// markFields are the fields of Gotenberg's watermark (prefix "watermark",
// under the content) or stamp (prefix "stamp", over it).
func markFields(prefix string) []string {
	return []string{prefix + "Source", prefix + "Expression", prefix + "Pages", prefix + "Options"}
}

// mark maps Gotenberg's watermark or stamp (prefix): a text on the pages
// listed, with the options quire has (opacity, rotation).
func mark(prefix string) func(*values, *pdftools.Request) {
	return func(v *values, req *pdftools.Request) {
		req.Stamp, req.Pages = prefix == "stamp", v.str(prefix+"Pages")
		switch source, expr := v.str(prefix+"Source"), v.str(prefix+"Expression"); {
		case source != "text" && source != "image":
			v.bad = append(v.bad, quire.Detail{Field: prefix + "Source",
				Issue: fmt.Sprintf("is not supported by quire with '%s': quire marks with text or an image", source)})
		case expr == "":
			v.bad = append(v.bad, quire.Detail{Field: prefix + "Expression", Issue: "is required: the text, or the name of the image uploaded"})
		case source == "text":
			req.Text = expr
		}
		if !v.has(prefix + "Options") {
			return
		}
		var o map[string]json.RawMessage
		if err := json.Unmarshal([]byte(v.str(prefix+"Options")), &o); err != nil {
			v.invalid(prefix+"Options", "a JSON object")
			return
		}
		for k, raw := range o {
			var err error
			switch k {
			case "opacity":
				err = json.Unmarshal(raw, &req.Opacity)
			case "rotation":
				err = json.Unmarshal(raw, &req.Angle)
			default:
				err = fmt.Errorf("is not supported by quire for the option '%s': quire has opacity and rotation", k)
			}
			if err != nil {
				v.bad = append(v.bad, quire.Detail{Field: prefix + "Options", Issue: err.Error()})
			}
		}
	}
}

// stampTextFields and stampImageFields are the fields of 9.x's
// stamp-text and stamp-image.
var (
	stampTextFields  = []string{"text", "pages", "x", "y", "fontSize", "color", "opacity", "rotation"}
	stampImageFields = []string{"image", "pages", "x", "y", "width", "height", "opacity", "rotation"}
)

// stampText maps 9.x's stamp-text: the text over the pages, its baseline
// starting at x, y (points from the bottom left corner), Helvetica's 12
// points, black, unless told otherwise.
func stampText(v *values, req *pdftools.Request) {
	req.Text = v.str("text")
	if req.Text == "" {
		v.bad = append(v.bad, quire.Detail{Field: "text", Issue: "is required: the text to draw"})
	}
	stamp(v, req, &pdftools.Placement{FontSize: pdftools.DefaultFontSize, Color: v.str("color")})
	if v.has("fontSize") {
		req.At.FontSize = v.float("fontSize")
	}
}

// stampImage maps 9.x's stamp-image: the image (named by the field
// image) over the pages, its lower left corner at x, y, at width and
// height points (one: its proportions kept; neither: a point a pixel).
func stampImage(v *values, req *pdftools.Request) {
	stamp(v, req, &pdftools.Placement{Width: v.float("width"), Height: v.float("height")})
	for _, side := range []string{"width", "height"} {
		if v.has(side) && v.float(side) <= 0 {
			v.bad = append(v.bad, quire.Detail{Field: side, Issue: "must be more than 0"})
		}
	}
}

// stamp sets what 9.x's stamps share: over the content of pages, at x, y,
// opaque unless opacity says otherwise (0 too), turned by rotation
// degrees counter-clockwise.
func stamp(v *values, req *pdftools.Request, at *pdftools.Placement) {
	at.X, at.Y = v.float("x"), v.float("y")
	req.Stamp, req.Pages, req.At = true, v.str("pages"), at
	req.Opacity = v.float("opacity")
	if req.Opacity == 0 {
		req.Opacity = 1
	}
	rotation := v.float("rotation")
	switch {
	case math.Abs(rotation) > 360:
		v.bad = append(v.bad, quire.Detail{Field: "rotation", Issue: "must be between -360 and 360 degrees"})
	case rotation != math.Trunc(rotation):
		v.bad = append(v.bad, quire.Detail{Field: "rotation", Issue: "is not supported by quire in fractions of a degree"})
	}
	req.Angle = int(rotation)
}
