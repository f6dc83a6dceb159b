package annotate

import (
	"context"
	"log/slog"
	"time"

	"github.com/quire-dev/quire"
	"github.com/quire-dev/quire/internal/engine"
	"github.com/quire-dev/quire/internal/fetch"
	"github.com/quire-dev/quire/internal/ooxml"
)

// Converter turns a filled DOCX into a PDF, with its pages: the template
// as opened, with the filling's edits, which it checks (the template) and
// writes out (the edits with its own) once; *libreoffice.Pool is one. nil
// refuses PDF output.
type Converter interface {
	ConvertEdited(ctx context.Context, template *ooxml.Package, edits *ooxml.Edits) (engine.Result, error)
}

// Content types of the answers.
const (
	ContentTypeDOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	ContentTypePDF  = "application/pdf"
)

// Service answers fill requests: it obtains the template, fills it and
// converts it when asked.
type Service struct {
	engine   *Engine
	conv     Converter
	maxBytes int64
	log      *slog.Logger
}

// NewService returns the service. The engine's fetcher downloads document
// URLs too; maxBytes bounds the template.
func NewService(e *Engine, conv Converter, maxBytes int64, log *slog.Logger) *Service {
	return &Service{engine: e, conv: conv, maxBytes: maxBytes, log: log}
}

// MaxDocumentBytes is the largest template accepted.
func (s *Service) MaxDocumentBytes() int64 { return s.maxBytes }

// Result is a filled document.
type Result struct {
	Document    []byte
	ContentType string
	Pages       int64 // the PDF's pages as the converter counted them, for metering; 0 for a DOCX
	Report
}

// Check runs the checks of Annotate that spend no time on its work
// (downloads, filling, conversion): the request, and a template sent
// inline: its package and the parts a filling reads, within the limits.
// A template named by URL is checked once downloaded, when the job runs.
// A job's submission runs it, so that a request Annotate would refuse is
// refused before it is queued, as it would be.
func (s *Service) Check(ctx context.Context, req Request) error {
	if err := req.Validate(); err != nil || req.Document.URL != "" {
		return err
	}
	_, err := s.engine.open(ctx, req.Document.Bytes, false)
	return err
}

// Annotate validates req, fills its template and converts it when asked.
func (s *Service) Annotate(ctx context.Context, req Request) (Result, error) {
	if err := req.Validate(); err != nil {
		return Result{}, err
	}
	if req.PDF && s.conv == nil {
		return Result{}, quire.Errorf(quire.CodeUnavailable, "PDF output is not available: conversion is disabled on this server.")
	}
	docx := req.Document.Bytes
	if req.Document.URL != "" {
		var err error
		if docx, err = s.engine.fetch(ctx, req.Document.URL); err != nil {
			s.log.Info("document download failed", "err", err)
			return Result{}, fetch.ToAPIError(err, "document.url")
		}
		if int64(len(docx)) > s.maxBytes {
			return Result{}, quire.Errorf(quire.CodePayloadTooLarge, "The document is larger than the limit of %d bytes.", s.maxBytes)
		}
	}
	if !req.PDF {
		out, rep, err := s.engine.Fill(ctx, docx, req.Fields)
		return Result{Document: out, ContentType: ContentTypeDOCX, Report: rep}, err
	}
	template, edits, rep, err := s.engine.FillForConversion(ctx, docx, req.Fields)
	if err != nil {
		return Result{}, err
	}
	out, err := s.conv.ConvertEdited(ctx, template, edits)
	if err != nil {
		return Result{}, engine.ToAPIError(err, 5*time.Second)
	}
	return Result{Document: out.Output, ContentType: ContentTypePDF, Pages: out.Pages, Report: rep}, nil
}
