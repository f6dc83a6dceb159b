package pdftools

import "github.com/quire-dev/quire"

func (s *Service) flatten(in *input) (Result, error) {
	return Result{}, quire.Errorf(quire.CodeUnprocessable, "flatten is not available yet on this server.")
}
