package export

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/valuecase/valuecase/internal/render"
)

// The layout check reads every template × format of the demo seed's
// approved case as a reader's eye would: LibreOffice prints the DOCX and
// PPTX to PDF (as it opens them), poppler locates every word
// (pdftotext -bbox-layout) and renders every page to grey pixels
// (pdftoppm). On every page:
//
//   - no word outside the printable area (the page less an eighth of an
//     inch) and no two words on top of each other (text run over the
//     footer or over another box);
//   - content (ink between the top margin and the footer) covers at least
//     15 % of the page's height, except on the last page;
//   - a table split across pages leaves at least 2 of its rows on each.
//
// Without the tools it skips, unless CI is set (CI installs them).

const (
	printMargin = 9.0  // points: an eighth of an inch
	minFilled   = 0.15 // of the height between the top margin and the footer
)

func requireLayoutTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"soffice", "pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found; CI must install it (.ci/run)", tool)
			}
			t.Skipf("%s not found (apt-get install poppler-utils libreoffice-writer-nogui libreoffice-impress-nogui)", tool)
		}
	}
}

func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

type word struct {
	x0, y0, x1, y1 float64
	text           string
}

type page struct {
	w, h  float64
	words []word
	ink   []bool // per pixel row: anything darker than the paper
	scale float64
}

var (
	pageRe = regexp.MustCompile(`<page width="([0-9.]+)" height="([0-9.]+)">`)
	wordRe = regexp.MustCompile(`<word xMin="([0-9.-]+)" yMin="([0-9.-]+)" xMax="([0-9.-]+)" yMax="([0-9.-]+)">([^<]*)</word>`)
)

