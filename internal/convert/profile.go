package convert

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
)

// The documents converted here are untrusted: they must not run macros,
// fetch remote content (a linked image is a tracking pixel, or a probe of
// the internal network), or read local files into the output (a linked
// image or an included file can name any path on the server). Each
// worker's LibreOffice profile is written before the worker starts with
// these settings of LibreOffice's configuration schema (officecfg, whose
// values were checked against LibreOffice 7.4's share/registry/main.xcd):
//
//   - Common/Security/Scripting/BlockUntrustedRefererLinks = true: links
//     from a document outside the trusted locations are not followed. This
//     is the setting that stops linked images (DOCX r:link, INCLUDEPICTURE,
//     HTML <img>) from being fetched over HTTP or read from file:// paths;
//     the tests prove it with a loopback listener and a local image.
//   - Common/Security/Scripting/SecureURL = empty: there are no trusted
//     locations, so the rule above applies to every document.
//   - Common/Security/Scripting/MacroSecurityLevel = 3 ("very high": only
//     macros from trusted locations, of which there are none),
//     DisableMacrosExecution = true (no macros at all, whatever the level),
//     OfficeBasic = 0 (never run Basic) and ExecutePlugins = false.
//   - Writer/Content/Update/Link = 0 (sw's UpdateLinks NEVER) and
//     Calc/Content/Update/Link = 1 (sc's ScLkUpdMode LM_NEVER): linked
//     sections, DDE links and linked OLE objects are never refreshed from
//     their source. (The two schemas number "never" differently.)
//   - Java/VirtualMachine/Enable = false: no Java, which conversion does
//     not need and which would widen what a document can reach.
//
// The worker also loads each document with EnableMacrosExecution=false
// (see worker.go), which LibreOfficeKit maps to MacroExecutionMode NEVER.
const registryModifications = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="SecureURL" oor:op="fuse"><value/></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="OfficeBasic" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="ExecutePlugins" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Content/Update"><prop oor:name="Link" oor:op="fuse"><value>1</value></prop></item>
<item oor:path="/org.openoffice.Office.Java/VirtualMachine"><prop oor:name="Enable" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
`

// writeProfile (re)writes the settings above into the LibreOffice profile
// at dir, creating it if needed. It runs before every worker start, so
// that nothing a previous instance saved into the profile can weaken them.
func writeProfile(dir string) error {
	user := filepath.Join(dir, "user")
	if err := os.MkdirAll(user, 0o700); err != nil {
		return fmt.Errorf("convert: create LibreOffice profile: %w", err)
	}
	if err := os.WriteFile(filepath.Join(user, "registrymodifications.xcu"), []byte(registryModifications), 0o600); err != nil {
		return fmt.Errorf("convert: write LibreOffice profile settings: %w", err)
	}
	return nil
}

// fileURL returns the file:// URL of the absolute path p, as LibreOffice
// wants for profiles and documents.
func fileURL(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}
