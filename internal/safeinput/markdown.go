package safeinput

import (
	"bytes"
	"fmt"

	"github.com/quire-dev/quire/internal/engine"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown renders GitHub-flavoured Markdown. Its HTML renderer keeps
// goldmark's safe default: raw HTML in the source is dropped and links
// with dangerous schemes (javascript:, file:, ...) are emptied.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(imageStripper{}, 1000))),
)

// markdownWithImages is markdown keeping images, for Chromium, which
// loads nothing but the request's own files (package chromium): an image
// names one of them by its relative name.
var markdownWithImages = goldmark.New(goldmark.WithExtensions(extension.GFM))

// markdownToHTML turns Markdown into a standalone HTML document, which the
// engine then converts like any HTML input.
func markdownToHTML(src []byte) ([]byte, error) { return renderMarkdown(markdown, src) }

// MarkdownPage turns Markdown into a standalone HTML document for
// Chromium: as markdownToHTML, with its images.
func MarkdownPage(src []byte) ([]byte, error) { return renderMarkdown(markdownWithImages, src) }

func renderMarkdown(md goldmark.Markdown, src []byte) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title></title></head><body>\n")
	if err := md.Convert(src, &b); err != nil {
		return nil, fmt.Errorf("%w: Markdown rendering failed: %v", engine.ErrUnprocessable, err)
	}
	b.WriteString("</body></html>\n")
	return b.Bytes(), nil
}

// imageStripper replaces each image whose source is not an inline raster
// image (a data: URI of PNG, JPEG, ...; an inline SVG can link to files)
// by its alternative text. An image in Markdown is a URL, remote or
// local (a relative path resolves against the engine's files), and the
// engine must fetch neither; LibreOffice's own link blocking (profile.go)
// would stop it too, this makes the rendered HTML harmless by itself.
type imageStripper struct{}

func (imageStripper) Transform(doc *ast.Document, _ text.Reader, _ parser.Context) {
	var images []*ast.Image
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if img, ok := n.(*ast.Image); ok && entering && !rasterDataURI(string(img.Destination)) {
			images = append(images, img)
		}
		return ast.WalkContinue, nil
	})
	for _, img := range images {
		parent := img.Parent()
		for c := img.FirstChild(); c != nil; c = img.FirstChild() {
			img.RemoveChild(img, c)
			parent.InsertBefore(parent, img, c)
		}
		parent.RemoveChild(parent, img)
	}
}
