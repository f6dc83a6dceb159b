package certpage

import (
	"fmt"
	"time"
	"unicode/utf8"
)

// Bounds on the whole certificate, so that a huge audit trail gives a
// bounded number of pages and a bounded render time.
const (
	maxEvents     = 1000    // events listed; the rest are counted in a note
	maxTotalRunes = 200_000 // characters of labels and values drawn
)

// metrics is the page geometry. Margins and type scale with the page's
// shorter side, so an A6 or a landscape page gets the same layout as A4,
// smaller; a page too narrow for two columns puts labels above values.
type metrics struct {
	width, height  float64
	margin         float64
	fs             float64 // body font size
	lh             float64 // body line height
	x0, contentW   float64
	labelW         float64 // width of the label column; the full width when stacked
	valueX, valueW float64 // the value column
	stacked        bool
	bottom         float64 // lowest edge of a text line: the footer is below
}

func newMetrics(size PageSize) metrics {
	short := min(size.Width, size.Height)
	m := metrics{width: size.Width, height: size.Height}
	m.margin = clamp(short*0.06, 14, 50)
	m.fs = clamp(short/64, 6, 11)
	m.lh = m.fs * 1.4
	m.x0, m.contentW = m.margin, size.Width-2*m.margin
	m.stacked = m.contentW < 30*m.fs
	if m.stacked {
		m.labelW = m.contentW
		m.valueX, m.valueW = m.x0+m.fs, m.contentW-m.fs
	} else {
		m.labelW = clamp(m.contentW*0.25, 11*m.fs, 16*m.fs)
		m.valueX = m.x0 + m.labelW + m.fs
		m.valueW = m.contentW - m.labelW - m.fs
	}
	m.bottom = m.margin + 1.8*m.lh
	return m
}

func clamp(v, lo, hi float64) float64 { return min(max(v, lo), hi) }

// layout places the certificate's content on pages, top to bottom, starting
// a new page whenever the next line does not fit.
type layout struct {
	doc     *document
	sh      *shaper
	m       metrics
	pg      *page
	top     float64 // top of the next line box, PDF coordinates
	budget  int     // characters that may still be drawn
	sigRect [4]float64
	slots   []Slot
}

func newLayout(doc *document, sh *shaper) *layout {
	return &layout{doc: doc, sh: sh, m: newMetrics(doc.size), budget: maxTotalRunes}
}

// Text styles, relative to the body size.
func (l *layout) body() textStyle     { return textStyle{size: l.m.fs} }
func (l *layout) label() textStyle    { return textStyle{size: l.m.fs, gray: 0.35} }
func (l *layout) strong() textStyle   { return textStyle{size: l.m.fs, bold: true} }
func (l *layout) small() textStyle    { return textStyle{size: l.m.fs * 0.85, gray: 0.4} }
func (l *layout) heading() textStyle  { return textStyle{size: l.m.fs * 1.2, bold: true} }
func (l *layout) title() textStyle    { return textStyle{size: l.m.fs * 1.8, bold: true} }
func lineHeight(st textStyle) float64 { return st.size * 1.4 }

