package certpage

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// scriptNames are signer names in each script the certificate must render.
var scriptNames = map[string]string{
	"latin":      "Zoë Ångström-Łukasz",
	"cyrillic":   "Анна Каренина",
	"greek":      "Ελένη Παπαδοπούλου",
	"chinese":    "王小明",
	"japanese":   "山田太郎",
	"korean":     "김민수",
	"thai":       "สมชาย ใจดี ศรีสุข",
	"devanagari": "राम प्रसाद शर्मा",
	"arabic":     "محمد عبد الله",
	"arabic2":    "علاء السلامي", // lam-alef ligatures: one glyph, two letters
	"hebrew":     "דוד לוי",
}

// agreeingMutool are the scripts for which mupdf's text extraction, as a
// second extractor, gives the name as written. mupdf 1.21 (Debian 12) reads
// no /ActualText, so a Devanagari syllable whose glyphs do not map one to
// one to its letters (र्मा: the reph is drawn after the consonant) loses
// letters, and it gives right-to-left text in visual order, not as typed.
var agreeingMutool = []string{"latin", "cyrillic", "greek", "chinese", "japanese", "korean", "thai"}

// TestScripts renders a certificate for a name in each script, checks the
// file with qpdf and checks what pdftotext extracts: the name, exactly as
// written, as a line of its own in the signature box, the Name row, the
// field_change value and a further audit-trail entry; and the certificate's
// own text, every event's number, type and time.
//
// Only whitespace is normalised: pdftotext infers spaces from the gaps
// between glyphs and ends lines where the layout does, so runs of spaces
// and line ends are made one space. For Arabic and Hebrew, pdftotext
// (poppler 22.12) outputs the characters in logical order, surrounded by
// U+202B RIGHT-TO-LEFT EMBEDDING and U+202C POP DIRECTIONAL FORMATTING,
// which are removed: they mark the direction, not characters of the name.
func TestScripts(t *testing.T) {
	t.Parallel()
	for script, name := range scriptNames {
		t.Run(script, func(t *testing.T) {
			d := sampleData(name)
			d.Events = append(d.Events, Event{Type: "comment", Timestamp: t0, Data: map[string]any{"note": name}})
			path, _, _ := renderFile(t, d, A4)
			raw := run(t, "poppler-utils", "pdftotext", "-enc", "UTF-8", path, "-")
			if n := countLines(raw, name); n != 4 {
				t.Errorf("pdftotext gives the name %q as a line %d times, want 4 (signature box, Name, two events):\n%s", name, n, raw)
			}
			text := extractText(t, path)
			want := append([]string{"Signature certificate", d.DocumentSHA256, d.EventID, "Certificate page 1 of", "Later signatures",
				"2025-03-04 05:06:07 UTC (Tuesday, 4 March 2025)", "2. field_change", "2025-03-04 05:04:07.25 UTC",
				"X-Quire-Document-SHA256", "Operated by", "Acme Légal GmbH"},
				eventsText(d.Events)...)
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Errorf("pdftotext output lacks %q:\n%s", w, text)
				}
			}
			if slices.Contains(agreeingMutool, script) {
				out := run(t, "mupdf-tools", "mutool", "draw", "-q", "-F", "txt", path)
				if n := countLines(out, name); n != 4 {
					t.Errorf("mutool gives the name %q as a line %d times, want 4:\n%s", name, n, out)
				}
			}
		})
	}
}

// countLines counts the lines of extracted text that are s, once bidi marks
// are removed and whitespace collapsed (see TestScripts).
func countLines(text, s string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if normalize(l) == s {
			n++
		}
	}
	return n
}

// TestRightToLeftMarks pins what the comparison above relies on: pdftotext
// marks the Arabic name as one right-to-left embedding.
func TestRightToLeftMarks(t *testing.T) {
	t.Parallel()
	path, _, _ := renderFile(t, sampleData(scriptNames["arabic"]), A4)
	raw := run(t, "poppler-utils", "pdftotext", "-enc", "UTF-8", path, "-")
	if want := "\u202b" + scriptNames["arabic"] + "\u202c"; !strings.Contains(raw, want) {
		t.Errorf("pdftotext output lacks %q", want)
	}
}

