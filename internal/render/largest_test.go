package render

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/valuecase/valuecase/internal/benefit"
	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/cost"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/stakeholder"
)

// fill returns text of exactly n characters: words from seed, then end.
func fill(seed string, n int, end string) string {
	var b strings.Builder
	for utf8.RuneCountInString(b.String())+utf8.RuneCountInString(end) < n {
		b.WriteString(seed)
	}
	rs := []rune(b.String())[:n-utf8.RuneCountInString(end)]
	return string(rs) + end
}

// largestCase is the largest technical deep dive the API accepts: every
// section listed with a title and body at their maxima (one body a single
// 20,000-character word), and the most projects, stakeholders, costs and
// benefits an initiative may have, each name at its longest.
func largestCase() *Case {
	c := SyntheticCase(benefit.MaxPerInitiative, 24, stakeholder.MaxPerInitiative)
	c.Template = TechnicalDeepDive
	c.Sections = nil
	for i, id := range businesscase.Sections {
		body := fill(fmt.Sprintf("Paragraph of section %d, ", i+1)+"Zürich łódź rollout detail. ", businesscase.MaxBodyLen, fmt.Sprintf(" END%dOFSECTION", i+1))
		if i == 3 {
			body = fill("x", businesscase.MaxBodyLen, fmt.Sprintf("END%dOFSECTION", i+1)) // no space at all
		}
		body = strings.Replace(body, "detail. ", "detail.\n\n", 40) // some paragraph breaks
		c.Sections = append(c.Sections, Section{ID: string(id), Title: fill(fmt.Sprintf("Section %d title ", i+1), businesscase.MaxTitleLen, ""), Body: body})
	}
	for i := range c.Benefits {
		c.Benefits[i].Name = fill(fmt.Sprintf("Benefit %03d ", i+1), 200, "")
	}
	for i := range c.Stakeholders {
		c.Stakeholders[i].Name = fill(fmt.Sprintf("Stakeholder %03d ", i+1), 200, "")
	}
	c.Costs = nil
	for i := range cost.MaxPerInitiative {
		c.Costs = append(c.Costs, Cost{Name: fill(fmt.Sprintf("Cost line %03d ", i+1), 200, ""), Category: "opex", Timing: "monthly", Amount: float64(1000 + i)})
	}
	c.Projects = nil
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range initiative.MaxProjects {
		c.Projects = append(c.Projects, Project{
			Name:  fmt.Sprintf("P%03dLAST ", i+1) + fill("Project name ", 190, ""),
			Owner: fill("owner-", 255, ""), Status: []string{"planned", "in_progress", "completed", "on_hold"}[i%4],
			Start: start.AddDate(0, i%36, 0), End: start.AddDate(0, i%36+6, 0), Budget: new(float64(10000 * (i + 1))),
		})
	}
	return c
}

// The largest case the API accepts renders in every format, long text
// paginated: the PDF holds every section's last words and every project;
// the DOCX and PPTX carry the same, the roadmap cut into charts of a
// readable size.
func TestLargestAcceptedCaseRenders(t *testing.T) {
	c := largestCase()
	if err := c.Validate(); err != nil {
		t.Fatalf("the largest accepted case is refused: %v", err)
	}
	want := []string{}
	for i := range c.Sections {
		want = append(want, fmt.Sprintf("END%dOFSECTION", i+1))
	}
	for i := range c.Projects {
		want = append(want, fmt.Sprintf("P%03dLAST", i+1))
	}
	for _, f := range []Format{PDF, DOCX, PPTX} {
		t.Run(string(f), func(t *testing.T) {
			out := renderBytes(t, f, c, fixedOptions())
			var text string
			if f == PDF {
				requireTools(t, "pdftotext", "pdfinfo")
				name := filepath.Join(t.TempDir(), "largest.pdf")
				if err := os.WriteFile(name, out, 0o644); err != nil {
					t.Fatal(err)
				}
				text = readPDF(t, name).text
			} else {
				text = ooxmlText(t, out)
			}
			flat := strings.Join(strings.Fields(text), "")
			for _, w := range want {
				if !strings.Contains(flat, w) {
					t.Errorf("%q missing", w)
				}
			}
			// The roadmap: one chart per page of rows in DOCX and PPTX (the PDF draws its rows page by page).
			perPage := map[Format]int{DOCX: docxGanttRows, PPTX: pptxGanttRows}[f]
			if perPage > 0 {
				pages := (len(c.Projects) + perPage - 1) / perPage
				if n := strings.Count(text, "Roadmap (continued)"); n != pages-1 {
					t.Errorf("%d roadmap continuations, want %d", n, pages-1)
				}
			}
		})
	}
}

// ooxmlText is the text of every XML part of a DOCX or PPTX, tags removed.
func ooxmlText(t *testing.T, data []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".xml") || strings.Contains(f.Name, "chart") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(rc)
		rc.Close()
		inTag := false
		for _, r := range string(raw) {
			switch {
			case r == '<':
				inTag = true
			case r == '>':
				inTag = false
				b.WriteByte(' ')
			case !inTag:
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}