// certificate lays out every section. The reserved signature area comes
// first, above the signer's name as on a paper signature block, so that it is
// always on the first page.
func (l *layout) certificate(d Data) {
	l.newPage()
	l.paragraph("Signature certificate", l.title())
	l.paragraph("Who signed this document, when, and the audit trail of the signing.", l.small())

	l.section("Signer")
	l.signatureBox(d)
	l.field("Name", cleanShort(d.Signer.Name, maxNameRunes))
	l.field("E-mail", cleanShort(d.Signer.Email, maxNameRunes))
	if d.Signer.IP != "" {
		l.field("IP address", cleanShort(d.Signer.IP, maxNameRunes))
	}
	if d.Signer.UserAgent != "" {
		l.field("User agent", cleanShort(d.Signer.UserAgent, maxValueRunes))
	}
	l.field("Signed at", signingTime(d.SignedAt))

	l.section("Document")
	l.field("SHA-256 (as received)", cleanShort(d.DocumentSHA256, maxNameRunes))
	l.field("Event ID", cleanShort(d.EventID, maxNameRunes))
	l.note("The signed document, with these pages, cannot carry its own hash: its SHA-256 is returned to the " +
		"caller that requested the signature (response header X-Quire-Document-SHA256) and recorded with the event.")

	l.section("Signing certificate")
	if d.Organization != "" {
		l.field("Operated by", cleanShort(d.Organization, maxNameRunes))
	}
	l.field("Subject", cleanShort(d.Certificate.Subject, maxValueRunes))
	l.field("Issuer", cleanShort(d.Certificate.Issuer, maxValueRunes))
	l.field("SHA-256 fingerprint", cleanShort(d.Certificate.SHA256, maxNameRunes))
	l.field("Valid", fmt.Sprintf("from %s to %s", formatTime(d.Certificate.NotBefore), formatTime(d.Certificate.NotAfter)))

	if d.VerifyHint != "" {
		l.section("How to verify")
		l.paragraph(cleanShort(d.VerifyHint, maxHintRunes), l.body())
	}
	if len(d.Metadata) > 0 {
		l.section("Metadata")
		l.entries(flattenData(d.Metadata, nil))
	}
	l.auditTrail(d.Events)
	l.laterSignatures()
	l.footers(footerID(d))
}

func (l *layout) newPage() {
	l.pg = l.doc.addPage()
	l.top = l.m.height - l.m.margin
	if len(l.doc.pages) > 1 {
		l.paragraph("Signature certificate (continued)", l.small())
		l.top -= 0.5 * l.m.lh
	}
}

// ensure starts a new page unless h points fit above the footer.
func (l *layout) ensure(h float64) {
	if l.top-h < l.m.bottom {
		l.newPage()
	}
}

// spend charges drawn characters against the certificate's text limit.
func (l *layout) spend(texts ...string) {
	for _, t := range texts {
		l.budget -= utf8.RuneCountInString(t)
	}
}

// paragraph draws text across the page's width, breaking pages between
// lines.
func (l *layout) paragraph(text string, st textStyle) {
	l.spend(text)
	l.drawLines(l.sh.lines(text, st.size, l.m.contentW), l.m.x0, st)
}

// drawLine draws one line starting at x, at the current top.
func (l *layout) drawLine(ln line, x float64, st textStyle) {
	l.pg.text(l.doc, ln, x+ln.indent, l.top-st.size, st)
}

// section starts a titled section, kept on one page with its first rows.
func (l *layout) section(title string) {
	l.top -= 0.6 * l.m.lh
	st := l.heading()
	l.ensure(lineHeight(st) + 2*l.m.lh)
	l.paragraph(title, st)
	l.pg.rule(l.m.x0, l.m.x0+l.m.contentW, l.top+0.15*l.m.lh, 0.7, 0.5)
	l.top -= 0.3 * l.m.lh
}

// field is a row with one of the certificate's own labels.
func (l *layout) field(label, value string) {
	if value == "" {
		value = "(not given)"
	}
	l.row(label, value, 0, l.label())
}

// row draws a label and its value side by side (or the label above the value
// on a narrow page), line by line, so a long value continues on the next
// page.
func (l *layout) row(label, value string, indent float64, labelSt textStyle) {
	l.spend(label, value)
	m := l.m
	labels := l.sh.lines(label, labelSt.size, m.labelW-indent)
	values := l.sh.lines(value, m.fs, m.valueW)
	if m.stacked {
		l.drawLines(labels, m.x0+indent, labelSt)
		l.drawLines(values, m.valueX, l.body())
		return
	}
	for i := range max(len(labels), len(values)) {
		l.ensure(m.lh)
		if i < len(labels) {
			l.drawLine(labels[i], m.x0+indent, labelSt)
		}
		if i < len(values) {
			l.drawLine(values[i], m.valueX, l.body())
		}
		l.top -= m.lh
	}
}

// drawLines draws lines one under the other, breaking pages between them.
func (l *layout) drawLines(lines []line, x float64, st textStyle) {
	for _, ln := range lines {
		l.ensure(lineHeight(st))
		l.drawLine(ln, x, st)
		l.top -= lineHeight(st)
	}
}

// note is a remark of the certificate itself, such as what was left out.
func (l *layout) note(text string) {
	l.paragraph(text, l.small())
}

