package safeinput

import (
	"bytes"
	"strconv"
	"strings"
)

// An RTF document loses, before LibreOffice sees it, the instructions of
// its fields that include content from elsewhere (one layer of
// the LibreOffice engine's sandbox.go's three): INCLUDEPICTURE "/path/secret.png" made LibreOffice
// 7.4 embed a local image, whatever its link settings. The field's result,
// the text or picture saved with it, stays. The instruction is read as
// LibreOffice reads it (control words dropped, hex and Unicode escapes
// decoded, text split across groups joined), so that spelling the name
// of the field oddly does not get it through.

// includeFields are the field types that load content from elsewhere.
var includeFields = map[string]bool{
	"INCLUDEPICTURE": true, "INCLUDETEXT": true, "INCLUDE": true, "IMPORT": true,
	"LINK": true, "DDE": true, "DDEAUTO": true,
}

// withoutIncludeFields returns the RTF document in with the instructions
// of its including fields emptied.
func withoutIncludeFields(in []byte) []byte {
	var out bytes.Buffer
	copied := 0      // in[:copied] is in out already
	var groups []int // offsets of the open groups' braces
	field := -1      // depth of the \fldinst group being read, or -1
	var instr strings.Builder
	for i := 0; i < len(in); {
		switch c := in[i]; c {
		case '{':
			groups = append(groups, i)
			i++
		case '}':
			if field == len(groups) && field > 0 {
				start := groups[field-1]
				if includeFields[strings.ToUpper(firstWord(instr.String()))] {
					out.Write(in[copied:start])
					out.WriteString(`{\*\fldinst }`)
					copied = i + 1
				}
				field = -1
			}
			if len(groups) > 0 {
				groups = groups[:len(groups)-1]
			}
			i++
		case '\\':
			word, param, next := rtfControl(in, i)
			switch {
			case word == "fldinst" && field < 0:
				field = len(groups)
				instr.Reset()
			case word == "bin": // binary data: skip it
				next += max(0, param)
			case field < 0:
			case word == "'":
				instr.WriteByte(byte(param))
			case word == "u":
				instr.WriteRune(rune(param))
			case len(word) == 1 && !isLetter(word[0]): // \\, \{, \}
				instr.WriteString(word)
			}
			i = min(next, len(in))
		default:
			if field >= 0 && c != '\r' && c != '\n' {
				instr.WriteByte(c)
			}
			i++
		}
	}
	if copied == 0 {
		return in
	}
	out.Write(in[copied:])
	return out.Bytes()
}

// rtfControl reads the control word or symbol at in[i] (a backslash): its
// name, its numeric parameter (or the value of a \'hh escape, with name
// "'") and the offset after it.
func rtfControl(in []byte, i int) (word string, param, next int) {
	j := i + 1
	if j >= len(in) {
		return "", 0, j
	}
	if in[j] == '\'' { // \'hh
		if j+3 <= len(in) {
			v, _ := strconv.ParseUint(string(in[j+1:j+3]), 16, 8)
			return "'", int(v), j + 3
		}
		return "'", 0, len(in)
	}
	if !isLetter(in[j]) {
		return string(in[j]), 0, j + 1
	}
	k := j
	for k < len(in) && isLetter(in[k]) {
		k++
	}
	word = string(in[j:k])
	d := k
	if d < len(in) && in[d] == '-' {
		d++
	}
	for d < len(in) && in[d] >= '0' && in[d] <= '9' && d-k < 10 {
		d++
	}
	param, _ = strconv.Atoi(string(in[k:d]))
	if d < len(in) && in[d] == ' ' {
		d++
	}
	return word, param, d
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// firstWord returns the first word of a field instruction.
func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