// TestBidiVisualOrder checks the glyph order on the page for a name mixing
// Latin, Arabic and digits in a left-to-right paragraph: by the Unicode bidi
// algorithm "Ahmed محمد 123 عبد" displays, left to right, as Ahmed, عبد, 123,
// محمد. pdftotext -bbox lists each word with its characters in visual order
// and its position.
func TestBidiVisualOrder(t *testing.T) {
	t.Parallel()
	path, _, _ := renderFile(t, sampleData("Ahmed محمد 123 عبد"), A4)
	words := bboxWords(t, path)
	y := -1.0
	for _, w := range words {
		if w.text == "Ahmed" {
			y = w.yMin
			break
		}
	}
	var got []string
	for _, w := range words {
		if w.yMin == y && w.xMin >= words[0].xMin && w.text != "Name" {
			got = append(got, w.text)
		}
	}
	want := []string{"Ahmed", reverse("عبد"), "123", reverse("محمد")}
	if !slices.Equal(got, want) {
		t.Errorf("words of the name line, left to right: got %q, want %q", got, want)
	}
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

type bboxWord struct {
	xMin, yMin, xMax, yMax float64
	text                   string
}

var wordRE = regexp.MustCompile(`<word xMin="([-\d.]+)" yMin="([-\d.]+)" xMax="([-\d.]+)" yMax="([-\d.]+)">([^<]*)</word>`)

// bboxWords returns the words pdftotext finds, sorted by position, with
// coordinates from the top-left corner of the page.
func bboxWords(t testing.TB, path string) []bboxWord {
	t.Helper()
	var words []bboxWord
	for _, m := range wordRE.FindAllStringSubmatch(run(t, "poppler-utils", "pdftotext", "-enc", "UTF-8", "-bbox", path, "-"), -1) {
		w := bboxWord{text: m[5]}
		for i, p := range []*float64{&w.xMin, &w.yMin, &w.xMax, &w.yMax} {
			*p, _ = strconv.ParseFloat(m[i+1], 64)
		}
		words = append(words, w)
	}
	slices.SortStableFunc(words, func(a, b bboxWord) int {
		if a.yMin != b.yMin {
			return int(math.Copysign(1, a.yMin-b.yMin))
		}
		return int(math.Copysign(1, a.xMin-b.xMin))
	})
	return words
}

// TestPageSizes renders a long certificate on several page sizes and checks
// the pages have that size, every word lies inside the page, the signature
// rectangle is on the first page and clear of text, and a too small or
// unusable size is handled.
func TestPageSizes(t *testing.T) {
	t.Parallel()
	d := sampleData("Zoë Ångström-Łukasz 王小明")
	d.Events = append(d.Events, manyEvents(40)...)
	for _, tc := range []struct {
		name       string
		size, want PageSize
	}{
		{"A4", A4, A4},
		{"Letter", letter, letter},
		{"A6", a6, a6},
		{"A4 landscape", a4Landscape, a4Landscape},
		{"tiny", PageSize{Width: 50, Height: 90}, PageSize{Width: minPageSide, Height: minPageSide}},
		{"NaN", PageSize{Width: math.NaN(), Height: 10}, A4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, _, rect := renderFile(t, d, tc.size)
			info := run(t, "poppler-utils", "pdfinfo", "-f", "1", "-l", "1000", path)
			wantSize := regexp.MustCompile(fmt.Sprintf(`size:\s+%s x %s pts`, regexp.QuoteMeta(trimNum(tc.want.Width)), regexp.QuoteMeta(trimNum(tc.want.Height))))
			if n, p := len(wantSize.FindAllString(info, -1)), pageCount(t, info); n != p || p == 0 {
				t.Errorf("%d of %d pages have %q:\n%s", n, p, wantSize, info)
			}
			checkInside(t, path, tc.want, rect, d.Signer.Name)
		})
	}
}

func trimNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func pageCount(t testing.TB, info string) int {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Pages:\s+(\d+)`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no page count in pdfinfo output:\n%s", info)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// checkInside checks every word is within the page and none overlaps the
// signature rectangle on the first page but those of the typed name.
func checkInside(t *testing.T, path string, size PageSize, rect [4]float64, typed string) {
	t.Helper()
	if rect[0] < 0 || rect[1] < 0 || rect[2] > size.Width || rect[3] > size.Height || rect[2] <= rect[0] || rect[3] <= rect[1] {
		t.Errorf("signature rectangle %v is not inside the %vx%v page", rect, size.Width, size.Height)
	}
	// Words of the first page come first in pdftotext -bbox output.
	raw := run(t, "poppler-utils", "pdftotext", "-enc", "UTF-8", "-bbox", "-f", "1", "-l", "1", path, "-")
	for _, m := range wordRE.FindAllStringSubmatch(raw, -1) {
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		// pdftotext measures from the top; the rectangle from the bottom.
		top, bottom := size.Height-v[1], size.Height-v[3]
		if v[2] > rect[0] && v[0] < rect[2] && top > rect[1] && bottom < rect[3] && !strings.Contains(typed, m[5]) {
			t.Errorf("word %q at %v overlaps the signature rectangle %v", m[5], v, rect)
		}
	}
	for _, w := range bboxWords(t, path) {
		if w.xMin < 0 || w.yMin < 0 || w.xMax > size.Width+0.01 || w.yMax > size.Height+0.01 {
			t.Errorf("word %q at (%v,%v)-(%v,%v) is outside the %vx%v page", w.text, w.xMin, w.yMin, w.xMax, w.yMax, size.Width, size.Height)
		}
	}
}

// manyEvents returns n field_change events one second apart.
func manyEvents(n int) []Event {
	events := make([]Event, n)
	for i := range events {
		events[i] = Event{
			Type:      fmt.Sprintf("field_change_%d", i),
			Timestamp: t0.Add(time.Duration(i) * time.Second),
			Data:      map[string]any{"fieldId": fmt.Sprintf("f%d", i), "value": strings.Repeat("x", i%50)},
		}
	}
	return events
}

// TestLongTrail checks 500 events flow onto several pages, each with its
// footer, and every event's type and time is on some page.
func TestLongTrail(t *testing.T) {
	t.Parallel()
	d := sampleData("Анна Каренина")
	d.Events = manyEvents(500)
	path, pdf, _ := renderFile(t, d, A4)
	n := pageCount(t, run(t, "poppler-utils", "pdfinfo", path))
	if n < 5 {
		t.Fatalf("500 events on %d pages, want several", n)
	}
	t.Logf("500 events: %d A4 pages, %d bytes", n, len(pdf))
	for i := 1; i <= n; i++ {
		page := extractText(t, path, "-f", strconv.Itoa(i), "-l", strconv.Itoa(i))
		for _, w := range []string{fmt.Sprintf("Certificate page %d of %d", i, n), "Event " + d.EventID} {
			if !strings.Contains(page, w) {
				t.Errorf("page %d lacks footer text %q", i, w)
			}
		}
	}
	text := extractText(t, path)
	for _, w := range eventsText(d.Events) {
		if !strings.Contains(text, w) {
			t.Errorf("event text %q missing", w)
		}
	}
}

// TestEventLimit checks that past maxEvents the trail says how many events
// are not listed.
func TestEventLimit(t *testing.T) {
	t.Parallel()
	d := sampleData("Zoë")
	d.Events = manyEvents(maxEvents + 37)
	for i := range d.Events {
		d.Events[i].Data = nil
	}
	path, _, _ := renderFile(t, d, A4)
	text := extractText(t, path)
	if !strings.Contains(text, "37 further events not shown: at most 1000 events are listed.") {
		t.Error("no note about the events left out")
	}
	if !strings.Contains(text, fmt.Sprintf("%d. field_change_%d", maxEvents, maxEvents-1)) || strings.Contains(text, fmt.Sprintf("field_change_%d ", maxEvents)) {
		t.Error("the first 1000 events, and only those, should be listed")
	}
}

// TestSignatureImage checks a drawn signature sent as a data URI is embedded
// once, opaque (no soft mask: PDF/A-1 forbids transparency), even when sent
// twice, drawn in the signature box and in the audit trail, and that
// oversized or malformed images are replaced by a note.
func TestSignatureImage(t *testing.T) {
	t.Parallel()
	sig := signaturePNG(t, 400, 150)
	d := sampleData("Zoë")
	d.Events = append(d.Events,
		Event{Type: "submit", Timestamp: t0, Data: map[string]any{"signature": sig}},
		Event{Type: "field_change", Timestamp: t0, Data: map[string]any{"fieldId": "sig", "value": sig}},
		Event{Type: "field_change", Timestamp: t0, Data: map[string]any{"fieldId": "big", "value": signaturePNG(t, 2100, 20)}},
		Event{Type: "field_change", Timestamp: t0, Data: map[string]any{"fieldId": "bad", "value": "data:image/png;base64,iVBORw0KGgoAAAA"}},
		Event{Type: "field_change", Timestamp: t0, Data: map[string]any{"fieldId": "huge", "value": "data:image/png;base64," + strings.Repeat("A", 3<<20)}},
		Event{Type: "field_change", Timestamp: t0, Data: map[string]any{"fieldId": "jpeg", "value": "data:image/jpeg;base64,/9j/4AAQ"}},
	)
	path, _, _ := renderFile(t, d, A4)
	list := run(t, "poppler-utils", "pdfimages", "-list", path)
	rows := strings.Split(strings.TrimSpace(list), "\n")[2:]
	if len(rows) != 3 { // in the signature box and in two events
		t.Fatalf("pdfimages -list: want the 400x150 image drawn three times; got\n%s", list)
	}
	for _, r := range rows {
		f := strings.Fields(r)
		if f[3] != "400" || f[4] != "150" || f[2] != "image" || f[10] != strings.Fields(rows[0])[10] {
			t.Errorf("unexpected image row %q", r)
		}
	}
	text := extractText(t, path)
	for _, w := range []string{
		"[image not shown: the PNG is 2100x20 px; the limit is 2000x2000 px]",
		"[image not shown: not a valid PNG",
		"[image not shown: the PNG is larger than the 2 MB limit]",
		"[image not shown: only base64 PNG images are rendered",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("no note %q in:\n%s", w, text)
		}
	}
}

// TestTypedSignature checks that without a drawn signature the signature box
// shows the signer's name, as pdftotext reads the box, in the signature
// face, embedded as a subset, when that face has every letter of the name,
// and otherwise in the text fonts; and that a drawing takes its place.
func TestTypedSignature(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, font string
	}{
		{"Zoë Ångström", "Kristi"},
		{"Jean-Pierre O'Brien", "Kristi"},
		{scriptNames["devanagari"], "NotoSansDevanagari"},
		{scriptNames["arabic"], "DejaVuSans"},
		{"Łukasz Żak", "DejaVuSans"}, // Kristi stops at Latin-1: not one name in two styles
		{strings.Repeat("Maximilian ", 18), "Kristi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := sampleData(tc.name)
			path, _, rect := renderFile(t, d, A4)
			want, _ := cleanText(tc.name, maxNameRunes)
			if got := boxText(t, path, A4, rect); got != want {
				t.Errorf("signature box holds %q, want %q", got, want)
			}
			fonts := run(t, "poppler-utils", "pdffonts", path)
			kristi := regexp.MustCompile(`(?m)^[A-Z]{6}\+Kristi +CID TrueType +Identity-H +yes yes yes`).MatchString(fonts)
			if kristi != (tc.font == "Kristi") || !strings.Contains(fonts, "+"+tc.font) {
				t.Errorf("want the name in %s, embedded as a subset; pdffonts:\n%s", tc.font, fonts)
			}
		})
	}
	t.Run("drawn", func(t *testing.T) {
		d := sampleData("Zoë Ångström")
		d.Events = append(d.Events, Event{Type: "submit", Timestamp: t0, Data: map[string]any{"signature": signaturePNG(t, 400, 150)}})
		path, _, rect := renderFile(t, d, A4)
		if got := boxText(t, path, A4, rect); got != "" {
			t.Errorf("signature box holds text %q beside the drawing", got)
		}
		if fonts := run(t, "poppler-utils", "pdffonts", path); strings.Contains(fonts, "Kristi") {
			t.Errorf("the signature face is embedded though unused:\n%s", fonts)
		}
	})
}

// boxText is what pdftotext reads inside the signature rectangle of the
// first page, normalised as in TestScripts.
func boxText(t *testing.T, path string, size PageSize, rect [4]float64) string {
	t.Helper()
	// pdftotext crops in whole points from the top-left corner of the page.
	x, y := int(math.Ceil(rect[0])), int(math.Ceil(size.Height-rect[3]))
	w, h := int(rect[2]-rect[0])-1, int(rect[3]-rect[1])-1
	return extractText(t, path, "-f", "1", "-l", "1", "-x", strconv.Itoa(x), "-y", strconv.Itoa(y), "-W", strconv.Itoa(w), "-H", strconv.Itoa(h))
}

// TestFontsSubsetAndSize checks the fonts are embedded subsets with a
// /ToUnicode map and reports the file sizes: Latin only, and with CJK.
func TestFontsSubsetAndSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		signer   string
		fonts    int
		maxBytes int
	}{
		{"latin", "Zoë Ångström-Łukasz", 1, 40 << 10},
		{"cjk", "王小明 山田太郎 김민수", 2, 60 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, pdf, _ := renderFile(t, sampleData(tc.signer), A4)
			out := run(t, "poppler-utils", "pdffonts", path)
			lines := strings.Split(strings.TrimSpace(out), "\n")[2:]
			if len(lines) != tc.fonts {
				t.Fatalf("want %d fonts:\n%s", tc.fonts, out)
			}
			for _, l := range lines {
				f := strings.Fields(l)
				if !regexp.MustCompile(`^[A-Z]{6}\+`).MatchString(f[0]) || !strings.Contains(l, "CID TrueType") || !strings.Contains(l, "yes yes yes") {
					t.Errorf("font is not an embedded subset with ToUnicode: %q", l)
				}
			}
			t.Logf("1 page, %s: %d bytes", tc.name, len(pdf))
			if len(pdf) > tc.maxBytes {
				t.Errorf("%d bytes, want at most %d", len(pdf), tc.maxBytes)
			}
		})
	}
}

// TestRasterize renders pages to PNG with pdftoppm, as a viewer would draw
// them (this also makes FreeType load the subset fonts). Set
// CERTPAGE_PNG_DIR to keep the PNGs for a look.
func TestRasterize(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("CERTPAGE_PNG_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	d := sampleData("محمد عبد الله")
	d.Events = append(d.Events, Event{Type: "submit", Timestamp: t0, Data: map[string]any{"signature": signaturePNG(t, 400, 150)}})
	for _, name := range []string{"latin", "cyrillic", "greek", "chinese", "japanese", "korean", "thai", "devanagari", "hebrew"} {
		d.Events = append(d.Events, Event{Type: "field_change", Timestamp: t0, Data: map[string]any{"fieldId": name, "value": scriptNames[name]}})
	}
	for _, tc := range []struct {
		name string
		size PageSize
	}{{"a4", A4}, {"a6", a6}, {"landscape", a4Landscape}} {
		path, _, _ := renderFile(t, d, tc.size)
		prefix := filepath.Join(dir, "cert-"+tc.name)
		run(t, "poppler-utils", "pdftoppm", "-r", "60", "-png", path, prefix)
		if _, err := os.Stat(prefix + "-1.png"); err != nil {
			t.Errorf("pdftoppm wrote no first page: %v", err)
		}
	}
}

// TestMissingFont checks a missing font is an error naming its package.
func TestMissingFont(t *testing.T) {
	t.Parallel()
	_, err := NewRenderer(Options{FontDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "install the Debian package fonts-dejavu-core") {
		t.Errorf("got %v, want an error naming fonts-dejavu-core", err)
	}
	_, err = NewRenderer(Options{Fonts: DefaultFonts(""), SignatureFont: DefaultSignatureFont(t.TempDir())})
	if err == nil || !strings.Contains(err.Error(), "install the Debian package fonts-kristi") {
		t.Errorf("got %v, want an error naming fonts-kristi", err)
	}
	_, err = NewRenderer(Options{Fonts: []FontFile{{Path: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", Index: 3, Package: "fonts-dejavu-core"}}})
	if err == nil || !strings.Contains(err.Error(), "index 3 does not exist") {
		t.Errorf("got %v, want an error about the font index", err)
	}
}

// TestHostileInput renders input built to break things: control and bidi
// override characters, invalid UTF-8, stacked combining marks, huge and
// deeply nested values, odd types. It must give a valid PDF, and the
// removed characters must not reach it.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	deep := map[string]any{"v": "bottom"}
	for range 50 {
		deep = map[string]any{"n": deep}
	}
	self := map[string]any{}
	self["self"] = self
	wide := map[string]any{}
	for i := range 300 {
		wide[fmt.Sprintf("k%03d", i)] = i
	}
	name := "Eve\u202eevil\u202c \x00\x1b[31m\xff\xfe" + strings.Repeat("\u0301", 40) + strings.Repeat("Long", 1000)
	d := sampleData(name)
	d.EventID = strings.Repeat("id-", 500)
	d.Metadata = map[string]any{"deep": deep, "self": self, "wide": wide, "bytes": []byte{1, 2}, "n": 1e300, "neg": -0.0000001}
	d.Events = append(d.Events, Event{Type: "\u2066x\u2069", Timestamp: time.Time{}, Data: map[string]any{"text": strings.Repeat("ب", 10000)}})
	path, _, _ := renderFile(t, d, a6)
	text := extractText(t, path)
	for _, bad := range []string{"\u202e", "\x1b", "\u2066", "\x00"} {
		if strings.Contains(text, bad) {
			t.Errorf("control character %q reached the PDF", bad)
		}
	}
	// The note after the Arabic text is part of a right-to-left paragraph:
	// pdftotext mirrors its parentheses or not depending on where the line
	// falls, so they are left out of the comparison.
	for _, w := range []string{
		"Eveevil", "(shortened: first 200 of 4018 characters)", "shortened: first 300 of 10000 characters",
		"(nested deeper than 8 levels; not shown)", "wide.k000", "more values not shown: at most 100 are listed per object.", "1e+300", "-1e-07", "(no time given)",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q", w)
		}
	}
}

// TestConcurrentRender renders from several goroutines with one renderer
// (run with -race to check the shared fonts are only read).
func TestConcurrentRender(t *testing.T) {
	t.Parallel()
	r := testRenderer(t)
	want, _, err := r.Render(sampleData("王小明"), A4)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := []string{"王小明", "محمد عبد الله", "Анна Каренина", "김민수"}[i%4]
			got, _, err := r.Render(sampleData(name), A4)
			if err == nil && name == "王小明" && string(got) != string(want) {
				err = fmt.Errorf("render %d differs from the same render done alone", i)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkRender measures one 1-page certificate (Latin, and with CJK):
// layout, shaping, font subsetting, compression and writing; and, for
// scale, a 500-event trail.
func BenchmarkRender(b *testing.B) {
	r := testRenderer(b)
	for _, bc := range []struct {
		name, signer string
		events       int
	}{{"latin", "Zoë Ångström-Łukasz", 0}, {"cjk", "王小明 山田太郎 김민수", 0}, {"500events", "Анна Каренина", 500}} {
		b.Run(bc.name, func(b *testing.B) {
			d := sampleData(bc.signer)
			if bc.events > 0 {
				d.Events = manyEvents(bc.events)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := r.Render(d, A4); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
