package certpage

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Bounds on how much of one event's data (or of the metadata) is shown.
const (
	maxDepth   = 8   // nesting levels followed when flattening
	maxEntries = 100 // rows shown for one object; the rest are counted
)

// entry is one "key: value" row of event data or metadata. Nested objects are
// flattened into dotted keys ("a.b"), arrays into indexed ones ("a[0]").
type entry struct {
	key   string
	value string // cleaned text, possibly with a note saying it was shortened
	image string // set instead of value when the value is a data: URI image
}

// fieldChangeKeys are the keys that name the field and its new value in a
// field_change event, whatever spelling the caller's front end uses; they are
// listed first so that the row reads "field … value …".
var fieldChangeKeys = []string{"fieldId", "field_id", "field", "id", "name", "value", "newValue", "new_value"}

// flattenData turns an event's data or the request's metadata into rows,
// keys sorted (map order is random) with the keys in first, if present,
// ahead of the others. It returns the rows and how many values were left out
// because of maxEntries: an omitted nested object or array counts once, however
// many values it holds, since it is skipped without being walked.
func flattenData(m map[string]any, first []string) (rows []entry, omitted int) {
	f := flattener{}
	f.object("", m, 0, first)
	return f.rows, f.omitted
}

type flattener struct {
	rows    []entry
	omitted int
}

func (f *flattener) object(prefix string, m map[string]any, depth int, first []string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		pa, pb := keyRank(a, first), keyRank(b, first)
		if pa != pb {
			return pa - pb
		}
		return strings.Compare(a, b)
	})
	for _, k := range keys {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		f.value(name, m[k], depth+1)
	}
}

// keyRank orders the keys listed in first before all others.
func keyRank(k string, first []string) int {
	if i := slices.Index(first, k); i >= 0 {
		return i
	}
	return len(first)
}

func (f *flattener) value(name string, v any, depth int) {
	if len(f.rows) >= maxEntries {
		f.omitted++
		return
	}
	if depth > maxDepth {
		f.add(name, fmt.Sprintf("(nested deeper than %d levels; not shown)", maxDepth))
		return
	}
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			f.add(name, "{}")
			return
		}
		f.object(name, v, depth, nil)
	case []any:
		if len(v) == 0 {
			f.add(name, "[]")
			return
		}
		for i, e := range v {
			f.value(name+"["+strconv.Itoa(i)+"]", e, depth+1)
		}
	case string:
		if isImageDataURI(v) {
			f.rows = append(f.rows, entry{key: cleanShort(name, maxNameRunes), image: v})
			return
		}
		f.add(name, cleanShort(v, maxValueRunes))
	default:
		f.add(name, cleanShort(scalarText(v), maxValueRunes))
	}
}

func (f *flattener) add(name, value string) {
	if value == "" {
		value = `""`
	}
	f.rows = append(f.rows, entry{key: cleanShort(name, maxNameRunes), value: value})
}

// scalarText formats a JSON scalar the way JSON would show it: numbers without
// an exponent where they are of a usual size, null for nil.
func scalarText(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case float64:
		return formatNumber(v)
	case json.Number:
		return v.String()
	default:
		return fmt.Sprint(v)
	}
}

func formatNumber(v float64) string {
	a := math.Abs(v)
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// isImageDataURI reports whether s is a data: URI of an image, such as the
// drawn signature a signing front end sends as data:image/png;base64,….
func isImageDataURI(s string) bool {
	const p = "data:image/"
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}
