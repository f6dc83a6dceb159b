//go:build cgo

// Package lok is a minimal binding to LibreOfficeKit, LibreOffice's C API,
// with only what document conversion needs: start an office, load a
// document, save it in another format.
//
// LibreOffice is not thread-safe and installs process-wide signal handlers,
// so an Office must be created and used from a single goroutine locked to
// its OS thread (runtime.LockOSThread), in a process that does nothing
// else: see package libreoffice, whose worker processes are the only users.
//
// Build requirements: cgo and the headers of Debian's libreofficekit-dev
// (/usr/include/LibreOfficeKit). At run time the LibreOffice program
// directory (libreoffice-writer-nogui on Debian) is opened with dlopen, so
// the binary does not link against LibreOffice.
package lok

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <LibreOfficeKit/LibreOfficeKitInit.h>

// Values of LibreOfficeKitEnums.h, which C cannot include (it has C++ in
// its unstable part); LibreOffice keeps them stable.
enum {
	quire_feature_password = 1 << 0,           // LOK_FEATURE_DOCUMENT_PASSWORD
	quire_feature_password_to_modify = 1 << 1, // LOK_FEATURE_DOCUMENT_PASSWORD_TO_MODIFY
	quire_callback_password = 20,              // LOK_CALLBACK_DOCUMENT_PASSWORD
	quire_callback_password_to_modify = 21,    // LOK_CALLBACK_DOCUMENT_PASSWORD_TO_MODIFY
};

// The API is a table of function pointers, which Go cannot call directly;
// these wrappers make each call a plain C function.

static LibreOfficeKit *quire_init(const char *dir, const char *profile) {
	return lok_init_2(dir, profile);
}

static char *quire_error(LibreOfficeKit *kit) { return kit->pClass->getError(kit); }

static void quire_free_error(LibreOfficeKit *kit, char *s) {
	if (s == NULL) return;
	if (LIBREOFFICEKIT_HAS(kit, freeError)) kit->pClass->freeError(s);
	else free(s);
}

static char *quire_version(LibreOfficeKit *kit) {
	if (!LIBREOFFICEKIT_HAS(kit, getVersionInfo)) return NULL;
	return kit->pClass->getVersionInfo(kit);
}

static LibreOfficeKitDocument *quire_load(LibreOfficeKit *kit, const char *url, const char *options) {
	return kit->pClass->documentLoadWithOptions(kit, url, options);
}

static int quire_save(LibreOfficeKitDocument *doc, const char *url, const char *format, const char *options) {
	return doc->pClass->saveAs(doc, url, format, options);
}

static void quire_close(LibreOfficeKitDocument *doc) { doc->pClass->destroy(doc); }

// Encrypted documents. With LOK_FEATURE_DOCUMENT_PASSWORD on, a load that
// meets an encrypted document calls the office's callback, on the loading
// thread, and waits until setDocumentPassword answers for that URL: with a
// password, or NULL to give up. LibreOffice asks again when the password is
// wrong; quire_password answers once, and then gives up. A password to
// modify (write protection) is declined: the document opens read-only,
// which is all a conversion needs.
static const char *quire_password;
static int quire_password_asked;

static void quire_callback(int type, const char *payload, void *data) {
	LibreOfficeKit *kit = data;
	switch (type) {
	case quire_callback_password:
		quire_password_asked++;
		kit->pClass->setDocumentPassword(kit, payload, quire_password_asked == 1 ? quire_password : NULL);
		break;
	case quire_callback_password_to_modify:
		kit->pClass->setDocumentPassword(kit, payload, NULL);
		break;
	}
}

// quire_load_password loads url, answering a password request with
// password; *asked tells how often LibreOffice asked for it. The callback
// and the feature are on for this load only, so that other loads run as
// without them.
static LibreOfficeKitDocument *quire_load_password(LibreOfficeKit *kit, const char *url, const char *options, const char *password, int *asked) {
	quire_password = password;
	quire_password_asked = 0;
	kit->pClass->registerCallback(kit, quire_callback, kit);
	kit->pClass->setOptionalFeatures(kit, quire_feature_password | quire_feature_password_to_modify);
	LibreOfficeKitDocument *doc = kit->pClass->documentLoadWithOptions(kit, url, options);
	kit->pClass->setOptionalFeatures(kit, 0);
	kit->pClass->registerCallback(kit, NULL, NULL);
	*asked = quire_password_asked;
	quire_password = NULL;
	return doc;
}

// LibreOffice's global lock (the SolarMutex) is not part of
// LibreOfficeKit; Application::AcquireSolarMutex and ReleaseSolarMutex are
// C++ functions that the library LibreOfficeKit loaded exports.
static void (*quire_acquire_fn)(unsigned int);
static unsigned int (*quire_release_fn)(void);

static bool quire_find_lock(const char *lib, int mode) {
	void *h = dlopen(lib, mode);
	if (h == NULL) return false;
	quire_acquire_fn = (void (*)(unsigned int))dlsym(h, "_ZN11Application17AcquireSolarMutexEj");
	quire_release_fn = (unsigned int (*)(void))dlsym(h, "_ZN11Application17ReleaseSolarMutexEv");
	return quire_acquire_fn != NULL && quire_release_fn != NULL;
}

static void quire_lock(void) { quire_acquire_fn(1); }
static void quire_unlock(void) { quire_release_fn(); }
*/
import "C"

