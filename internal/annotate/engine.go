package annotate

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/image/font/opentype"

	"github.com/quire-dev/quire/internal/ooxml"
)

// Limits bound what one fill may cost.
type Limits struct {
	Package        ooxml.Limits    // the template's ZIP package
	XML            ooxml.XMLLimits // each part parsed
	MaxImageBytes  int64           // an image or signature, inline or downloaded
	MaxImagePixels int64           // width x height of an image or signature
}

// DefaultLimits are the limits when none are configured.
var DefaultLimits = Limits{
	Package:        ooxml.Limits{MaxEntries: 10000, MaxPartSize: 64 << 20, MaxTotalSize: 256 << 20},
	XML:            ooxml.XMLLimits{MaxElements: 2_000_000, MaxDepth: 256},
	MaxImageBytes:  10 << 20,
	MaxImagePixels: 40_000_000,
}

// Fetcher downloads what a URL names, templates and images; (*fetch.Fetcher).Get is one.
type Fetcher func(ctx context.Context, url string) ([]byte, error)

// Engine fills templates. It is safe for concurrent use.
type Engine struct {
	limits Limits
	fetch  Fetcher
	font   *opentype.Font // signature stamp labels
}

// NewEngine returns an engine that downloads images with fetch and writes
// signature labels in the TrueType font at fontPath.
func NewEngine(l Limits, fetch Fetcher, fontPath string) (*Engine, error) {
	data, err := os.ReadFile(fontPath)
	if err != nil {
		return nil, fmt.Errorf("annotate: reading the label font (Debian package fonts-dejavu-core): %w", err)
	}
	f, err := opentype.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("annotate: parsing the label font %s: %w", fontPath, err)
	}
	return &Engine{limits: l, fetch: fetch, font: f}, nil
}
