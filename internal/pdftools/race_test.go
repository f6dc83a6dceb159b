//go:build race

package pdftools

// raceDetector: this test binary runs under the race detector.
const raceDetector = true
