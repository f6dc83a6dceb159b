package libreoffice

import (
	"encoding/json"
	"testing"

	"github.com/quire-dev/quire/internal/engine"
)

func TestFilterOptions(t *testing.T) {
	if got := filterOptions(engine.JobOptions{}, engine.ToPDF); got != pdfExportOptions {
		t.Errorf("no options: %s, want the plain path's %s", got, pdfExportOptions)
	}
	if got := filterOptions(engine.JobOptions{Landscape: true, Password: "x"}, engine.ToPDF); got != pdfExportOptions {
		t.Errorf("options that are not the export's: %s, want %s", got, pdfExportOptions)
	}
	if got := filterOptions(engine.JobOptions{}, engine.ToDOCX); got != "" {
		t.Errorf("DOCX: %q, want none", got)
	}
	yes := true
	o := engine.JobOptions{PDFA: "PDF/A-3b", PDFUA: true, PageRanges: "2-4", ExportFormFields: &yes, Quality: 70, ReduceImageResolution: true,
		Export: map[string]bool{"ExportNotes": true, "ExportBookmarks": false}}
	var got map[string]filterOption
	if err := json.Unmarshal([]byte(filterOptions(o, engine.ToPDF)), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]filterOption{
		"ExportLinksRelativeFsys": {"boolean", "true"}, "SelectPdfVersion": {"long", "3"},
		"PDFUACompliance": {"boolean", "true"}, "UseTaggedPDF": {"boolean", "true"}, "PageRange": {"string", "2-4"},
		"ExportFormFields": {"boolean", "true"}, "Quality": {"long", "70"},
		"ReduceImageResolution": {"boolean", "true"}, "MaxImageResolution": {"long", "300"},
		"ExportNotes": {"boolean", "true"}, "ExportBookmarks": {"boolean", "false"},
	}
	if len(got) != len(want) {
		t.Errorf("filter options %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
