package render

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These tests read the documents as a person would: LibreOffice opens the
// DOCX and PPTX and prints them to PDF, poppler reads every PDF back. A
// broken part makes LibreOffice drop content and still exit 0, so what
// counts is the text found: case name, figures from the financial tables,
// the watermark, UTF-8 names, page numbers, the charts' legends.
//
// Without soffice/pdftotext/pdfinfo they skip, unless CI is set: CI
// installs them (.ci/run), so there a missing tool fails the test.

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found; CI must install it (.ci/run: poppler-utils, libreoffice-writer-nogui, libreoffice-impress-nogui)", tool)
			}
			t.Skipf("%s not found (apt-get install poppler-utils libreoffice-writer-nogui libreoffice-impress-nogui)", tool)
		}
	}
}

func runTool(t *testing.T, timeout time.Duration, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// convert prints the files to PDF with one LibreOffice run (starting it is
// most of the cost) in its own profile, so parallel tests do not clash.
func convert(t *testing.T, outDir string, files ...string) {
	t.Helper()
	profile := "file://" + filepath.ToSlash(t.TempDir())
	args := append([]string{"-env:UserInstallation=" + profile, "--headless", "--norestore", "--convert-to", "pdf", "--outdir", outDir}, files...)
	runTool(t, 3*time.Minute, "soffice", args...)
}

type pdfFacts struct {
	pages  int
	title  string
	author string
	text   string // pdftotext, reading order
}

func readPDF(t *testing.T, file string) pdfFacts {
	t.Helper()
	info := runTool(t, time.Minute, "pdfinfo", file)
	var f pdfFacts
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "Pages":
			f.pages, _ = strconv.Atoi(v)
		case "Title":
			f.title = v
		case "Author":
			f.author = v
		}
	}
	f.text = runTool(t, time.Minute, "pdftotext", "-enc", "UTF-8", file, "-")
	return f
}

// expectations of the demo case, in the document's own number formats.
var everyTemplateSays = []string{
	"Zürich rollout",                // case name
	"Łódź",                          // UTF-8 initiative and stakeholder names
	"Małgorzata Ząbek",              // a stakeholder on the grid
	"CONFIDENTIAL – board use only", // the watermark
	"1,405,000.00",                  // benefits table: total expected of the measured benefits
	"−46,600.00",                    // benefits table: total variance
	"146.1%",                        // ROI
	"Payback: Jun 2028 (month 18)",  // cumulative cash-flow chart, payback marker
	"Expected",                      // period chart legend
	"Approved at executive level by Jürg Meier, CFO",
	"Manage closely",
	"Appendix",
	"sha256:7c1e0f4b9a2d", // snapshot hash (may wrap after this)
	"NPV = Σ CFₜ ÷ (1 + r)^(t/12)",
}

var templateSays = map[Template][]string{
	ExecutiveSummary: {"Executive summary"},
	CFOView: {"Monthly cash flow", "2,117,586.90" /* NPV, key-figure table */, "80,000", /* cumulative at payback */
		"228.1%" /* best case */, "Sensitivity", "1,780,000" /* total costs */},
	TechnicalDeepDive: {"Roadmap", "Supplier portal", "Zürich legacy decommissioning", "1,060,000" /* project budgets */},
	BoardPresentation: {"largest 5 of 7", "2 other benefits", "CHF 2.12m"},
}

// onlyIn are texts other templates must not contain.
var onlyIn = map[string]Template{"Monthly cash flow": CFOView, "Sensitivity": CFOView, "Projects": TechnicalDeepDive}

func TestDocumentsReadAsWritten(t *testing.T) {
	requireTools(t, "pdftotext", "pdfinfo")
	for _, f := range Formats {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			if f != PDF {
				requireTools(t, "soffice")
			}
			dir := t.TempDir()
			var files []string
			for _, tmpl := range Templates {
				c := DemoCase()
				c.Template = tmpl
				name := filepath.Join(dir, string(tmpl)+f.Extension())
				if err := os.WriteFile(name, renderBytes(t, f, c, fixedOptions()), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, name)
			}
			pdfDir := dir
			if f != PDF {
				pdfDir = filepath.Join(dir, "pdf")
				convert(t, pdfDir, files...)
			}
			for _, tmpl := range Templates {
				t.Run(string(tmpl), func(t *testing.T) {
					doc := readPDF(t, filepath.Join(pdfDir, string(tmpl)+".pdf"))
					checkDocument(t, f, tmpl, doc)
				})
			}
		})
	}
}