import (
	"fmt"
	"path/filepath"
	"unsafe"
)

// Office is one LibreOffice instance. At most one may exist per process,
// and it lives as long as the process: there is no Close, because a worker
// simply exits (LibreOffice has nothing to save, and destroying it first
// only slows down the recycling of workers).
type Office struct {
	kit      *C.LibreOfficeKit
	lockable bool // LibreOffice's global lock was found: see Lock
}

// Error is a failure of LibreOffice to load or save a document.
type Error struct {
	Op     string // "load" or "save"
	URL    string // the document
	Detail string // LibreOffice's own message, often empty
	// WrongPassword: the document is encrypted and the password given
	// to Load does not open it.
	WrongPassword bool
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("LibreOffice could not %s %s", e.Op, e.URL)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// New starts LibreOffice from its program directory (on Debian
// /usr/lib/libreoffice/program, which holds libmergedlo.so) with the user
// profile at profileURL, a file:// URL of a directory of its own.
func New(programDir, profileURL string) (*Office, error) {
	cdir := C.CString(programDir)
	defer C.free(unsafe.Pointer(cdir))
	cprofile := C.CString(profileURL)
	defer C.free(unsafe.Pointer(cprofile))
	kit := C.quire_init(cdir, cprofile)
	if kit == nil {
		return nil, fmt.Errorf("LibreOfficeKit did not start from %s with profile %s (is libreoffice-writer-nogui installed? its own message is on stderr)", programDir, profileURL)
	}
	return &Office{kit: kit, lockable: findLock(programDir, C.RTLD_NOLOAD)}, nil // lok_init_2 loaded the library
}

// findLock looks up LibreOffice's lock in the library of programDir that
// LibreOfficeKit loads, opened with dlopen's mode.
func findLock(programDir string, mode C.int) bool {
	lib := C.CString(filepath.Join(programDir, "libmergedlo.so"))
	defer C.free(unsafe.Pointer(lib))
	return bool(C.quire_find_lock(lib, C.RTLD_LAZY|mode))
}

// Lock takes LibreOffice's global lock for the calling thread and returns
// the function that releases it. LibreOfficeKit runs LibreOffice's main
// loop in a thread of its own, which runs the idle tasks of open documents
// (Writer's background layout, word count, word completion) whenever no
// call holds the lock, for instance between loading and saving, or after
// saving; while the caller holds it, they wait. The calls of this package
// take the lock again on their own, which it allows. Where LibreOffice
// does not export its lock (a build without libmergedlo.so), Lock does
// nothing.
func (o *Office) Lock() (unlock func()) {
	if !o.lockable {
		return func() {}
	}
	C.quire_lock()
	return func() { C.quire_unlock() }
}

// Version returns LibreOffice's version information (JSON), or "".
func (o *Office) Version() string {
	s := C.quire_version(o.kit)
	defer C.quire_free_error(o.kit, s)
	return C.GoString(s)
}

// Document is a document loaded in an Office. It must be closed, on the
// goroutine that uses the Office, once it is no longer needed.
type Document struct {
	office *Office
	doc    *C.LibreOfficeKitDocument
	url    string
}

// Load loads the document at inURL. options is LibreOfficeKit's option
// string for documentLoadWithOptions, e.g. "EnableMacrosExecution=false".
// password opens an encrypted document; "" opens only documents that
// are not encrypted.
func (o *Office) Load(inURL, options, password string) (*Document, error) {
	cin := C.CString(inURL)
	defer C.free(unsafe.Pointer(cin))
	copts := C.CString(options)
	defer C.free(unsafe.Pointer(copts))
	var doc *C.LibreOfficeKitDocument
	asked := C.int(0)
	if password == "" {
		doc = C.quire_load(o.kit, cin, copts)
	} else {
		cpw := C.CString(password)
		defer func() { C.memset(unsafe.Pointer(cpw), 0, C.size_t(len(password))); C.free(unsafe.Pointer(cpw)) }()
		doc = C.quire_load_password(o.kit, cin, copts, cpw, &asked)
	}
	if doc == nil {
		e := &Error{Op: "load", URL: inURL, Detail: o.lastError()}
		if asked > 1 {
			e.Detail, e.WrongPassword = "the password is wrong", true
		}
		return nil, e
	}
	return &Document{office: o, doc: doc, url: inURL}, nil
}

// SaveAs saves the document to outURL in format (a file extension such as
// "pdf", from which LibreOffice picks the export filter for the document's
// type), with LibreOfficeKit's comma-separated filter options.
func (d *Document) SaveAs(outURL, format, options string) error {
	cout := C.CString(outURL)
	defer C.free(unsafe.Pointer(cout))
	cformat := C.CString(format)
	defer C.free(unsafe.Pointer(cformat))
	copts := C.CString(options)
	defer C.free(unsafe.Pointer(copts))
	if C.quire_save(d.doc, cout, cformat, copts) == 0 {
		return &Error{Op: "save", URL: d.url, Detail: d.office.lastError()}
	}
	return nil
}

// Close releases the document: its view, its layout and its model.
func (d *Document) Close() {
	C.quire_close(d.doc)
	d.doc = nil
}

func (o *Office) lastError() string {
	s := C.quire_error(o.kit)
	defer C.quire_free_error(o.kit, s)
	return C.GoString(s)
}
