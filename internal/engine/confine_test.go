package engine

import "testing"

// TestInstallRoot: a LibreOffice outside /usr is bound whole: the parent
// of its program directory, or the directory Debian's packages were
// extracted into, whose links lead to its etc/ and usr/share/.
func TestInstallRoot(t *testing.T) {
	for _, c := range []struct{ programDir, want string }{
		{"/opt/libreoffice7.6/program", "/opt/libreoffice7.6"},
		{"/opt/libreoffice-7.4/usr/lib/libreoffice/program", "/opt/libreoffice-7.4"},
		{"/srv/lo/usr/lib/libreoffice/program/extra", "/srv/lo/usr/lib/libreoffice/program"},
	} {
		if got := installRoot(c.programDir); got != c.want {
			t.Errorf("installRoot(%q) = %q, want %q", c.programDir, got, c.want)
		}
	}
}
