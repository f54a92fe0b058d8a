package render

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/jung-kurt/gofpdf"
)

const pdfFont = "DejaVu"

// pdfWriter lays a plan out on A4 pages (landscape for the board template),
// in millimetres. Text goes through cell/text/split/width, which clean it
// for gofpdf (see pdfClean).
type pdfWriter struct {
	f     *gofpdf.Fpdf
	p     *plan
	c     *Case
	pageW float64
	pageH float64
	left  float64 // margins
	top   float64
	bot   float64
	cw    float64 // content width
	scale float64 // text size factor: larger for the board template
	parts int     // headings placed so far: the contents' page aliases
}

func writePDF(ctx context.Context, out io.Writer, p *plan, pr *progress) error {
	orientation := "P"
	scale := 1.0
	if p.c.Template == BoardPresentation {
		orientation, scale = "L", 1.2
	}
	f := gofpdf.New(orientation, "mm", "A4", "")
	f.SetCompression(true)
	// Copies: gofpdf pads the font's tables by appending to slices of the
	// bytes it is given, which writes into the shared embedded font while
	// another export renders.
	f.AddUTF8FontFromBytes(pdfFont, "", bytes.Clone(dejaVuSans))
	f.AddUTF8FontFromBytes(pdfFont, "B", bytes.Clone(dejaVuSansBold))
	w := &pdfWriter{f: f, p: p, c: p.c, left: 18, top: 20, bot: 18, scale: scale}
	w.pageW, w.pageH = f.GetPageSize()
	w.cw = w.pageW - 2*w.left
	f.SetMargins(w.left, w.top, w.left)
	f.SetAutoPageBreak(false, w.bot) // pages break where the writer decides
	f.SetCellMargin(0)
	f.SetTitle(pdfClean(p.c.Name), true)
	f.SetSubject(pdfClean(subjectOf(p.c)), true)
	f.SetAuthor(pdfClean(p.opts.Author), true)
	f.SetCreator("Valuecase", true)
	f.SetProducer("Valuecase (gofpdf)", true)
	f.SetCreationDate(p.opts.GeneratedAt)
	f.SetModificationDate(p.opts.GeneratedAt)
	f.SetCatalogSort(true) // deterministic object order
	f.AliasNbPages("{nb}")
	f.SetHeaderFuncMode(w.header, true)
	f.SetFooterFunc(w.footer)

	f.AddPage()
	w.titlePage()
	f.AddPage()
	for i, b := range p.blocks {
		if err := ctx.Err(); err != nil {
			return err
		}
		pr.block(i, len(p.blocks))
		switch b := b.(type) {
		case heading:
			w.heading(b)
		case prose:
			w.prose(b.Text)
		case keyFigures:
			w.keyFigures(b)
		case table:
			w.table(b)
		case chart:
			w.chart(b)
		case gantt:
			w.gantt(b)
		case grid:
			w.grid(b)
		case calculations:
			w.calculations(b)
		case contents:
			w.contents(b)
		}
		if err := f.Error(); err != nil {
			return err
		}
	}
	pr.report(90)
	return f.Output(out)
}

// subjectOf is the document's subject metadata.
func subjectOf(c *Case) string {
	s := fmt.Sprintf("Business case, version %d", c.Version)
	if c.InitiativeName != "" {
		s += ", for " + c.InitiativeName
	}
	return s + " (" + c.Template.Title() + ")"
}

