package safeinput

import "testing"

func TestWithoutIncludeFields(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{\rtf1 a{\field{\*\fldinst INCLUDEPICTURE "/etc/x.png"}{\fldrslt x}}b}`, `{\rtf1 a{\field{\*\fldinst }{\fldrslt x}}b}`},
		{`{\rtf1 {\field{\*\fldinst {\b INCLUDE}{PICTURE "/x.png" \\d}}{\fldrslt x}}}`, `{\rtf1 {\field{\*\fldinst }{\fldrslt x}}}`},
		{`{\rtf1 {\field{\*\fldinst \'49NCLUDETEXT "/x.txt"}{\fldrslt x}}}`, `{\rtf1 {\field{\*\fldinst }{\fldrslt x}}}`},
		{`{\rtf1 {\field{\fldinst  import "/x.png"}{\fldrslt x}}}`, `{\rtf1 {\field{\*\fldinst }{\fldrslt x}}}`},
		// Other fields, and the word in the text, stay.
		{`{\rtf1 INCLUDEPICTURE {\field{\*\fldinst PAGE}{\fldrslt 1}}{\field{\*\fldinst HYPERLINK "http://x/"}{\fldrslt x}}}`, ""},
		{`{\rtf1 {\pict\bin4 {}}}{\field{\*\fldinst LINK x}{\fldrslt x}}}`, `{\rtf1 {\pict\bin4 {}}}{\field{\*\fldinst }{\fldrslt x}}}`},
	} {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := string(withoutIncludeFields([]byte(c.in))); got != want {
			t.Errorf("withoutIncludeFields(%s):\n got %s\nwant %s", c.in, got, want)
		}
	}
}
