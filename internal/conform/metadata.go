package conform

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/quire-dev/quire/internal/pdf"
	"github.com/quire-dev/quire/internal/xmp"
)

// metadata is what the Info dictionary and the XMP packet both say: the
// XMP is written from the Info dictionary, which is how PDF/A's rule that
// they agree (ISO 19005-1 6.7.3) holds by construction.
type metadata struct {
	title, author, subject, keywords, creator, producer string
	created, modified                                   time.Time
	pdfa                                                int
	ua                                                  bool
}

func newMetadata(d *pdf.Document, cat pdf.Dict, o Options) metadata {
	_, info := d.Info()
	text := func(key pdf.Name) string { return textOf(d, info[key]) }
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	m := metadata{
		title: text("Title"), author: text("Author"), subject: text("Subject"), keywords: text("Keywords"),
		creator: text("Creator"), producer: text("Producer"), pdfa: o.PDFA, ua: o.UA,
	}
	m.created = parseDate(text("CreationDate"), now)
	m.modified = parseDate(text("ModDate"), m.created)
	if m.title == "" && o.UA {
		m.title = cmp.Or(firstOutlineTitle(d, cat), strings.TrimSpace(o.Title), "Untitled")
	}
	return m
}

// firstOutlineTitle returns the title of the outline's first entry: both
// engines make the outline from the headings, so it is the first heading.
func firstOutlineTitle(d *pdf.Document, cat pdf.Dict) string {
	outlines, err := d.Dict(cat["Outlines"])
	if err != nil {
		return ""
	}
	first, err := d.Dict(outlines["First"])
	if err != nil {
		return ""
	}
	return textOf(d, first["Title"])
}

// textOf returns the text string o, or what o refers to, trimmed; "" for
// anything else.
func textOf(d *pdf.Document, o pdf.Object) string {
	v, err := d.Resolve(o)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(pdf.TextOf(v))
}

// pdfDate matches a PDF date (ISO 32000-1 7.9.4), from the year on; the
// parts after the year are optional.
var pdfDate = regexp.MustCompile(`^D?:?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:(Z)|([+-])(\d{2})'?(\d{2})?'?)?`)

// parseDate reads a PDF date, def when s is none.
func parseDate(s string, def time.Time) time.Time {
	p := pdfDate.FindStringSubmatch(s)
	if p == nil {
		return def
	}
	n := func(i, d int) int {
		if p[i] == "" {
			return d
		}
		v, _ := strconv.Atoi(p[i]) // digits only
		return v
	}
	loc := time.UTC
	if p[8] != "" {
		off := (n(9, 0)*60 + n(10, 0)) * 60
		if p[8] == "-" {
			off = -off
		}
		loc = time.FixedZone("", off)
	}
	t := time.Date(n(1, 0), time.Month(n(2, 1)), n(3, 1), n(4, 0), n(5, 0), n(6, 0), 0, loc)
	if t.Year() < 1000 || n(2, 1) > 12 || n(3, 1) > 31 { // 0000-00-00 and the like
		return def
	}
	return t
}

// pdfDateString writes t as a PDF date, with its offset.
func pdfDateString(t time.Time) string {
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign, off = '-', -off
	}
	return fmt.Sprintf("D:%s%c%02d'%02d'", t.Format("20060102150405"), sign, off/3600, off/60%60)
}

// info returns the Info dictionary.
func (m metadata) info() pdf.Dict {
	d := pdf.Dict{
		"CreationDate": pdf.String(pdfDateString(m.created)),
		"ModDate":      pdf.String(pdfDateString(m.modified)),
	}
	for k, v := range map[pdf.Name]string{"Title": m.title, "Author": m.author, "Subject": m.subject,
		"Keywords": m.keywords, "Creator": m.creator, "Producer": m.producer} {
		if v != "" {
			d[k] = pdf.TextString(v)
		}
	}
	return d
}

// xmp returns the XMP packet, written from the Info dictionary (package
// xmp), so the two agree.
func (m metadata) xmp() []byte {
	c := xmp.Claims{}
	if m.pdfa != 0 {
		c.PDFAPart, c.PDFAConformance = strconv.Itoa(m.pdfa), "B"
	}
	if m.ua {
		c.UAPart = 1
	}
	return xmp.Packet(m.info(), c)
}