// pdfClean makes s safe for gofpdf's UTF-8 path, which indexes a 65,536-entry
// width table by rune and encodes UTF-16 without surrogates: runes outside
// the Basic Multilingual Plane become U+FFFD, control characters spaces.
func pdfClean(s string) string {
	clean := true
	for _, r := range s {
		if r > 0xFFFF || r == 0 || (unicode.IsControl(r) && r != '\n') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r > 0xFFFF:
			return '\uFFFD'
		case r == '\n':
			return r
		case r == 0:
			return -1
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
}

// --- primitives -------------------------------------------------------------

func rgb(hex string) (int, int, int) {
	v, _ := strconv.ParseUint(hex, 16, 32)
	return int(v >> 16 & 0xFF), int(v >> 8 & 0xFF), int(v & 0xFF)
}

func (w *pdfWriter) textColor(hex string) { w.f.SetTextColor(rgb(hex)) }
func (w *pdfWriter) fillColor(hex string) { w.f.SetFillColor(rgb(hex)) }
func (w *pdfWriter) drawColor(hex string) { w.f.SetDrawColor(rgb(hex)) }

// font selects DejaVu at size points (times the writer's scale).
func (w *pdfWriter) font(style string, size float64) { w.f.SetFont(pdfFont, style, size*w.scale) }

// lh is the line height in mm of the current font.
func (w *pdfWriter) lh() float64 {
	pt, _ := w.f.GetFontSize()
	return pt * 0.3528 * 1.38
}

func (w *pdfWriter) split(s string, width float64) []string {
	if s == "" {
		return []string{""}
	}
	lines := w.f.SplitText(pdfClean(s), width)
	if len(lines) == 0 {
		return []string{""}
	}
	return lines
}

func (w *pdfWriter) width(s string) float64 { return w.f.GetStringWidth(pdfClean(s)) }

// cell writes one line of text in a box at the current position.
func (w *pdfWriter) cell(width, h float64, s, align string) {
	w.f.CellFormat(width, h, pdfClean(s), "", 0, align, false, 0, "")
}

// textAt writes s with its baseline at (x, y).
func (w *pdfWriter) textAt(x, y float64, s string) { w.f.Text(x, y, pdfClean(s)) }

// fit shrinks the font until s fits width, not below min points.
func (w *pdfWriter) fit(s string, width, min float64) {
	for w.width(s) > width {
		pt, _ := w.f.GetFontSize()
		if pt <= min {
			return
		}
		w.f.SetFontSize(pt - 0.5)
	}
}

func (w *pdfWriter) y() float64      { return w.f.GetY() }
func (w *pdfWriter) bottom() float64 { return w.pageH - w.bot - 4 }
func (w *pdfWriter) room() float64   { return w.bottom() - w.y() }
func (w *pdfWriter) atPageTop() bool { return w.y() <= w.top+8.5 }
func (w *pdfWriter) gap(mm float64)  { w.f.SetY(w.y() + mm) }
func (w *pdfWriter) ensure(h float64) {
	if h > w.room() && !w.atPageTop() {
		w.f.AddPage()
	}
}

// lines writes wrapped text at x with the given width; it breaks pages.
func (w *pdfWriter) lines(x, width float64, s string) {
	h := w.lh()
	for _, line := range w.split(s, width) {
		w.ensure(h)
		w.f.SetX(x)
		w.cell(width, h, line, "L")
		w.f.SetY(w.y() + h)
	}
}

// --- page furniture ---------------------------------------------------------

// header draws the watermark across the page and the running head.
func (w *pdfWriter) header() {
	f := w.f
	if wm := strings.TrimSpace(w.p.opts.Watermark); wm != "" {
		// Diagonal, light, under the content: drawn first on every page.
		f.TransformBegin()
		cx, cy := w.pageW/2, w.pageH/2
		angle := math.Atan2(w.pageH, w.pageW) * 180 / math.Pi
		f.TransformRotate(angle, cx, cy)
		f.SetFont(pdfFont, "B", 64)
		diag := math.Hypot(w.pageW, w.pageH) * 0.7
		w.fit(wm, diag, 18)
		w.textColor("B91C1C")
		f.SetAlpha(0.09, "Normal")
		pt, _ := f.GetFontSize()
		w.textAt(cx-w.width(wm)/2, cy+pt*0.3528/3, wm)
		f.SetAlpha(1, "Normal")
		f.TransformEnd()
	}
	w.font("", 7.5)
	w.textColor(colorGrey)
	f.SetXY(w.left, 9)
	w.cell(w.cw*0.62, 4, fmt.Sprintf("%s · business case v%d", w.c.Name, w.c.Version), "L")
	if wm := w.p.opts.Watermark; wm != "" {
		w.font("B", 7.5)
		w.textColor("B91C1C")
		f.SetXY(w.left+w.cw*0.62, 9)
		w.cell(w.cw*0.38, 4, wm, "R")
	}
	w.drawColor(colorRule)
	f.SetLineWidth(0.2)
	f.Line(w.left, 14, w.pageW-w.left, 14)
	f.SetXY(w.left, w.top)
}

func (w *pdfWriter) footer() {
	f := w.f
	y := w.pageH - w.bot + 4
	w.drawColor(colorRule)
	f.SetLineWidth(0.2)
	f.Line(w.left, y, w.pageW-w.left, y)
	w.font("", 7.5)
	w.textColor(colorGrey)
	f.SetXY(w.left, y+1.5)
	left := w.c.Template.Title() + " · data as of " + FormatDate(w.c.DataAsOf)
	if w.c.InitiativeName != "" {
		left = w.c.InitiativeName + " · " + left
	}
	w.cell(w.cw*0.75, 4, left, "L")
	f.SetXY(w.left+w.cw*0.75, y+1.5)
	w.cell(w.cw*0.25, 4, fmt.Sprintf("Page %d of {nb}", f.PageNo()), "R")
}

// --- title page -------------------------------------------------------------

// statusColor is the colour of a case's status badge (title page, cover) in every format.
func statusColor(status string) string {
	switch status {
	case "approved":
		return "2E7D32"
	case "rejected":
		return "B91C1C"
	case "pending_approval":
		return "B45309"
	}
	return colorGrey
}

func (w *pdfWriter) titlePage() {
	f, c := w.f, w.c
	landscape := w.pageW > w.pageH
	y := 52.0
	if landscape {
		y = 34
	}
	f.SetY(y)
	w.font("B", 9)
	w.textColor(colorGrey)
	w.cell(w.cw, 5, strings.ToUpper(fmt.Sprintf("Business case · %s · version %d", c.Template.Title(), c.Version)), "L")
	w.gap(9)
	w.font("B", 26)
	w.textColor(colorNavy)
	w.lines(w.left, w.cw, c.Name)
	if c.InitiativeName != "" {
		w.gap(1)
		w.font("", 13)
		w.textColor("374151")
		w.lines(w.left, w.cw, "Initiative: "+c.InitiativeName)
	}
	w.gap(4)
	w.fillColor(colorCash)
	f.Rect(w.left, w.y(), 28, 1.4, "F")
	w.gap(8)

	// Status pill.
	w.font("B", 9)
	status := strings.ToUpper(Label(c.Status))
	pw := w.width(status) + 8
	w.fillColor(statusColor(c.Status))
	f.RoundedRect(w.left, w.y(), pw, 7, 3.5, "1234", "F")
	w.textColor("FFFFFF")
	f.SetX(w.left)
	w.cell(pw, 7, status, "C")
	w.gap(13)

	author := w.p.opts.Author
	if author == "" {
		author = "–"
	}
	details := table{Cols: []column{{"", false, 3}, {"", false, 8}}, NoHeader: true, Highlight: -1,
		Rows: [][]string{
			{"Version", strconv.Itoa(c.Version)},
			{"Status", Label(c.Status)},
			{"Template", c.Template.Title()},
			{"Base currency", c.BaseCurrency},
			{"Data as of", FormatTime(c.DataAsOf)},
			{"Prepared by", author},
			{"Generated", FormatTime(w.p.opts.GeneratedAt)},
		}}
	width := w.cw
	if landscape {
		width = w.cw * 0.55
	}
	w.keyValues(details, width)
	w.gap(8)

	// Approval box.
	var lines []string
	title := "Approval"
	if a := c.Approval; a != nil {
		lines = append(lines, fmt.Sprintf("Approved at %s level by %s on %s.", a.Level, a.By, FormatTime(a.At)))
		if a.Notes != "" {
			lines = append(lines, "Notes: "+a.Notes)
		}
	} else {
		lines = append(lines, "Not approved: this version is "+strings.ToLower(Label(c.Status))+".")
	}
	w.font("", 9.5)
	pad := 4.0
	var wrapped []string
	for _, l := range lines {
		wrapped = append(wrapped, w.split(l, width-2*pad)...)
	}
	h := 2*pad + 6 + float64(len(wrapped))*w.lh()
	y0 := w.y()
	w.fillColor(colorShade)
	f.Rect(w.left, y0, width, h, "F")
	w.fillColor(statusColor(c.Status))
	f.Rect(w.left, y0, 1.2, h, "F")
	f.SetXY(w.left+pad, y0+pad)
	w.font("B", 10)
	w.textColor(colorNavy)
	w.cell(width-2*pad, 5, title, "L")
	w.gap(6)
	w.font("", 9.5)
	w.textColor("1F2937")
	for _, l := range wrapped {
		f.SetX(w.left + pad)
		w.cell(width-2*pad, w.lh(), l, "L")
		w.gap(w.lh())
	}
}

// keyValues draws a two-column label/value list with light rules.
func (w *pdfWriter) keyValues(t table, width float64) {
	f := w.f
	labelW := width * t.Cols[0].Width / (t.Cols[0].Width + t.Cols[1].Width)
	for _, r := range t.Rows {
		w.font("", 9.5)
		vl := w.split(r[1], width-labelW-2)
		h := float64(len(vl))*w.lh() + 2.4
		w.ensure(h)
		y := w.y()
		f.SetXY(w.left, y+1.2)
		w.textColor(colorGrey)
		w.cell(labelW, w.lh(), r[0], "L")
		w.textColor("111827")
		for i, l := range vl {
			f.SetXY(w.left+labelW, y+1.2+float64(i)*w.lh())
			w.cell(width-labelW, w.lh(), l, "L")
		}
		w.drawColor(colorRule)
		f.SetLineWidth(0.15)
		f.Line(w.left, y+h, w.left+width, y+h)
		f.SetY(y + h)
	}
}

// --- blocks -----------------------------------------------------------------

func (w *pdfWriter) heading(h heading) {
	f := w.f
	if h.Break {
		if !w.atPageTop() {
			f.AddPage()
		}
	} else {
		w.ensure(30) // a title never sits alone at the bottom of a page
		if !w.atPageTop() {
			w.gap(5)
		}
	}
	w.font("B", 15)
	w.textColor(colorNavy)
	w.parts++
	f.RegisterAlias(tocAlias(w.parts), strconv.Itoa(f.PageNo()))
	f.Bookmark(pdfClean(h.Text), 0, -1)
	w.lines(w.left, w.cw, h.Text)
	w.fillColor(colorCash)
	f.Rect(w.left, w.y()+0.5, 14, 0.9, "F")
	w.gap(4)
	if h.Lead != "" {
		w.font("", 9.5)
		w.textColor(colorGrey)
		w.lines(w.left, w.cw, h.Lead)
		w.gap(2)
	}
}

// tocAlias is the placeholder of the page number of the n-th part, filled
// in when the document is closed.
func tocAlias(n int) string { return fmt.Sprintf("{toc%d}", n) }

// contents lists the parts with their pages (aliases resolved at close).
func (w *pdfWriter) contents(k contents) {
	w.blockTitle("Contents", 20)
	w.font("", 10)
	for i, e := range k.Entries {
		w.ensure(7)
		w.textColor("1F2937")
		y := w.y()
		w.f.SetXY(w.left, y)
		w.cell(w.cw-20, 6.5, e, "L")
		w.textColor(colorGrey)
		w.f.SetXY(w.left+w.cw-20, y)
		w.cell(20, 6.5, tocAlias(i+1), "L")
		w.f.SetXY(w.left, y+6.5)
	}
	w.gap(4)
}

// paragraphs splits a section body: blank lines separate paragraphs, lines
// starting "- " or "• " are bullets; other single newlines join the lines.
func paragraphs(body string) []struct {
	Bullet bool
	Text   string
} {
	type para = struct {
		Bullet bool
		Text   string
	}
	var out []para
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, para{false, strings.Join(cur, " ")})
			cur = nil
		}
	}
	for _, line := range strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			flush()
		case strings.HasPrefix(t, "- ") || strings.HasPrefix(t, "• ") || strings.HasPrefix(t, "* "):
			flush()
			out = append(out, para{true, strings.TrimSpace(t[strings.Index(t, " ")+1:])})
		default:
			cur = append(cur, t)
		}
	}
	flush()
	return out
}