// readLayout locates the words of every page and the rows of ink.
func readLayout(t *testing.T, pdf string) []page {
	t.Helper()
	var pages []page
	for _, line := range strings.Split(tool(t, "pdftotext", "-bbox-layout", pdf, "-"), "\n") {
		if m := pageRe.FindStringSubmatch(line); m != nil {
			w, _ := strconv.ParseFloat(m[1], 64)
			h, _ := strconv.ParseFloat(m[2], 64)
			pages = append(pages, page{w: w, h: h})
			continue
		}
		if m := wordRe.FindStringSubmatch(line); m != nil && len(pages) > 0 {
			var f [4]float64
			for i := range f {
				f[i], _ = strconv.ParseFloat(m[i+1], 64)
			}
			text := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&quot;", `"`, "&apos;", "'").Replace(m[5])
			p := &pages[len(pages)-1]
			p.words = append(p.words, word{f[0], f[1], f[2], f[3], text})
		}
	}
	const dpi = 24
	prefix := filepath.Join(t.TempDir(), "p")
	tool(t, "pdftoppm", "-r", strconv.Itoa(dpi), "-gray", pdf, prefix)
	files, _ := filepath.Glob(prefix + "-*.pgm")
	slices.Sort(files) // zero-padded page numbers
	if len(files) != len(pages) {
		t.Fatalf("%d page images for %d pages", len(files), len(pages))
	}
	for i, f := range files {
		pages[i].ink, pages[i].scale = inkRows(t, f), dpi/72.0
	}
	return pages
}

// inkRows reads a binary PGM (P5) and marks the rows with a dark pixel.
func inkRows(t *testing.T, file string) []bool {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var w, h, maxv int
	fields, rest := 0, b[2:]
	for fields < 3 {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		end := bytes.IndexAny(rest, " \t\r\n")
		n, _ := strconv.Atoi(string(rest[:end]))
		switch fields {
		case 0:
			w = n
		case 1:
			h = n
		case 2:
			maxv = n
		}
		fields, rest = fields+1, rest[end:]
	}
	px := rest[1:]
	if string(b[:2]) != "P5" || maxv > 255 || len(px) < w*h {
		t.Fatalf("%s: not an 8-bit PGM", file)
	}
	rows := make([]bool, h)
	for y := range h {
		for _, v := range px[y*w : (y+1)*w] {
			if v < 200 {
				rows[y] = true
				break
			}
		}
	}
	return rows
}

var pageNumberRe = regexp.MustCompile(`^(Page|Slide)$`)

// footerTop is where the page-number line starts (the page's height
// without one).
func (p page) footerTop() float64 {
	top := p.h
	for i, w := range p.words {
		if pageNumberRe.MatchString(w.text) && i+3 < len(p.words) && p.words[i+2].text == "of" && w.y0 > p.h*0.8 {
			for _, o := range p.words {
				if o.y0 > w.y0-4 && o.y1 < w.y1+4 {
					top = min(top, o.y0)
				}
			}
		}
	}
	return top
}

// filled is the share of the height between the top margin and the footer
// that lies between the first and the last row of ink.
func (p page) filled() float64 {
	top, bottom := printMargin, p.footerTop()-2
	first, last := -1, -1
	for y, ink := range p.ink {
		pt := float64(y) / p.scale
		if ink && pt >= top && pt <= bottom {
			if first < 0 {
				first = y
			}
			last = y
		}
	}
	if first < 0 {
		return 0
	}
	return float64(last-first+1) / p.scale / (bottom - top)
}

// text is the page's words in reading order, single-spaced.
func (p page) text() string {
	var b strings.Builder
	for _, w := range p.words {
		b.WriteString(w.text)
		b.WriteByte(' ')
	}
	return b.String()
}

func overlap(a, b word) bool {
	ix := min(a.x1, b.x1) - max(a.x0, b.x0)
	iy := min(a.y1, b.y1) - max(a.y0, b.y0)
	if ix <= 0 || iy <= 0 {
		return false
	}
	small := min((a.x1-a.x0)*(a.y1-a.y0), (b.x1-b.x0)*(b.y1-b.y0))
	return ix*iy > 0.25*small
}

// layoutProblems lists every violation of the rules above in one document.
func layoutProblems(pages []page, tables []render.PrintedTable) []string {
	var out []string
	for i, p := range pages {
		n := i + 1
		outside := 0
		var first string
		for _, w := range p.words {
			if w.x0 < printMargin || w.y0 < printMargin || w.x1 > p.w-printMargin || w.y1 > p.h-printMargin {
				if outside == 0 {
					first = fmt.Sprintf("%q at (%.0f, %.0f)–(%.0f, %.0f)", w.text, w.x0, w.y0, w.x1, w.y1)
				}
				outside++
			}
		}
		if outside > 0 {
			out = append(out, fmt.Sprintf("page %d: %d words outside the printable area, first %s", n, outside, first))
		}
		collisions := 0
		for a := range p.words {
			for b := a + 1; b < len(p.words); b++ {
				if overlap(p.words[a], p.words[b]) {
					if collisions == 0 {
						first = fmt.Sprintf("%q on %q", p.words[b].text, p.words[a].text)
					}
					collisions++
				}
			}
		}
		if collisions > 0 {
			out = append(out, fmt.Sprintf("page %d: %d words on top of others, first %s", n, collisions, first))
		}
		if f := p.filled(); f < minFilled && n < len(pages) {
			out = append(out, fmt.Sprintf("page %d: %.0f %% filled", n, f*100))
		}
	}
	texts := make([]string, len(pages))
	for i, p := range pages {
		texts[i] = p.text()
	}
	cursor := 0
	for _, t := range tables {
		if len(t.Rows) < 2 {
			continue
		}
		key := strings.Join(strings.Fields(t.Title), " ")
		if utf8.RuneCountInString(key) > 24 {
			key = string([]rune(key)[:24])
		}
		start := -1
		for i := cursor; i < len(texts); i++ {
			if strings.Contains(texts[i], key) {
				start = i
				break
			}
		}
		if start < 0 {
			out = append(out, fmt.Sprintf("table %q not found", t.Title))
			continue
		}
		cursor = start
		perPage := map[int]int{}
		at, missing := start, 0
		for _, row := range t.Rows {
			found := -1
			for i := at; i < len(texts) && found < 0; i++ {
				if rowOnPage(texts[i], row) {
					found = i
				}
			}
			if found < 0 {
				missing++
				continue
			}
			at = found
			perPage[found]++
		}
		if missing > len(t.Rows)/5 {
			out = append(out, fmt.Sprintf("table %q: %d of %d rows not found", t.Title, missing, len(t.Rows)))
		}
		if len(perPage) > 1 {
			for pg, k := range perPage {
				if k < 2 {
					out = append(out, fmt.Sprintf("table %q split leaving %d row on page %d", t.Title, k, pg+1))
				}
			}
		}
	}
	return out
}

// rowOnPage: the row's cells in order, or (a cell wrapped) its first cell
// and the start of its last.
func rowOnPage(text string, row []string) bool {
	var cells []string
	for _, c := range row {
		if c = strings.Join(strings.Fields(c), " "); c != "" {
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return false
	}
	if strings.Contains(text, strings.Join(cells, " ")+" ") {
		return true
	}
	last := strings.Fields(cells[len(cells)-1])
	i := strings.Index(text, cells[0]+" ")
	return i >= 0 && strings.Contains(text[i:], " "+strings.Join(last[:min(2, len(last))], " ")+" ")
}

// TestLayoutOfEveryTemplateAndFormat is the layout check over the demo
// seed's approved case with appendices, the largest document it exports.
func TestLayoutOfEveryTemplateAndFormat(t *testing.T) {
	requireLayoutTools(t)
	c := demoDocument(t, time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC))
	opts := render.Options{IncludeAppendices: true, Author: "Layout check", GeneratedAt: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)}
	for _, f := range render.Formats {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var files []string
			tables := map[render.Template][]render.PrintedTable{}
			for _, tmpl := range layoutDocuments {
				c := *c
				c.Template = tmpl
				if tmpl == longInputs {
					c.Template = render.CFOView
					c.Calculations = append(slices.Clone(c.Calculations), longCalculation())
				}
				var buf bytes.Buffer
				if err := render.Render(context.Background(), &buf, f, &c, opts); err != nil {
					t.Fatal(err)
				}
				name := filepath.Join(dir, string(tmpl)+f.Extension())
				if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, name)
				tables[tmpl] = render.Tables(&c, opts, f)
			}
			pdfDir := dir
			if f != render.PDF {
				pdfDir = filepath.Join(dir, "pdf")
				tool(t, "soffice", append([]string{"-env:UserInstallation=file://" + filepath.ToSlash(t.TempDir()),
					"--headless", "--norestore", "--convert-to", "pdf", "--outdir", pdfDir}, files...)...)
			}
			for _, tmpl := range layoutDocuments {
				t.Run(string(tmpl), func(t *testing.T) {
					pages := readLayout(t, filepath.Join(pdfDir, string(tmpl)+".pdf"))
					for _, p := range layoutProblems(pages, tables[tmpl]) {
						t.Error(p)
					}
					for _, p := range rawValues(pages) {
						t.Error(p)
					}
					// The ask opens every document, before the key figures,
					// with the seed's amount and sentences made from the plan.
					var all strings.Builder
					for _, p := range pages {
						all.WriteString(p.text())
					}
					text := all.String()
					ask, glance := strings.Index(text, "The decision requested"), strings.Index(text, "At a glance")
					if ask < 0 || glance < 0 || ask > glance {
						t.Errorf("the decision request is not first (at %d, key figures at %d)", ask, glance)
					}
					for _, want := range []string{"Approve the cloud migration programme", "USD 2,400,000.00", "Decide by", "flat at about USD 100k a month from Oct 2024"} {
						if !strings.Contains(text, want) {
							t.Errorf("%q not found", want)
						}
					}
				})
			}
		})
	}
}

// longInputs is the CFO view with an appendix entry of 144 inputs (the
// exchange rates of two currencies over six years): a list longer than a
// page or slide must continue, not run off it.
const longInputs render.Template = "long_inputs"

var layoutDocuments = append(slices.Clone(render.Templates), longInputs)

func longCalculation() render.Calculation {
	k := render.Calculation{Name: "Input: exchange rates", Formula: "1 unit of currency = rate × USD in the month", Result: "144 rates"}
	for _, cur := range []string{"CHF", "EUR"} {
		for m := range 72 {
			month := time.Date(2025, time.Month(1+m), 1, 0, 0, 0, 0, time.UTC)
			k.Inputs = append(k.Inputs, render.CalcInput{Name: cur + " " + render.FormatMonth(month), Value: fmt.Sprintf("1.%04d", 1000+m*7)})
		}
	}
	return k
}

// rawEnum finds identifiers printed as they are stored: snake_case words,
// and the enum values whose identifier is not a word a reader knows.
var rawEnum = regexp.MustCompile(`\b[a-z]+(_[a-z]+)+\b|\b(capex|opex|open-ended)\b|(Status|Measured|Recurrence|Category): [a-z]`)

// rawValues lists raw enum values in a document's text.
func rawValues(pages []page) []string {
	var out []string
	for i, p := range pages {
		if m := rawEnum.FindAllString(p.text(), 3); m != nil {
			out = append(out, fmt.Sprintf("page %d: raw values %q", i+1, m))
		}
	}
	return out
}