func checkDocument(t *testing.T, f Format, tmpl Template, doc pdfFacts) {
	t.Helper()
	if doc.pages < 2 {
		t.Errorf("%d pages", doc.pages)
	}
	if doc.title != "Zürich rollout" {
		t.Errorf("title %q", doc.title)
	}
	if doc.author != "Anna Kowalczyk" {
		t.Errorf("author %q", doc.author)
	}
	// pdftotext breaks lines where the layout does; compare on single spaces.
	text := strings.Join(strings.Fields(doc.text), " ")
	// Axis labels are computed from the charts' values (LibreOffice draws
	// the DOCX and PPTX charts from their cached values and their axis
	// format): 400k on the period chart, −1m on the cash-flow chart, the
	// same in every format.
	axis := []string{"400k", "−1m"}
	for _, want := range append(append(everyTemplateSays, templateSays[tmpl]...), axis...) {
		if !strings.Contains(text, want) {
			t.Errorf("%q not found", want)
		}
	}
	for s, owner := range onlyIn {
		if owner != tmpl && strings.Contains(text, s) {
			t.Errorf("%q belongs to %s only", s, owner)
		}
	}
	// Page numbers: the first page says 1 of the real page count, and the
	// watermark is on every page.
	word := "Page"
	if f == PPTX {
		word = "Slide"
	}
	pages := strings.Split(doc.text, "\f")
	for _, n := range []int{1, doc.pages} {
		want := fmt.Sprintf("%s %d of %d", word, n, doc.pages)
		if !strings.Contains(strings.Join(strings.Fields(pages[n-1]), " "), want) {
			t.Errorf("%q not on page %d", want, n)
		}
	}
	for i, p := range pages[:doc.pages] {
		if !strings.Contains(strings.Join(strings.Fields(p), " "), "CONFIDENTIAL – board use only") {
			t.Errorf("page %d has no watermark", i+1)
		}
	}
	if t.Failed() {
		t.Logf("text:\n%s", doc.text)
	}
}

// TestPDFWithoutAppendixOrWatermark checks the options are honoured: the
// hash and formulas appear only with the appendix, no stray watermark.
func TestPDFWithoutAppendixOrWatermark(t *testing.T) {
	requireTools(t, "pdftotext", "pdfinfo")
	o := fixedOptions()
	o.IncludeAppendices, o.Watermark = false, ""
	name := filepath.Join(t.TempDir(), "plain.pdf")
	if err := os.WriteFile(name, renderBytes(t, PDF, DemoCase(), o), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := readPDF(t, name)
	for _, absent := range []string{"sha256:", "CONFIDENTIAL", "Appendix", "Calculations"} {
		if strings.Contains(doc.text, absent) {
			t.Errorf("%q found without appendix/watermark", absent)
		}
	}
	if !strings.Contains(doc.text, "Zürich rollout") {
		t.Error("case name missing")
	}
}

// TestLargeCasePDF renders the benchmark's case and reads it back: every
// stakeholder is in the register, every benefit in the table.
func TestLargeCasePDF(t *testing.T) {
	requireTools(t, "pdftotext", "pdfinfo")
	c := SyntheticCase(100, 24, 500)
	name := filepath.Join(t.TempDir(), "large.pdf")
	if err := os.WriteFile(name, renderBytes(t, PDF, c, fixedOptions()), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := readPDF(t, name)
	for _, s := range []string{c.Stakeholders[0].Name, c.Stakeholders[499].Name, c.Benefits[0].Name, c.Benefits[99].Name} {
		if !strings.Contains(doc.text, s) {
			t.Errorf("%q missing", s)
		}
	}
	if n := len(regexp.MustCompile(`Page \d+ of `+strconv.Itoa(doc.pages)).FindAllString(doc.text, -1)); n != doc.pages {
		t.Errorf("%d page numbers for %d pages", n, doc.pages)
	}
}

// TestPDFOddText: markup characters print as typed, characters the PDF
// font path cannot carry (outside the BMP, controls) become U+FFFD or go,
// in the text and in the metadata.
func TestPDFOddText(t *testing.T) {
	requireTools(t, "pdftotext", "pdfinfo")
	c := DemoCase()
	c.Name = `Zürich <rollout> & "Łódź" 🚀` + "\x01end"
	c.Sections[0].Body = "Greek Ωμέγα, Cyrillic Жуков,\ttab."
	name := filepath.Join(t.TempDir(), "odd.pdf")
	if err := os.WriteFile(name, renderBytes(t, PDF, c, fixedOptions()), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := readPDF(t, name)
	want := `Zürich <rollout> & "Łódź" ` + "\uFFFD end"
	if doc.title != want {
		t.Errorf("title %q, want %q", doc.title, want)
	}
	for _, s := range []string{want, "Greek Ωμέγα, Cyrillic Жуков, tab."} {
		if !strings.Contains(doc.text, s) {
			t.Errorf("%q not found", s)
		}
	}
}

// TestUndefinedFiguresSayWhy: a figure without a value prints n/a and the
// reason, never 0.
func TestUndefinedFiguresSayWhy(t *testing.T) {
	requireTools(t, "pdftotext", "pdfinfo")
	c := minimalCase()
	c.Template = CFOView
	c.CashFlow.Months = []CashFlowMonth{{"Jan 2027", 0, 500, -500, -500}, {"Feb 2027", 100, 500, -400, -900}}
	name := filepath.Join(t.TempDir(), "draft.pdf")
	if err := os.WriteFile(name, renderBytes(t, PDF, c, Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := readPDF(t, name)
	text := strings.Join(strings.Fields(doc.text), " ")
	for _, s := range []string{"n/a", "cash flows never change sign", "cumulative cash flow never turns positive",
		"Payback is not reached within the horizon.", "Not approved: this version is draft.", "No stakeholders are mapped yet."} {
		if !strings.Contains(text, s) {
			t.Errorf("%q not found", s)
		}
	}
	if strings.Contains(text, "0.0%") {
		t.Error("an undefined figure printed as 0.0%")
	}
}