func (w *pdfWriter) prose(body string) {
	w.font("", 10)
	w.textColor("1F2937")
	for _, p := range paragraphs(body) {
		if p.Bullet {
			w.ensure(w.lh())
			y := w.y()
			w.fillColor(colorCash)
			w.f.Circle(w.left+2, y+w.lh()/2, 0.7, "F")
			w.lines(w.left+5, w.cw-5, p.Text)
			w.gap(0.8)
			continue
		}
		w.lines(w.left, w.cw, p.Text)
		w.gap(2.2)
	}
}

func (w *pdfWriter) blockTitle(s string, need float64) {
	w.font("B", 11)
	w.ensure(w.lh() + 2 + need)
	if !w.atPageTop() {
		w.gap(3)
	}
	w.textColor(colorNavy)
	w.lines(w.left, w.cw, s)
	w.gap(1.5)
}

func (w *pdfWriter) note(s string) {
	if s == "" {
		return
	}
	w.gap(1.5)
	w.font("", 7.5)
	w.textColor(colorGrey)
	w.lines(w.left, w.cw, s)
}

func (w *pdfWriter) keyFigures(k keyFigures) {
	f := w.f
	perRow := len(k.Items)
	valuePt, labelPt, h := 14.0, 8.0, 33.0
	if k.Big { // three a row, board-sized
		perRow, valuePt, labelPt, h = 3, 30, 11, 48
	}
	gapX := 4.0
	cardW := (w.cw - gapX*float64(perRow-1)) / float64(perRow)
	w.blockTitle(k.Title, float64((len(k.Items)+perRow-1)/perRow)*(h+gapX)) // the cards stay together
	y := w.y()
	for i, it := range k.Items {
		x := w.left + float64(i%perRow)*(cardW+gapX)
		cy := y + float64(i/perRow)*(h+gapX)
		w.fillColor(colorShade)
		f.Rect(x, cy, cardW, h, "F")
		w.fillColor(colorCash)
		f.Rect(x, cy, cardW, 1, "F")
		f.SetFont(pdfFont, "", labelPt)
		w.textColor(colorGrey)
		f.SetXY(x+3, cy+3)
		w.cell(cardW-6, 4, it.Label, "L")
		f.SetFont(pdfFont, "B", valuePt)
		w.fit(it.Value, cardW-6, 10)
		w.textColor(colorNavy)
		pt, _ := f.GetFontSize()
		f.SetXY(x+3, cy+3+labelPt*0.3528*1.6)
		w.cell(cardW-6, pt*0.3528*1.2, it.Value, "L")
		fy := cy + 3 + labelPt*0.3528*1.6 + pt*0.3528*1.35
		f.SetFont(pdfFont, "B", labelPt+1)
		w.fit(it.Forecast, cardW-6, 6)
		fpt, _ := f.GetFontSize()
		f.SetXY(x+3, fy)
		w.cell(cardW-6, fpt*0.3528*1.2, it.Forecast, "L")
		f.SetFont(pdfFont, "", labelPt-0.5)
		w.textColor(colorGrey)
		ny := fy + fpt*0.3528*1.5
		for j, l := range w.split(it.Note, cardW-6) {
			if ny+float64(j+1)*w.lh() > cy+h-1 {
				break
			}
			f.SetXY(x+3, ny+float64(j)*w.lh())
			w.cell(cardW-6, w.lh(), l, "L")
		}
	}
	rows := (len(k.Items) + perRow - 1) / perRow
	f.SetY(y + float64(rows)*(h+gapX))
}

