package libreoffice

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/quire-dev/quire/internal/engine"
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
//     HTML <img>) from being fetched over HTTP or read from file:// paths.
//     It is not enough alone: LibreOffice 7.4 still loaded CSS images, the
//     links of SVG images, and INCLUDEPICTURE fields of RTF and DOC files
//     that name a plain path; the input's rewriting and the workers'
//     namespaces stop those (sandbox.go).
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
//
// Speed. LibreOfficeKit opens every document in a view of its own, with
// the user interface of a desktop window, and builds that interface anew
// for each document. These settings turn off the parts a conversion never
// shows; none of them changes the PDF (on the corpus, every page renders
// the same with and without them). Savings in median CPU time per
// document on the corpus, which took 55 ms without any of them:
//
//   - Views/Windows/swriter/10336 hidden (Visible = false, and "H" in the
//     state string that the sidebar's child window reads first): the
//     sidebar, whose decks and panels LibreOffice builds from .ui files
//     for every document, on its main thread, while the export waits for
//     it. About 17 ms.
//   - UI.WriterWindowState .../private:resource/statusbar/statusbar
//     hidden: no status bar and its controllers. About 2 ms.
//   - Common/Misc/UseLocking = false: no lock file beside the document
//     (each job has a private directory that nothing else opens). About
//     2 ms.
//   - Linguistic/SpellChecking/IsSpellAuto = false: no automatic spell
//     checking in the background (its marks are never exported). About
//     1 ms.
//   - Writer/AutoFunction/Completion: Enable and CollectWords = false: no
//     word completion, whose idle task otherwise collects the long words
//     of every document for the suggestion list (3% of the workers' CPU
//     time over the corpus, in LibreOffice's main loop between and after
//     jobs, where it competes with the next conversion). Since workers hold
//     LibreOffice's lock through each job (worker.go), no idle task runs
//     on a document where LibreOffice exports that lock; this setting
//     still saves the work where it does not.
//
// The sidebar and the status bar are hidden for Writer/Web too (10336
// under swriter/web, WriterWebWindowState), where HTML and Markdown open.
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
<item oor:path="/org.openoffice.Office.Views/Windows"><node oor:name="swriter/10336" oor:op="replace"><prop oor:name="Visible" oor:op="fuse"><value>false</value></prop><node oor:name="UserData"><prop oor:name="Data" oor:op="fuse" oor:type="xs:string"><value>V2,H,0</value></prop></node></node></item>
<item oor:path="/org.openoffice.Office.Views/Windows"><node oor:name="swriter/web/10336" oor:op="replace"><prop oor:name="Visible" oor:op="fuse"><value>false</value></prop><node oor:name="UserData"><prop oor:name="Data" oor:op="fuse" oor:type="xs:string"><value>V2,H,0</value></prop></node></node></item>
<item oor:path="/org.openoffice.Office.UI.WriterWindowState/UIElements/States"><node oor:name="private:resource/statusbar/statusbar" oor:op="replace"><prop oor:name="Visible" oor:op="fuse"><value>false</value></prop></node></item>
<item oor:path="/org.openoffice.Office.UI.WriterWebWindowState/UIElements/States"><node oor:name="private:resource/statusbar/statusbar" oor:op="replace"><prop oor:name="Visible" oor:op="fuse"><value>false</value></prop></node></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Linguistic/SpellChecking"><prop oor:name="IsSpellAuto" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/AutoFunction/Completion"><prop oor:name="Enable" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Writer/AutoFunction/Completion"><prop oor:name="CollectWords" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
`

// emptyMenuBar replaces Writer's menu bar in the profile (user/config
// overrides share/config): LibreOfficeKit builds the menu bar of every
// document's window, looking up the label and state of each of its
// hundreds of commands, for a window nobody sees. About 5 ms of CPU time
// per document on the corpus.
const emptyMenuBar = `<?xml version="1.0" encoding="UTF-8"?>
<menu:menubar xmlns:menu="http://openoffice.org/2001/menu" menu:id="menubar">
</menu:menubar>
`

// profileFiles are the files writeProfile writes, by path under the
// profile's user directory.
var profileFiles = []struct{ path, body string }{
	{"registrymodifications.xcu", registryModifications},
	{"config/soffice.cfg/modules/swriter/menubar/menubar.xml", emptyMenuBar},
	{"config/soffice.cfg/modules/sweb/menubar/menubar.xml", emptyMenuBar}, // HTML (and so Markdown) opens in Writer/Web
}

// pdfExportOptions are options of LibreOffice's PDF export, in the JSON
// form that LibreOffice 7.4 takes from LibreOfficeKit and the command
// line alike: links to files are written relative to the PDF. LibreOffice
// resolves a document's relative links (<a href="other.docx">) against the
// document's location, which is the job's directory on the server; without
// this option the PDF would carry file:// links naming that directory. The
// profile's setting of the same name is not read by the export.
const pdfExportOptions = `{"ExportLinksRelativeFsys":{"type":"boolean","value":"true"}}`

// exportSpec is soffice's --convert-to argument for documents of format
// from to format to, with the export filter's options (filterOptions).
// PDF: the export filter for the document's module (HTML opens in
// Writer/Web, spreadsheets in Calc, presentations in Impress), which the
// command line needs in order to take options. DOCX: Writer's Word
// 2007-365 export.
func exportSpec(from, to, filter string) string {
	switch {
	case to == engine.ToDOCX:
		return "docx:MS Word 2007 XML"
	case from == engine.FromHTML:
		return "pdf:writer_web_pdf_Export:" + filter
	case slices.Contains(Spreadsheets, from):
		return "pdf:calc_pdf_Export:" + filter
	case slices.Contains(Presentations, from):
		return "pdf:impress_pdf_Export:" + filter
	}
	return "pdf:writer_pdf_Export:" + filter
}

// writeProfile (re)writes the settings above into the LibreOffice profile
// at dir, creating it if needed. It runs before every worker start, so
// that nothing a previous instance saved into the profile can weaken them.
func writeProfile(dir string) error {
	for _, f := range profileFiles {
		path := filepath.Join(dir, "user", filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("convert: create LibreOffice profile: %w", err)
		}
		if err := os.WriteFile(path, []byte(f.body), 0o600); err != nil {
			return fmt.Errorf("convert: write LibreOffice profile settings: %w", err)
		}
	}
	return nil
}

// fileURL returns the file:// URL of the absolute path p, as LibreOffice
// wants for profiles and documents.
func fileURL(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}