// signatureBox reserves the area where the caller may place a visible
// signature widget, marks it with a dashed frame and draws in it the
// signature as the signer drew it, if the audit trail holds one, or else the
// signer's typed name in the signature face; a caption under it says when
// the document was signed. The box shrinks rather than move to a second
// page, so the rectangle is always on the first page.
func (l *layout) signatureBox(d Data) {
	m := l.m
	w := min(m.valueW, 22*m.fs)
	h := w * 0.4
	l.top -= 0.3 * m.lh
	label := l.sh.lines("Signature", m.fs, m.labelW)
	if m.stacked {
		l.drawLines(label, m.x0, l.label())
	} else {
		l.drawLine(label[0], m.x0, l.label())
	}
	h = max(min(h, l.top-m.bottom-lineHeight(l.small())), m.lh)
	x, y := m.valueX, l.top-h
	l.pg.rect(x, y, w, h, 0.6, 0.5, true)
	l.sigRect = [4]float64{x, y, x + w, y + h}
	if pad := 0.3 * m.fs; w > 2*pad && h > 2*pad && !l.drawnSignature(d.Events, x+pad, y+pad, w-2*pad, h-2*pad) {
		name, _ := cleanText(d.Signer.Name, maxNameRunes)
		l.typedSignature(name, x+pad, y+pad, w-2*pad, h-2*pad)
	}
	l.top = y - 0.2*m.lh
	if !d.SignedAt.IsZero() {
		l.drawLines(l.sh.lines("Signed electronically at "+d.SignedAt.UTC().Format(secondsUTC), l.small().size, m.valueW), x, l.small())
	}
	l.top -= 0.3 * m.lh
}

// drawnSignature draws the last image of the listed events that can be
// shown, the signature as the signer drew it last, centred in the area and
// scaled to fit. It reports whether there was one.
func (l *layout) drawnSignature(events []Event, x, y, w, h float64) bool {
	for i := min(len(events), maxEvents) - 1; i >= 0; i-- {
		rows, _ := flattenData(events[i].Data, nil)
		for j := len(rows) - 1; j >= 0; j-- {
			if rows[j].image == "" {
				continue
			}
			img, err := l.doc.image(rows[j].image)
			if err != nil { // the audit trail says why, where it lists the image
				continue
			}
			scale := min(w/float64(img.width), h/float64(img.height), 1)
			iw, ih := float64(img.width)*scale, float64(img.height)*scale
			l.pg.image(img, x+(w-iw)/2, y+(h-ih)/2, iw, ih)
			return true
		}
	}
	return false
}

// typedSignature writes the signer's name in the signature face, centred in
// the area, on one line as large as fits up to half the area's height, or
// else on several lines, smaller. What still does not fit is cut off at the
// area's edge: the name is shown in full in the Signer section.
func (l *layout) typedSignature(name string, x, y, w, h float64) {
	floor := l.m.fs * 0.5
	var lines []line
	size := h / 2
	for ; ; size = max(size*0.85, floor) {
		lines = l.sh.signatureLines(name, size, w)
		fits := float64(len(lines))*lineHeight(textStyle{size: size}) <= h && widest(lines) <= w
		if fits && (len(lines) == 1 || size <= h/4) || size == floor {
			break
		}
	}
	lh := lineHeight(textStyle{size: size})
	lines = lines[:min(len(lines), max(int(h/lh), 1))]
	top := y + h - (h-float64(len(lines))*lh)/2
	st := textStyle{size: size, gray: 0.1}
	l.pg.clip(x, y, w, h)
	for i, ln := range lines {
		l.pg.text(l.doc, ln, x+(w-ln.width)/2, top-float64(i)*lh-size, st)
	}
	l.pg.restore()
}

// auditTrail lists the events in order, within the event and text limits.
func (l *layout) auditTrail(events []Event) {
	l.section(fmt.Sprintf("Audit trail (%d %s)", len(events), plural(len(events), "event", "events")))
	if len(events) == 0 {
		l.note("No events were recorded.")
	}
	shown := min(len(events), maxEvents)
	for i, ev := range events[:shown] {
		if l.budget <= 0 {
			l.note(fmt.Sprintf("%d further events not shown: the certificate's limit of %d characters was reached.", len(events)-i, maxTotalRunes))
			return
		}
		l.event(i, ev)
	}
	if len(events) > shown {
		l.note(fmt.Sprintf("%d further events not shown: at most %d events are listed.", len(events)-shown, maxEvents))
	}
}

