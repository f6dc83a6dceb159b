package pdfsign

import "errors"

// ErrSignatureTooLarge: the CMS signature does not fit the space reserved
// for it (Options.ContentsSize). Errors caused by the document itself wrap
// the sentinel errors of package pdf.
var ErrSignatureTooLarge = errors.New("pdfsign: signature does not fit the reserved space")