// pdfWholeTableRows is the longest table (rows and total) kept on one page.
const pdfWholeTableRows = 12

// table draws a table that breaks across pages, repeating its header.
func (w *pdfWriter) table(t table) {
	f := w.f
	fontPt := 8.5
	pad := 1.6
	widths, _ := fitColumns(t, w.cw, func(s string, bold bool) float64 {
		if bold {
			w.font("B", fontPt)
		} else {
			w.font("", fontPt)
		}
		return w.width(s) + 2*pad + 0.3
	})
	rowLines := func(cells []string, style string) ([][]string, float64) {
		w.font(style, fontPt)
		out := make([][]string, len(cells))
		n := 1
		for i, s := range cells {
			if i >= len(widths) {
				break
			}
			out[i] = w.split(s, widths[i]-2*pad)
			n = max(n, len(out[i]))
		}
		return out, float64(n)*w.lh() + 2*pad*0.8
	}
	drawRow := func(lines [][]string, h float64, style, color, fill string) {
		y := w.y()
		if fill != "" {
			w.fillColor(fill)
			f.Rect(w.left, y, w.cw, h, "F")
		}
		w.font(style, fontPt)
		w.textColor(color)
		x := w.left
		for i, cl := range lines {
			align := "L"
			if t.Cols[i].Right {
				align = "R"
			}
			for j, l := range cl {
				f.SetXY(x+pad, y+pad*0.8+float64(j)*w.lh())
				w.cell(widths[i]-2*pad, w.lh(), l, align)
			}
			x += widths[i]
		}
		f.SetY(y + h)
	}
	var head [][]string
	var headH float64
	if !t.NoHeader {
		head, headH = rowLines(headers(t.Cols), "B")
	}
	drawHead := func() {
		if head != nil {
			drawRow(head, headH, "B", "FFFFFF", colorNavy)
		}
	}
	// Every row's height first: a page break leaves at least two rows on
	// each side (the total counts as a row), and a short table that fits
	// a page stays whole.
	styles := make([]string, len(t.Rows))
	heights := make([]float64, 0, len(t.Rows)+1)
	for i, r := range t.Rows {
		if i == t.Highlight && !t.NoHeader {
			styles[i] = "B"
		}
		_, h := rowLines(r, styles[i])
		heights = append(heights, h)
	}
	if t.Total != nil {
		_, h := rowLines(t.Total, "B")
		heights = append(heights, h)
	}
	span := func(hs []float64) float64 {
		total := 0.0
		for _, h := range hs {
			total += h
		}
		return total
	}
	need := headH + span(heights[:min(2, len(heights))])
	if len(heights) <= pdfWholeTableRows && headH+span(heights) < w.bottom()-w.top-20 {
		need = headH + span(heights)
	}
	if t.Title != "" {
		w.blockTitle(t.Title, need)
	} else {
		w.ensure(need)
	}
	drawHead()
	// breakBefore: row i does not fit, or it and the one after are the
	// last two and do not fit together.
	breakBefore := func(i int) bool {
		left := len(heights) - i
		return heights[i] > w.room() || (left == 2 && heights[i]+heights[i+1] > w.room() && i >= 2)
	}
	for i, r := range t.Rows {
		style, fill := styles[i], ""
		if i%2 == 1 {
			fill = "F6F8FB"
		}
		if i == t.Highlight {
			fill = "FCE9D9"
		}
		lines, h := rowLines(r, style)
		if i > 0 && breakBefore(i) {
			f.AddPage()
			drawHead()
		}
		color := "111827"
		drawRow(lines, h, style, color, fill)
		if t.NoHeader {
			w.drawColor(colorRule)
			f.SetLineWidth(0.15)
			f.Line(w.left, w.y(), w.left+w.cw, w.y())
		}
	}
	if t.Total != nil {
		lines, h := rowLines(t.Total, "B")
		if breakBefore(len(t.Rows)) {
			f.AddPage()
			drawHead()
		}
		w.drawColor(colorNavy)
		f.SetLineWidth(0.4)
		f.Line(w.left, w.y(), w.left+w.cw, w.y())
		drawRow(lines, h, "B", colorNavy, "")
	}
	w.drawColor(colorNavy)
	f.SetLineWidth(0.3)
	f.Line(w.left, w.y(), w.left+w.cw, w.y())
	w.note(t.Note)
	w.gap(3)
}