// event draws an event's number, type and time, then its data.
func (l *layout) event(i int, ev Event) {
	l.top -= 0.3 * l.m.lh
	l.ensure(2 * l.m.lh)
	l.row(fmt.Sprintf("%d. %s", i+1, cleanShort(ev.Type, maxNameRunes)), formatTime(ev.Timestamp), 0, l.strong())
	var first []string
	if ev.Type == "field_change" {
		first = fieldChangeKeys
	}
	l.entries(flattenData(ev.Data, first))
}

// entries draws flattened data rows, indented under their event or section.
func (l *layout) entries(rows []entry, omitted int) {
	for _, e := range rows {
		if e.image != "" {
			l.imageRow(e.key, e.image)
		} else {
			l.row(e.key, e.value, l.m.fs, l.label())
		}
	}
	if omitted > 0 {
		l.note(fmt.Sprintf("%d more values not shown: at most %d are listed per object.", omitted, maxEntries))
	}
}

// imageRow draws an image (a drawn signature) in the value column, scaled to
// fit, or says why it is not shown.
func (l *layout) imageRow(label, uri string) {
	img, err := l.doc.image(uri)
	if err != nil {
		l.row(label, "[image not shown: "+err.Error()+"]", l.m.fs, l.label())
		return
	}
	m := l.m
	maxH := min(8*m.fs, (m.height-2*m.margin)/4)
	scale := min(m.valueW/float64(img.width), maxH/float64(img.height), 1)
	w, h := float64(img.width)*scale, float64(img.height)*scale
	labels := l.sh.lines(label, m.fs, m.labelW-m.fs)
	x := m.valueX
	if m.stacked {
		l.drawLines(labels, m.x0+m.fs, l.label())
		labels = nil
	}
	l.ensure(max(h, float64(len(labels))*m.lh))
	top := l.top
	for _, ln := range labels {
		l.drawLine(ln, m.x0+m.fs, l.label())
		l.top -= m.lh
	}
	l.pg.image(img, x, top-h, w, h)
	l.pg.rect(x, top-h, w, h, 0.85, 0.4, false)
	l.top = min(l.top, top-h) - 0.4*m.lh
}

// footers writes "Event … / Certificate page i of n" at the bottom of every
// page, once the number of pages is known.
func (l *layout) footers(id string) {
	m, st := l.m, l.small()
	n := len(l.doc.pages)
	y := m.margin + 0.25*m.fs
	for i, p := range l.doc.pages {
		right := l.sh.lines(fmt.Sprintf("Certificate page %d of %d", i+1, n), st.size, m.contentW)[0]
		p.rule(m.x0, m.x0+m.contentW, m.margin+1.2*m.lh, 0.7, 0.5)
		p.text(l.doc, right, m.x0+m.contentW-right.width, y, st)
		if left := l.sh.lines(id, st.size, m.contentW-right.width-2*m.fs); len(left) > 0 {
			p.text(l.doc, left[0], m.x0, y, st)
		}
	}
}

// footerID names the signing event on every page: its id, or else the
// document's hash.
func footerID(d Data) string {
	if id, _ := cleanText(d.EventID, 64); id != "" {
		return "Event " + id
	}
	if h, _ := cleanText(d.DocumentSHA256, 16); h != "" {
		return "Document SHA-256 " + h
	}
	return ""
}

// Time layouts: all times are shown in UTC, and say so.
const (
	secondsUTC = "2006-01-02 15:04:05 UTC"
	eventUTC   = "2006-01-02 15:04:05.999 UTC" // the fraction of a second only when there is one
)

// signingTime shows the signing time to the second, in UTC, with the date
// in words.
func signingTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	return t.Format(secondsUTC) + " (" + t.Format("Monday, 2 January 2006") + ")"
}

// formatTime shows a time of the certificate or the audit trail in UTC:
// events keep milliseconds, which order events of one second.
func formatTime(t time.Time) string {
	if t.IsZero() {
		return "(no time given)"
	}
	return t.UTC().Format(eventUTC)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
