package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryCommandsHelp: each command's -h and --help work anywhere (here
// without a data directory), exit 0 and show the command's usage, then
// its own flags, before the settings every command shares.
func TestEveryCommandsHelp(t *testing.T) {
	t.Setenv("QUIRE_DATA_DIR", filepath.Join(t.TempDir(), "absent"))
	own := map[string]string{ // an own flag of each command; "" for none
		"serve": "", "init": "", "backup": "", "restore": "", "health": "-live", "keys": "", "keys list": "-json",
		"keys create": "-email", "keys limit": "-concurrent", "keys revoke": "", "license": "", "license create": "-org",
		"license hosts": "-clear", "license list": "", "usage": "-api", "convert": "-from", "sign": "-email",
		"verify": "", "docid": "-stamp", "pdf": "", "pdf merge": "-o", "jobs": "", "jobs list": "-json", "jobs show": "", "jobs cancel": "",
	}
	for _, c := range commands() {
		if _, ok := own[c.name]; !ok && c.name != "version" {
			t.Errorf("quire %s: its help is not checked here", c.name)
		}
	}
	for command, flag := range own {
		for _, h := range []string{"-h", "--help"} {
			var stdout, stderr bytes.Buffer
			code := run(append(strings.Fields(command), h), &stdout, &stderr)
			out := stdout.String() + stderr.String()
			name := "quire " + command + " " + h
			if code != 0 || !strings.HasPrefix(out, "usage: quire "+strings.Fields(command)[0]) {
				t.Errorf("%s: exit %d, output %.200q; want 0 and the usage first", name, code, out)
				continue
			}
			settings := strings.Index(out, "\nsettings")
			switch {
			case command == "keys" || command == "license" || command == "docid" || command == "pdf" || command == "jobs":
				settings = len(out) // no settings: they name the subcommands, or need none
			case settings < 0 || !strings.Contains(out[settings:], "\n  -data-dir "):
				t.Errorf("%s: no settings after the usage:\n%s", name, out)
				continue
			}
			if flag != "" && !strings.Contains(out[:settings], "\n  "+flag+" ") && !strings.Contains(out[:settings], "\n  "+flag+"\n") {
				t.Errorf("%s: its own flag %s is not listed before the settings:\n%.600s", name, flag, out)
			}
		}
	}
}
