package certpage

import (
	"fmt"
	"strings"
	"unicode"
)

// Limits applied to caller-supplied text. Names and audit data come from API
// callers, so every string is bounded before it reaches the shaper: this keeps
// the time and size of a render predictable whatever the request holds.
const (
	maxNameRunes   = 200 // signer name, e-mail, event type, metadata keys
	maxValueRunes  = 300 // one value of metadata or of an event's data
	maxHintRunes   = 1000
	maxMarksInARow = 4 // combining marks kept after one base character
)

// cleanText makes untrusted text safe and predictable to lay out, and shortens
// it to max runes (an ellipsis marks the cut). It reports how many runes the
// cleaned text had before shortening, so the caller can say what was cut.
//
// It replaces invalid UTF-8 with U+FFFD, turns tabs, newlines and other
// whitespace into single spaces (a value is laid out as one paragraph),
// removes control characters and format characters other than ZWJ/ZWNJ (the
// latter two are needed by Arabic and Indic shaping; bidi overrides and
// isolates are removed so that a value cannot reorder how it is displayed),
// and keeps at most maxMarksInARow combining marks per base character so that
// stacked marks cannot grow a line far beyond its height.
func cleanText(s string, max int) (out string, total int) {
	var b strings.Builder
	b.Grow(min(len(s), 4*max+4))
	kept, marks := 0, 0
	pendingSpace := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			pendingSpace = total > 0
			continue
		case unicode.IsControl(r):
			continue
		case unicode.Is(unicode.Cf, r) && r != '\u200c' && r != '\u200d':
			continue
		case unicode.In(r, unicode.Mn, unicode.Me):
			if marks++; marks > maxMarksInARow {
				continue
			}
		default:
			marks = 0
		}
		if pendingSpace {
			total++
			if kept < max {
				b.WriteByte(' ')
				kept++
			}
			pendingSpace = false
		}
		total++
		if kept < max {
			b.WriteRune(r)
			kept++
		}
	}
	if total > max {
		return strings.TrimRight(b.String(), " ") + "…", total
	}
	return b.String(), total
}

// shortNote says how a value was shortened, e.g. "(shortened: first 300 of
// 5120 characters)"; it is empty when the value was shown whole.
func shortNote(max, total int) string {
	if total <= max {
		return ""
	}
	return fmt.Sprintf("(shortened: first %d of %d characters)", max, total)
}

// cleanShort is cleanText with the note about shortening appended, for
// values that are shown in one piece.
func cleanShort(s string, max int) string {
	out, total := cleanText(s, max)
	if note := shortNote(max, total); note != "" {
		return out + " " + note
	}
	return out
}
