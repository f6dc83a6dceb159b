package chromium

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/pdf"
)

// A screenshot is the viewport (clip) or the whole page, in the format
// asked, on a transparent background when it omits the page's default;
// a page too tall for an image of it is refused; and the tab, given back
// its own viewport, prints as before.
func TestScreenshot(t *testing.T) {
	p := sharedPool(t)
	ctx := context.Background()
	tall := html(`<!DOCTYPE html><html><body style="margin:0"><div style="height:1500px;width:100px;background:#c00">Tall</div></body></html>`)
	shot := func(s engine.Shot) (image.Image, string) {
		t.Helper()
		r, err := p.Convert(ctx, tall, engine.JobOptions{Shot: s})
		if err != nil || r.Pages != 1 {
			t.Fatalf("%+v: %v, %d pages; want an image, one page", s, err, r.Pages)
		}
		img, format, err := image.Decode(bytes.NewReader(r.Output))
		if err != nil {
			t.Fatalf("%+v: the image does not decode: %v", s, err)
		}
		return img, format
	}
	if img, format := shot(engine.Shot{Format: "png", Width: 300, Height: 200, Clip: true}); format != "png" || img.Bounds().Dx() != 300 || img.Bounds().Dy() != 200 {
		t.Errorf("clip: a %s of %v, want a png of the 300x200 viewport", format, img.Bounds())
	}
	if img, format := shot(engine.Shot{Format: "jpeg", Width: 300, Height: 200, Quality: 50}); format != "jpeg" || img.Bounds().Dx() != 300 || img.Bounds().Dy() != 1500 {
		t.Errorf("whole page: a %s of %v, want a jpeg 300 wide and 1500 tall", format, img.Bounds())
	}
	img, _ := shot(engine.Shot{Format: "png", Width: 300, Height: 200, Clip: true, OmitBackground: true})
	if _, _, _, a := img.At(250, 100).RGBA(); a != 0 {
		t.Errorf("omitBackground: the page's empty area has alpha %d, want 0", a)
	}
	if _, _, _, a := img.At(50, 100).RGBA(); a == 0 {
		t.Error("omitBackground: the page's own red box is transparent too")
	}
	huge := html(`<!DOCTYPE html><html><body><div style="height:20000px">Huge</div></body></html>`)
	if _, err := p.Convert(ctx, huge, engine.JobOptions{Shot: engine.Shot{Format: "png", Width: 300, Height: 200}}); !errors.Is(err, engine.ErrUnprocessable) || !strings.Contains(err.Error(), "at most 16384") {
		t.Errorf("a page 20000 pixels tall: %v, want ErrUnprocessable naming the bound", err)
	}
	_, err := p.Convert(ctx, tall, engine.JobOptions{Shot: engine.Shot{Format: "gif", Width: 0, Height: 200}})
	var qe *quire.Error
	if !errors.As(err, &qe) || len(qe.Details) != 2 || qe.Details[0].Field != "format" || qe.Details[1].Field != "width" {
		t.Errorf("format gif, width 0: %v, want both named", err)
	}
	r, err := p.Convert(ctx, tall, engine.JobOptions{})
	if err != nil {
		t.Fatal(err)
	}
	find(t, pdfWords(t, r.Output), "Tall")
	if want := pdf.PageCount(r.Output); r.Pages != want || want == 0 {
		t.Errorf("the print after the screenshots: the browser counted %d pages, the PDF has %d", r.Pages, want)
	}
	if _, err := png.Decode(bytes.NewReader(r.Output)); err == nil {
		t.Error("a print after the screenshots answered an image")
	}
}

// A page laid out for the screen shows what its CSS keeps for screens in
// its print, and the next page of the tab is laid out for print again.
func TestEmulatedMedia(t *testing.T) {
	p := sharedPool(t)
	media := html(`<!DOCTYPE html><html><head><style>
@media screen { .print { display: none } }
@media print { .screen { display: none } }
</style></head><body><p class="screen">Screenonly</p><p class="print">Printonly</p></body></html>`)
	for _, c := range []struct{ media, want, not string }{{"screen", "Screenonly", "Printonly"}, {"", "Printonly", "Screenonly"}, {"print", "Printonly", "Screenonly"}} {
		r, err := p.Convert(context.Background(), media, engine.JobOptions{Media: c.media})
		if err != nil {
			t.Fatalf("media %q: %v", c.media, err)
		}
		text := ""
		for _, page := range pdfWords(t, r.Output) {
			for _, w := range page {
				text += w.Text + " "
			}
		}
		if !strings.Contains(text, c.want) || strings.Contains(text, c.not) {
			t.Errorf("media %q: the PDF reads %q, want %s and not %s", c.media, text, c.want, c.not)
		}
	}
	if _, err := p.Convert(context.Background(), media, engine.JobOptions{Media: "tv"}); err == nil || !strings.Contains(err.Error(), "emulatedMediaType") {
		t.Errorf("media tv: %v, want a refusal naming emulatedMediaType", err)
	}
}