func headers(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Header
	}
	return out
}

func (w *pdfWriter) calculations(k calculations) {
	f := w.f
	w.blockTitle(k.Title, 20)
	if len(k.Items) == 0 {
		w.font("", 9.5)
		w.textColor(colorGrey)
		w.lines(w.left, w.cw, "No calculations were recorded in this snapshot.")
		return
	}
	for _, it := range k.Items {
		// Keep an entry on one page when it fits on one.
		w.font("", 9)
		need := 6 + float64(len(w.split(it.Formula, w.cw-6)))*w.lh() + 3 +
			float64(len(it.Inputs)+1)*w.lh() + 4
		w.ensure(min(need, w.pageH/2))
		w.font("B", 9.5)
		w.textColor("111827")
		w.lines(w.left, w.cw, it.Name)
		w.gap(0.8)
		w.font("", 9)
		fl := w.split(it.Formula, w.cw-6)
		h := float64(len(fl))*w.lh() + 2.4
		w.ensure(h)
		w.fillColor(colorShade)
		f.Rect(w.left, w.y(), w.cw, h, "F")
		w.textColor(colorNavy)
		y := w.y() + 1.2
		for i, l := range fl {
			f.SetXY(w.left+3, y+float64(i)*w.lh())
			w.cell(w.cw-6, w.lh(), l, "L")
		}
		f.SetY(y - 1.2 + h + 1)
		w.font("", 8.5)
		labelW := w.cw * 0.45
		for _, in := range it.Inputs {
			vl := w.split(in.Value, w.cw-labelW-3)
			w.ensure(float64(len(vl)) * w.lh())
			y := w.y()
			f.SetXY(w.left+3, y)
			w.textColor(colorGrey)
			w.cell(labelW-3, w.lh(), in.Name, "L")
			w.textColor("111827")
			for i, l := range vl {
				f.SetXY(w.left+labelW, y+float64(i)*w.lh())
				w.cell(w.cw-labelW, w.lh(), l, "L")
			}
			f.SetY(y + float64(len(vl))*w.lh())
		}
		w.font("B", 9)
		w.textColor(colorNavy)
		w.lines(w.left+3, w.cw-3, "Result: "+it.Result)
		w.gap(3)
	}
}
