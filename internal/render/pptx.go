package render

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PPTX: PresentationML written directly, 16:9. One master and one blank
// layout (minimal but complete, with a theme); a title slide, an "at a
// glance" slide, one slide per section (continued on further slides when the
// text would overflow), one per exhibit (tables continue likewise), native
// charts. Every slide carries the watermark (diagonal and in the footer)
// and its number (a slidenum field) "of" the total.

const (
	slideW   = 12192000
	slideH   = 6858000
	emuPerPt = 12700
	marginX  = 548640 // 0.6 in
	titleY   = 300000
	titleH   = 700000
	contentY = 1150000
	contentB = slideH - 620000 // bottom of the content area
	contentW = slideW - 2*marginX
	contentH = contentB - contentY
)

type pptxWriter struct {
	p      *plan
	c      *Case
	slides []*slide
	charts []chartPart
	big    bool // board template: larger type
}

type slide struct {
	body   strings.Builder
	nextID int
	charts []int // 1-based chart part numbers, in rId order
}

// pRun is a run of slide text; pPara a paragraph.
type pRun struct {
	text  string
	size  float64 // points
	bold  bool
	color string
	field string // "slidenum": a field whose cached text is text
}

type pPara struct {
	runs   []pRun
	align  string // l, ctr, r
	bullet bool
	before float64 // points of space before
}

type boxStyle struct {
	fill   string
	line   string
	anchor string // t, ctr, b
	inset  int    // EMU, all sides
	rot    int    // 60,000ths of a degree
	alpha  int    // text alpha in 1/1000 %; 0: opaque
	shape  string // preset geometry; default rect
	nowrap bool   // one line, never wrapped (the watermark)
}

func writePPTX(ctx context.Context, out io.Writer, p *plan, pr *progress) error {
	w := &pptxWriter{p: p, c: p.c, big: p.c.Template == BoardPresentation}
	w.titleSlide()
	blocks := slices.Clone(p.blocks)
	for i := 0; i < len(blocks); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		pr.block(i, len(blocks))
		switch b := blocks[i].(type) {
		case heading:
			// Short sections share a slide rather than each leaving a
			// slide with a sentence or two on it: the sections from here
			// to the next part (appendix) that fit one slide together are
			// told first, their exhibits follow in their order.
			var run []section
			var at []int // block index of each section's heading
			for j := i; j+1 < len(blocks); j++ {
				h, ok := blocks[j].(heading)
				if !ok {
					if _, exhibit := blocks[j].(prose); exhibit {
						break
					}
					continue
				}
				pb, ok := blocks[j+1].(prose)
				if !ok || h.Break {
					break
				}
				run, at = append(run, section{h.Text, pb.Text}), append(at, j)
				j++
			}
			if n := w.sharedSlide(run); n > 0 {
				// Drop the shared sections' headings and text; what lay
				// between them (their exhibits) stays, in order.
				last := at[n-1] + 1
				var rest []block
				for j := i; j <= last; j++ {
					if _, ok := blocks[j].(heading); ok && slices.Contains(at[:n], j) {
						j++ // and its prose
						continue
					}
					rest = append(rest, blocks[j])
				}
				blocks = slices.Concat(blocks[:i], rest, blocks[last+1:])
				i--
				continue
			}
			if len(run) > 0 {
				w.sectionSlides(run[0].title, run[0].body)
				i++
				continue
			}
			w.dividerSlide(b)
		case prose:
			w.sectionSlides("", b.Text)
		case keyFigures:
			w.keyFigures(b)
		case table:
			w.table(b)
		case chart:
			s := w.newSlide(b.Title)
			if len(b.Categories) == 0 {
				s.text(marginX, contentY, contentW, 600000, []pPara{{runs: []pRun{{text: "No data yet.", size: 18, color: colorGrey}}}}, boxStyle{})
				continue
			}
			h := contentH
			if b.Note != "" {
				h -= 400000
			}
			w.chart(s, chartXML(b, chartStyle{fontSize: 1200}), marginX, contentY, contentW, h, b.Title)
			if b.Note != "" {
				s.text(marginX, contentY+h+50000, contentW, 350000, []pPara{{runs: []pRun{{text: b.Note, size: 12, color: colorGrey}}}}, boxStyle{})
			}
		case gantt:
			for _, page := range b.pages(pptxGanttRows) {
				s := w.newSlide(page.Title)
				w.chart(s, ganttXML(page, chartStyle{fontSize: 1100}), marginX, contentY, contentW, contentH-350000, page.Title)
				var legend []pRun
				for _, it := range ganttLegend {
					legend = append(legend, pRun{text: "■ ", size: 12, color: projectColor(it.status)}, pRun{text: it.name + "     ", size: 12, color: "374151"})
				}
				s.text(marginX, contentB-330000, contentW, 330000, []pPara{{runs: legend, align: "ctr"}}, boxStyle{anchor: "ctr"})
			}
		case grid:
			w.grid(b)
		case calculations:
			w.calculations(b)
		}
	}
	pr.report(90)
	return w.write(out)
}

// pptxGanttRows is how many projects one roadmap slide shows at a readable size.
const pptxGanttRows = 16

// --- slide building -------------------------------------------------------------

func (w *pptxWriter) newSlide(title string) *slide {
	s := &slide{nextID: 2}
	w.slides = append(w.slides, s)
	if title != "" {
		size := 28.0
		if w.big {
			size = 32
		}
		size = fitSize(title, contentW, titleH, size, 18, 1)
		s.text(marginX, titleY, contentW, titleH, []pPara{{runs: []pRun{{text: title, size: size, bold: true, color: colorNavy}}}},
			boxStyle{anchor: "b"})
		s.rect(marginX, titleY+titleH+60000, 640080, 36000, colorCash)
	}
	return s
}

func (s *slide) id() int { s.nextID++; return s.nextID - 1 }

func runsXML(runs []pRun) string {
	var b strings.Builder
	for _, r := range runs {
		props := fmt.Sprintf(`<a:rPr lang="en-GB" sz="%d" b="%d" dirty="0">`, int(math.Round(r.size*100)), btoi(r.bold))
		if r.color != "" {
			props += `<a:solidFill><a:srgbClr val="` + r.color + `"/></a:solidFill>`
		}
		props += `<a:latin typeface="` + ooxmlFont + `"/><a:cs typeface="` + ooxmlFont + `"/></a:rPr>`
		if r.field != "" {
			fmt.Fprintf(&b, `<a:fld id="{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}" type="%s">%s<a:t>%s</a:t></a:fld>`, r.field, props, esc(r.text))
			continue
		}
		b.WriteString(`<a:r>` + props + `<a:t>` + esc(r.text) + `</a:t></a:r>`)
	}
	return b.String()
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func parasXML(paras []pPara, alpha int) string {
	var b strings.Builder
	for _, p := range paras {
		align := p.align
		if align == "" {
			align = "l"
		}
		b.WriteString(`<a:p><a:pPr algn="` + align + `"`)
		size := 12.0
		if len(p.runs) > 0 {
			size = p.runs[0].size
		}
		if p.bullet {
			ind := int(size * 1.1 * emuPerPt)
			fmt.Fprintf(&b, ` marL="%d" indent="-%d"`, ind, ind)
		}
		b.WriteString(`>`)
		if p.before > 0 {
			fmt.Fprintf(&b, `<a:spcBef><a:spcPts val="%d"/></a:spcBef>`, int(p.before*100))
		}
		if p.bullet {
			b.WriteString(`<a:buClr><a:srgbClr val="` + colorCash + `"/></a:buClr><a:buFont typeface="` + ooxmlFont + `"/><a:buChar char="•"/>`)
		} else {
			b.WriteString(`<a:buNone/>`)
		}
		b.WriteString(`</a:pPr>`)
		runs := runsXML(p.runs)
		if alpha > 0 {
			runs = strings.ReplaceAll(runs, `"/></a:solidFill>`, `"><a:alpha val="`+strconv.Itoa(alpha)+`"/></a:srgbClr></a:solidFill>`)
		}
		b.WriteString(runs)
		fmt.Fprintf(&b, `<a:endParaRPr lang="en-GB" sz="%d" dirty="0"/></a:p>`, int(size*100))
	}
	return b.String()
}

// text adds a text box (or a filled shape with text).
func (s *slide) text(x, y, cx, cy int, paras []pPara, st boxStyle) {
	id := s.id()
	geom := st.shape
	if geom == "" {
		geom = "rect"
	}
	fill := `<a:noFill/>`
	if st.fill != "" {
		fill = `<a:solidFill><a:srgbClr val="` + st.fill + `"/></a:solidFill>`
	}
	line := `<a:ln><a:noFill/></a:ln>`
	if st.line != "" {
		line = `<a:ln w="9525"><a:solidFill><a:srgbClr val="` + st.line + `"/></a:solidFill></a:ln>`
	}
	anchor := st.anchor
	if anchor == "" {
		anchor = "t"
	}
	wrap := "square"
	if st.nowrap {
		wrap = "none"
	}
	rot := ""
	if st.rot != 0 {
		rot = fmt.Sprintf(` rot="%d"`, st.rot)
	}
	fmt.Fprintf(&s.body, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name="Text %d"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>`+
		`<p:spPr><a:xfrm%s><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="%s"><a:avLst/></a:prstGeom>%s%s</p:spPr>`+
		`<p:txBody><a:bodyPr wrap="%s" lIns="%d" tIns="%d" rIns="%d" bIns="%d" anchor="%s" rtlCol="0"><a:noAutofit/></a:bodyPr><a:lstStyle/>%s</p:txBody></p:sp>`,
		id, id, rot, x, y, cx, cy, geom, fill, line, wrap, st.inset, st.inset, st.inset, st.inset, anchor, parasXML(paras, st.alpha))
}

func (s *slide) rect(x, y, cx, cy int, fill string) {
	id := s.id()
	fmt.Fprintf(&s.body, `<p:sp><p:nvSpPr><p:cNvPr id="%d" name="Shape %d"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr>`+
		`<p:spPr><a:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom>`+
		`<a:solidFill><a:srgbClr val="%s"/></a:solidFill><a:ln><a:noFill/></a:ln></p:spPr>`+
		`<p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="en-GB"/></a:p></p:txBody></p:sp>`, id, id, x, y, cx, cy, fill)
}

func (w *pptxWriter) chart(s *slide, part chartPart, x, y, cx, cy int, descr string) {
	w.charts = append(w.charts, part)
	s.charts = append(s.charts, len(w.charts))
	id := s.id()
	fmt.Fprintf(&s.body, `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="%d" name="Chart %d" descr="%s"/><p:cNvGraphicFramePr/><p:nvPr/></p:nvGraphicFramePr>`+
		`<p:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></p:xfrm><a:graphic><a:graphicData uri="%s">`+
		`<c:chart xmlns:c="%s" r:id="rId%d"/></a:graphicData></a:graphic></p:graphicFrame>`,
		id, id, esc(descr), x, y, cx, cy, nsC, nsC, len(s.charts)+1)
}

// --- text fitting -------------------------------------------------------------------

// emWidth estimates the width of s in ems, by glyph class, from DejaVu
// Sans (LibreOffice's fallback for Arial, and wider than Arial, so text
// sized with it also fits in PowerPoint).
func emWidth(s string, bold bool) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r == ' ':
			w += 0.32
		case strings.ContainsRune(".,:;'|!ilj()[]ıf t", r):
			w += 0.36
		case r == 'm' || r == 'w' || r == 'M' || r == 'W' || r == '%':
			w += 0.98
		case r >= '0' && r <= '9':
			w += 0.66
		case unicode.IsUpper(r):
			w += 0.74
		default:
			w += 0.6
		}
	}
	if bold {
		w *= 1.1
	}
	return w
}

// lineCount estimates how many lines text takes in a box cx EMU wide,
// wrapping at spaces as a text engine does.
func lineCount(text string, cx int, size float64) int {
	return lineCountStyle(text, cx, size, false)
}

func lineCountStyle(text string, cx int, size float64, bold bool) int {
	avail := float64(cx) / emuPerPt / size // in ems
	n := 0
	for _, l := range strings.Split(text, "\n") {
		lines, used := 1, 0.0
		for i, word := range strings.Fields(l) {
			ww := emWidth(word, bold)
			if i > 0 {
				ww += emWidth(" ", bold)
			}
			if used+ww > avail && used > 0 {
				lines++
				used = 0
				ww = emWidth(word, bold)
			}
			// A word wider than the box is broken across lines.
			for ww > avail {
				lines++
				ww -= avail
			}
			used += ww
		}
		n += lines
	}
	return n
}

// fitSize is the largest size from start down to min (by 1 pt) at which text
// fits the box in at most maxLines lines (0: as many as the height allows).
func fitSize(text string, cx, cy int, start, min float64, maxLines int) float64 {
	for size := start; size > min; size-- {
		lines := lineCountStyle(text, cx, size, true)
		if (maxLines == 0 || lines <= maxLines) && float64(lines)*size*1.2*emuPerPt <= float64(cy) {
			return size
		}
	}
	return min
}

// parasHeight estimates the height in EMU of paragraphs in a box cx wide.
func parasHeight(ps []pPara, cx int) float64 {
	h := 0.0
	for _, p := range ps {
		if len(p.runs) == 0 {
			continue
		}
		text := ""
		bold := true
		for _, r := range p.runs {
			text += r.text
			bold = bold && r.bold
		}
		size := p.runs[0].size
		h += float64(lineCountStyle(text, cx, size, bold))*size*1.2 + p.before
	}
	return h * emuPerPt
}

// prosePara is a section paragraph with its estimated height.
type prosePara struct {
	bullet bool
	text   string
}

func proseHeight(ps []prosePara, cx int, size float64) float64 {
	h := 0.0
	for _, p := range ps {
		w := cx
		if p.bullet {
			w -= int(size * 1.1 * emuPerPt)
		}
		h += float64(lineCount(p.text, w, size))*size*1.2 + size*0.6
	}
	return h * emuPerPt
}

// --- slides ---------------------------------------------------------------------------

func (w *pptxWriter) statusPill(s *slide, x, y int) {
	status := strings.ToUpper(Label(w.c.Status))
	cx := int((float64(utf8.RuneCountInString(status))*0.72*12 + 24) * emuPerPt)
	s.text(x, y, cx, 380000, []pPara{{runs: []pRun{{text: status, size: 12, bold: true, color: "FFFFFF"}}, align: "ctr"}},
		boxStyle{fill: statusColor(w.c.Status), anchor: "ctr", shape: "roundRect"})
}

func (w *pptxWriter) titleSlide() {
	c := w.c
	s := w.newSlide("")
	s.rect(0, 0, slideW, 120000, colorNavy)
	s.text(marginX, 900000, contentW, 400000, []pPara{{runs: []pRun{{text: strings.ToUpper(fmt.Sprintf("Business case · %s · version %d", c.Template.Title(), c.Version)),
		size: 13, bold: true, color: colorGrey}}}}, boxStyle{})
	size := fitSize(c.Name, contentW, 1300000, 44, 24, 2)
	s.text(marginX, 1300000, contentW, 1300000, []pPara{{runs: []pRun{{text: c.Name, size: size, bold: true, color: colorNavy}}}}, boxStyle{anchor: "b"})
	y := 2650000
	if c.InitiativeName != "" {
		s.text(marginX, y, contentW, 500000, []pPara{{runs: []pRun{{text: "Initiative: " + c.InitiativeName, size: 20, color: "374151"}}}}, boxStyle{})
		y += 520000
	}
	s.rect(marginX, y+60000, 900000, 45000, colorCash)
	w.statusPill(s, marginX, y+300000)
	y += 850000

	author := w.p.opts.Author
	if author == "" {
		author = "–"
	}
	details := [][2]string{{"Version", strconv.Itoa(c.Version)}, {"Status", Label(c.Status)}, {"Data as of", FormatTime(c.DataAsOf)},
		{"Prepared by", author}, {"Generated", FormatTime(w.p.opts.GeneratedAt)}}
	var paras []pPara
	for _, d := range details {
		paras = append(paras, pPara{runs: []pRun{{text: d[0] + ":  ", size: 13, color: colorGrey}, {text: d[1], size: 13, color: "111827"}}, before: 2})
	}
	half := contentW/2 - 150000
	s.text(marginX, y, half, contentB-y, paras, boxStyle{})

	var ap []pPara
	ap = append(ap, pPara{runs: []pRun{{text: "Approval", size: 15, bold: true, color: colorNavy}}})
	if a := c.Approval; a != nil {
		ap = append(ap, pPara{runs: []pRun{{text: fmt.Sprintf("Approved at %s level by %s on %s.", a.Level, a.By, FormatTime(a.At)), size: 13, color: "1F2937"}}, before: 6})
		if a.Notes != "" {
			ap = append(ap, pPara{runs: []pRun{{text: "Notes: " + a.Notes, size: 12, color: "1F2937"}}, before: 6})
		}
	} else {
		ap = append(ap, pPara{runs: []pRun{{text: "Not approved: this version is " + strings.ToLower(Label(c.Status)) + ".", size: 13, color: "1F2937"}}, before: 6})
	}
	ax := marginX + half + 300000
	aw := contentW - half - 300000 - 60000
	ah := min(contentB-y-100000, int(parasHeight(ap, aw-360000))+360000+150000)
	s.rect(ax, y, 60000, ah, statusColor(c.Status))
	s.text(ax+60000, y, aw, ah, ap, boxStyle{fill: colorShade, inset: 180000})
}

func (w *pptxWriter) dividerSlide(h heading) {
	s := w.newSlide("")
	s.rect(0, 0, 260000, slideH, colorNavy)
	s.text(marginX+200000, 2100000, contentW-200000, 1300000, []pPara{{runs: []pRun{{text: h.Text, size: 44, bold: true, color: colorNavy}}}}, boxStyle{anchor: "b"})
	s.rect(marginX+200000, 3500000, 900000, 45000, colorCash)
	if h.Lead != "" {
		s.text(marginX+200000, 3650000, contentW-200000, 600000, []pPara{{runs: []pRun{{text: h.Lead, size: 20, color: colorGrey}}}}, boxStyle{})
	}
}

type section struct{ title, body string }

// sharedSlide puts the first sections of run that fit together on one
// slide, each under its title, and returns how many it placed (0: fewer
// than two fit, each gets its own slides).
func (w *pptxWriter) sharedSlide(run []section) int {
	size := 18.0
	if w.big {
		size = 20
	}
	paras := func(secs []section) []pPara {
		var out []pPara
		for _, sec := range secs {
			out = append(out, pPara{runs: []pRun{{text: sec.title, size: size + 4, bold: true, color: colorNavy}}, before: size})
			for _, p := range paragraphs(sec.body) {
				out = append(out, pPara{runs: []pRun{{text: p.Text, size: size, color: "1F2937"}}, bullet: p.Bullet, before: size * 0.5})
			}
		}
		return out
	}
	n := 0
	for n < len(run) && parasHeight(paras(run[:n+1]), contentW-2*bulletIndent) <= float64(contentH)*0.9 {
		n++
	}
	if n < 2 {
		return 0
	}
	titles := make([]string, n)
	for i, sec := range run[:n] {
		titles[i] = sec.title
	}
	s := w.newSlide(strings.Join(titles, " · "))
	s.text(marginX, contentY, contentW, contentH, paras(run[:n]), boxStyle{})
	return n
}

// bulletIndent is the room a bullet takes from a paragraph's width.
const bulletIndent = 300000

// sectionSlides puts a section on one slide, at the largest size that fits,
// and continues it on further slides when even the smallest does not.
func (w *pptxWriter) sectionSlides(title, body string) {
	var ps []prosePara
	for _, p := range paragraphs(body) {
		ps = append(ps, prosePara{p.Bullet, p.Text})
	}
	start, min := 24.0, 14.0
	if w.big {
		start, min = 28, 16
	}
	size := start
	for size > min && proseHeight(ps, contentW, size) > contentH {
		size--
	}
	pages := [][]prosePara{}
	var cur []prosePara
	for _, p := range ps {
		for _, piece := range splitToFit(p, contentW, contentH, size) {
			if len(cur) > 0 && proseHeight(append(cur, piece), contentW, size) > contentH {
				pages = append(pages, cur)
				cur = nil
			}
			cur = append(cur, piece)
		}
	}
	if len(cur) > 0 || len(pages) == 0 {
		pages = append(pages, cur)
	}
	for i, page := range pages {
		t := title
		if i > 0 {
			t += " (continued)"
		}
		s := w.newSlide(t)
		var paras []pPara
		for _, p := range page {
			paras = append(paras, pPara{runs: []pRun{{text: p.text, size: size, color: "1F2937"}}, bullet: p.bullet, before: size * 0.6})
		}
		s.text(marginX, contentY, contentW, contentH, paras, boxStyle{})
	}
}

// splitToFit cuts a paragraph longer than a whole slide at word boundaries.
func splitToFit(p prosePara, cx, cy int, size float64) []prosePara {
	if proseHeight([]prosePara{p}, cx, size) <= float64(cy) {
		return []prosePara{p}
	}
	var words []string
	for _, wd := range strings.Fields(p.text) {
		words = append(words, cutToFit(wd, p.bullet, cx, cy, size)...)
	}
	var out []prosePara
	var cur []string
	for _, wd := range words {
		if proseHeight([]prosePara{{p.bullet, wd}}, cx, size) > float64(cy)/2 { // a cut piece of a very long word: a paragraph of its own
			if len(cur) > 0 {
				out = append(out, prosePara{p.bullet, strings.Join(cur, " ")})
				cur = nil
			}
			out = append(out, prosePara{p.bullet, wd})
			continue
		}
		next := append(cur, wd)
		if len(cur) > 0 && proseHeight([]prosePara{{p.bullet, strings.Join(next, " ")}}, cx, size) > float64(cy) {
			out = append(out, prosePara{p.bullet, strings.Join(cur, " ")})
			cur = []string{wd}
			continue
		}
		cur = next
	}
	if len(cur) > 0 {
		out = append(out, prosePara{p.bullet, strings.Join(cur, " ")})
	}
	return out
}

// cutToFit cuts a word taller than half a slide (20,000 characters without a
// space are valid text) into pieces of at most half a slide, so that no
// piece runs off its slide.
func cutToFit(word string, bullet bool, cx, cy int, size float64) []string {
	if proseHeight([]prosePara{{bullet, word}}, cx, size) <= float64(cy)/2 {
		return []string{word}
	}
	rs := []rune(word)
	n := len(rs)
	for n > 1 && proseHeight([]prosePara{{bullet, string(rs[:n])}}, cx, size) > float64(cy)/2 {
		n /= 2
	}
	var out []string
	for i := 0; i < len(rs); i += n {
		out = append(out, string(rs[i:min(i+n, len(rs))]))
	}
	return out
}

func (w *pptxWriter) keyFigures(k keyFigures) {
	s := w.newSlide(k.Title)
	// Three cards a row, so "Plan CHF 2.46m" stays on one line.
	perRow := min(len(k.Items), 3)
	gap := 230000
	cardW := (contentW - gap*(perRow-1)) / perRow
	cardH := (contentH - gap) / 2
	// One size for every card's figure: the largest at which each fits its
	// card on one line, so the cards are full and read alike.
	valueSize, labelSize := 48.0, 16.0
	if k.Big {
		valueSize, labelSize = 54, 18
	}
	for _, it := range k.Items {
		valueSize = min(valueSize, fitSize(it.Value, cardW-300000, 2*int(valueSize*1.2*emuPerPt), valueSize, 18, 1))
	}
	forecastSize := labelSize + 4
	for _, it := range k.Items {
		forecastSize = min(forecastSize, fitSize(it.Forecast, cardW-300000, 2*int(forecastSize*1.2*emuPerPt), forecastSize, 9, 1))
	}
	card := func(i int, paras []pPara) {
		x := marginX + (i%perRow)*(cardW+gap)
		y := contentY + (i/perRow)*(cardH+gap)
		s.rect(x, y, cardW, 60000, colorCash)
		s.text(x, y+60000, cardW, cardH-60000, paras, boxStyle{fill: colorShade, inset: 150000, anchor: "ctr"})
	}
	for i, it := range k.Items {
		card(i, []pPara{
			{runs: []pRun{{text: it.Label, size: labelSize, color: colorGrey}}},
			{runs: []pRun{{text: it.Value, size: valueSize, bold: true, color: colorNavy}}, before: 8},
			{runs: []pRun{{text: it.Forecast, size: forecastSize, bold: true, color: colorNavy}}, before: 6},
			{runs: []pRun{{text: it.Note, size: labelSize - 2, color: colorGrey}}, before: 8},
		})
	}
	// The grid's free place says what the figures mean, from the figures.
	if n := len(k.Items); n%perRow != 0 && n < 2*perRow {
		if text := w.c.figureSentences(); text != "" {
			size := labelSize
			for size > 11 && parasHeight([]pPara{{runs: []pRun{{text: text, size: size}}}}, cardW-300000) > float64(cardH-360000-int(labelSize*1.6*emuPerPt)) {
				size--
			}
			card(n, []pPara{
				{runs: []pRun{{text: "In brief", size: labelSize, color: colorGrey}}},
				{runs: []pRun{{text: text, size: size, color: "1F2937"}}, before: 8},
			})
		}
	}
}

// table splits rows over as many slides as needed; the header repeats and
// the total closes the last one.
func (w *pptxWriter) table(t table) {
	var widths []int
	noteH := 0
	if t.Note != "" {
		noteH = 450000
	}
	var size float64
	rowH := func(cells []string) int {
		lines := 1
		for i, c := range cells {
			if i < len(widths) {
				lines = max(lines, lineCount(c, widths[i]-140000, size))
			}
		}
		return int(float64(lines)*size*1.25*emuPerPt) + 130000
	}
	// paginate lists the row indexes on each slide at the current size.
	paginate := func() [][]int {
		avail := contentH - noteH
		headH := 0
		if !t.NoHeader {
			headH = rowH(headers(t.Cols))
		}
		var pages [][]int
		var cur []int
		used := headH
		for i, r := range t.Rows {
			h := rowH(r)
			if len(cur) > 0 && used+h > avail {
				pages = append(pages, cur)
				cur, used = nil, headH
			}
			cur = append(cur, i)
			used += h
		}
		if t.Total != nil && len(cur) > 0 && used+rowH(t.Total) > avail {
			pages = append(pages, cur)
			cur = nil
		}
		return append(pages, cur)
	}
	// The largest type at which every number and word fits its column and
	// that needs no more slides than the smallest does.
	sizes := []float64{16, 14, 12, 11, 10, 9}
	if w.big {
		sizes = append([]float64{18}, sizes...)
	}
	size = sizes[len(sizes)-1]
	widths = columnWidths(t, size)
	fewest := len(paginate())
	for _, sz := range sizes {
		size = sz
		if widths = columnWidths(t, sz); widths == nil {
			continue
		}
		if len(paginate()) == fewest {
			break
		}
	}
	if widths == nil {
		size = sizes[len(sizes)-1]
		widths = columnWidths(t, size)
	}
	pages := paginate()
	for pi, rows := range pages {
		title := t.Title
		if len(pages) > 1 {
			title = fmt.Sprintf("%s (%d/%d)", t.Title, pi+1, len(pages))
		}
		s := w.newSlide(title)
		var b strings.Builder
		height := 0
		row := func(cells []string, bold bool, fill, color, topLine string) {
			h := rowH(cells)
			height += h
			fmt.Fprintf(&b, `<a:tr h="%d">`, h)
			for i := range t.Cols {
				cell := ""
				if i < len(cells) {
					cell = cells[i]
				}
				align := "l"
				if t.Cols[i].Right {
					align = "r"
				}
				c := color
				if t.NoHeader && i == 0 {
					c = colorGrey
				}
				b.WriteString(`<a:tc><a:txBody><a:bodyPr/><a:lstStyle/>` +
					parasXML([]pPara{{runs: []pRun{{text: cell, size: size, bold: bold, color: c}}, align: align}}, 0) +
					`</a:txBody><a:tcPr marL="70000" marR="70000" marT="45000" marB="45000" anchor="ctr">` +
					`<a:lnL w="0"><a:noFill/></a:lnL><a:lnR w="0"><a:noFill/></a:lnR>`)
				if topLine != "" {
					b.WriteString(`<a:lnT w="19050"><a:solidFill><a:srgbClr val="` + topLine + `"/></a:solidFill></a:lnT>`)
				} else {
					b.WriteString(`<a:lnT w="0"><a:noFill/></a:lnT>`)
				}
				b.WriteString(`<a:lnB w="6350"><a:solidFill><a:srgbClr val="E5E7EB"/></a:solidFill></a:lnB>`)
				if fill != "" {
					b.WriteString(`<a:solidFill><a:srgbClr val="` + fill + `"/></a:solidFill>`)
				} else {
					b.WriteString(`<a:noFill/>`)
				}
				b.WriteString(`</a:tcPr></a:tc>`)
			}
			b.WriteString(`</a:tr>`)
		}
		if !t.NoHeader {
			row(headers(t.Cols), true, colorNavy, "FFFFFF", "")
		}
		for _, i := range rows {
			fill := ""
			if i%2 == 1 && !t.NoHeader {
				fill = "F6F8FB"
			}
			bold := i == t.Highlight
			if bold {
				fill = "FCE9D9"
			}
			row(t.Rows[i], bold, fill, "111827", "")
		}
		if t.Total != nil && pi == len(pages)-1 {
			row(t.Total, true, "", colorNavy, colorNavy)
		}
		var grid strings.Builder
		for _, cw := range widths {
			fmt.Fprintf(&grid, `<a:gridCol w="%d"/>`, cw)
		}
		id := s.id()
		fmt.Fprintf(&s.body, `<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="%d" name="Table %d"/><p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr>`+
			`<p:xfrm><a:off x="%d" y="%d"/><a:ext cx="%d" cy="%d"/></p:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table">`+
			`<a:tbl><a:tblPr firstRow="%d" bandRow="1"/><a:tblGrid>%s</a:tblGrid>%s</a:tbl></a:graphicData></a:graphic></p:graphicFrame>`,
			id, id, marginX, contentY, contentW, height, btoi(!t.NoHeader), grid.String(), b.String())
		if t.Note != "" && pi == len(pages)-1 {
			// At the foot of the content area: a renderer's row heights may
			// differ from the estimate, the note must not cover the table.
			s.text(marginX, contentB-noteH, contentW, noteH, []pPara{{runs: []pRun{{text: t.Note, size: 11, color: colorGrey}}}}, boxStyle{anchor: "b"})
		}
	}
}

// cellMargins is a table cell's left and right margin (marL + marR).
const cellMargins = 140000

// columnWidths sizes a table's columns at a type size (fitColumns); nil
// when its numbers and words do not fit at that size, except at the
// smallest, where they are scaled to the slide.
func columnWidths(t table, size float64) []int {
	fit, fits := fitColumns(t, float64(contentW), func(s string, bold bool) float64 {
		return emWidth(s, bold)*size*emuPerPt*1.08 + cellMargins
	})
	if !fits && size > 9 {
		return nil
	}
	out := make([]int, len(fit))
	for i, x := range fit {
		out[i] = int(x)
	}
	return out
}

func (w *pptxWriter) grid(g grid) {
	s := w.newSlide(g.Title)
	if g.Total == 0 {
		s.text(marginX, contentY, contentW, 600000, []pPara{{runs: []pRun{{text: "No stakeholders are mapped yet.", size: 18, color: colorGrey}}}}, boxStyle{})
		return
	}
	axis := 450000
	gap := 100000
	legendH := 330000
	boxW := (contentW - axis - gap) / 2
	boxH := (contentH - legendH - 300000 - gap) / 2
	fills := map[Quadrant]string{ManageClosely: "DCE8F2", KeepSatisfied: "EAF1F7", KeepInformed: "EAF1F7", Monitor: "F4F6F9"}
	for i, q := range g.Quadrants {
		x := marginX + axis + (i%2)*(boxW+gap)
		y := contentY + (i/2)*(boxH+gap)
		paras := []pPara{
			{runs: []pRun{{text: fmt.Sprintf("%s (%d)", q.Title, len(q.People)+q.More), size: 16, bold: true, color: colorNavy}}},
			{runs: []pRun{{text: q.Advice, size: 11, color: colorGrey}}},
		}
		for j, p := range q.People {
			glyph := pRun{text: "● ", size: 12, color: sentimentColor(p.Sentiment)}
			if glyph.color == "" {
				glyph = pRun{text: "○ ", size: 12, color: "9CA3AF"}
			}
			runs := []pRun{glyph, {text: p.Name, size: 12, color: "111827"}}
			if p.Role != "" {
				runs = append(runs, pRun{text: " · " + p.Role, size: 11, color: colorGrey})
			}
			before := 0.0
			if j == 0 {
				before = 6
			}
			paras = append(paras, pPara{runs: runs, before: before})
		}
		if q.More > 0 {
			paras = append(paras, pPara{runs: []pRun{{text: fmt.Sprintf("+ %d more", q.More), size: 12, color: colorGrey}}})
		}
		if len(q.People) == 0 {
			paras = append(paras, pPara{runs: []pRun{{text: "Nobody", size: 12, color: colorGrey}}, before: 6})
		}
		s.text(x, y, boxW, boxH, paras, boxStyle{fill: fills[q.Quadrant], inset: 120000})
	}
	gridH := 2*boxH + gap
	// Axis labels: influence up the left side, interest along the bottom.
	s.text(marginX+axis/2-gridH/2, contentY+gridH/2-axis/2, gridH, axis,
		[]pPara{{runs: []pRun{{text: "Influence (power) →", size: 12, bold: true, color: colorGrey}}, align: "ctr"}}, boxStyle{anchor: "ctr", rot: 16200000})
	s.text(marginX+axis, contentY+gridH+20000, contentW-axis, 280000,
		[]pPara{{runs: []pRun{{text: "Interest →", size: 12, bold: true, color: colorGrey}}, align: "ctr"}}, boxStyle{})
	legend := []pRun{}
	for _, it := range []struct{ name, s string }{{"positive", "positive"}, {"neutral", "neutral"}, {"cautious", "cautious"}, {"negative", "negative"}} {
		legend = append(legend, pRun{text: "● ", size: 11, color: sentimentColor(it.s)}, pRun{text: it.name + "    ", size: 11, color: "374151"})
	}
	legend = append(legend, pRun{text: "○ ", size: 11, color: "9CA3AF"}, pRun{text: "not engaged yet", size: 11, color: "374151"})
	s.text(marginX+axis, contentY+gridH+300000, contentW-axis, legendH, []pPara{{runs: legend}}, boxStyle{})
}

func (w *pptxWriter) calculations(k calculations) {
	if len(k.Items) == 0 {
		s := w.newSlide(k.Title)
		s.text(marginX, contentY, contentW, 600000, []pPara{{runs: []pRun{{text: "No calculations were recorded in this snapshot.", size: 18, color: colorGrey}}}}, boxStyle{})
		return
	}
	entry := func(it Calculation) []pPara {
		ps := []pPara{
			{runs: []pRun{{text: it.Name, size: 15, bold: true, color: "111827"}}, before: 10},
			{runs: []pRun{{text: it.Formula, size: 13, color: colorNavy}}, before: 2},
		}
		for _, in := range it.Inputs {
			ps = append(ps, pPara{runs: []pRun{{text: in.Name + ": ", size: 12, color: colorGrey}, {text: in.Value, size: 12, color: "111827"}}, bullet: true})
		}
		return append(ps, pPara{runs: []pRun{{text: "Result: " + it.Result, size: 13, bold: true, color: colorNavy}}, before: 2})
	}
	height := func(ps []pPara) float64 { return parasHeight(ps, contentW) }
	// An entry moves whole to the next slide when it fits there; a longer
	// one (a list of inputs) continues on the next slide under its name.
	var pages [][]pPara
	var cur []pPara
	for _, it := range k.Items {
		e := entry(it)
		if len(cur) > 0 && height(append(slices.Clone(cur), e...)) > float64(contentH) && height(e) <= float64(contentH) {
			pages, cur = append(pages, cur), nil
		}
		for i, para := range e {
			if len(cur) > 0 && height(append(slices.Clone(cur), para)) > float64(contentH) {
				pages, cur = append(pages, cur), nil
				if i > 0 {
					cur = append(cur, pPara{runs: []pRun{{text: it.Name + " (continued)", size: 15, bold: true, color: "111827"}}})
				}
			}
			cur = append(cur, para)
		}
	}
	pages = append(pages, cur)
	for i, page := range pages {
		title := k.Title
		if len(pages) > 1 {
			title = fmt.Sprintf("%s (%d/%d)", k.Title, i+1, len(pages))
		}
		s := w.newSlide(title)
		s.text(marginX, contentY, contentW, contentH, page, boxStyle{})
	}
}

// --- package ---------------------------------------------------------------------------

const pptxNS = `xmlns:a="` + nsA + `" xmlns:r="` + nsR + `" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`

const emptyTree = `<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr>` +
	`<p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>`

// furniture adds what every slide carries: footer, number, watermark. It
// returns the shapes that go behind the content: the diagonal watermark is
// the bottom shape, so it never covers a figure and a reader editing the
// slide selects the content first.
func (w *pptxWriter) furniture(s *slide, n, total int) string {
	left := fmt.Sprintf("%s · v%d · data as of %s", w.c.Name, w.c.Version, FormatDate(w.c.DataAsOf))
	y := slideH - 440000
	s.text(marginX, y, contentW*45/100, 300000, []pPara{{runs: []pRun{{text: left, size: 10, color: colorGrey}}}}, boxStyle{anchor: "ctr"})
	s.text(marginX+contentW*75/100, y, contentW*25/100, 300000, []pPara{{runs: []pRun{
		{text: "Slide ", size: 10, color: colorGrey}, {text: strconv.Itoa(n), size: 10, color: colorGrey, field: "slidenum"},
		{text: " of " + strconv.Itoa(total), size: 10, color: colorGrey}}, align: "r"}}, boxStyle{anchor: "ctr"})
	wm := w.p.opts.Watermark
	if wm == "" {
		return ""
	}
	s.text(marginX+contentW*45/100, y, contentW*30/100, 300000, []pPara{{runs: []pRun{{text: wm, size: 10, bold: true, color: "B91C1C"}}, align: "ctr"}},
		boxStyle{anchor: "ctr"})
	// Diagonal and translucent, behind the content (charts and cards let
	// it show through their transparent or light fills).
	boxW := 11 * 914400
	size := math.Max(math.Min(60, float64(boxW)/emuPerPt/emWidth(wm, true)*0.92), 14)
	boxH := int(size * 1.5 * emuPerPt)
	front := s.body.String()
	s.body.Reset()
	s.text((slideW-boxW)/2, (slideH-boxH)/2, boxW, boxH, []pPara{{runs: []pRun{{text: wm, size: size, bold: true, color: "B91C1C"}}, align: "ctr"}},
		boxStyle{anchor: "ctr", rot: 20100000, alpha: 16000, nowrap: true})
	back := s.body.String()
	s.body.Reset()
	s.body.WriteString(front)
	return back
}

func (w *pptxWriter) write(out io.Writer) error {
	p := w.p
	pk := newPkg(out, p.opts.GeneratedAt)
	var ct strings.Builder
	ct.WriteString(xmlHeader + `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="` + ctRels + `"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="xlsx" ContentType="` + ctXLSX + `"/>` +
		`<Override PartName="/ppt/presentation.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"/>` +
		`<Override PartName="/ppt/slideMasters/slideMaster1.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideMaster+xml"/>` +
		`<Override PartName="/ppt/slideLayouts/slideLayout1.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slideLayout+xml"/>` +
		`<Override PartName="/ppt/theme/theme1.xml" ContentType="application/vnd.openxmlformats-officedocument.theme+xml"/>` +
		`<Override PartName="/ppt/presProps.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.presProps+xml"/>` +
		`<Override PartName="/ppt/viewProps.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.viewProps+xml"/>` +
		`<Override PartName="/ppt/tableStyles.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.tableStyles+xml"/>` +
		`<Override PartName="/docProps/core.xml" ContentType="` + ctCore + `"/>` +
		`<Override PartName="/docProps/app.xml" ContentType="` + ctApp + `"/>`)
	for i := range w.slides {
		fmt.Fprintf(&ct, `<Override PartName="/ppt/slides/slide%d.xml" ContentType="application/vnd.openxmlformats-officedocument.presentationml.slide+xml"/>`, i+1)
	}
	for i := range w.charts {
		fmt.Fprintf(&ct, `<Override PartName="/ppt/charts/chart%d.xml" ContentType="%s"/>`, i+1, ctChart)
	}
	ct.WriteString(`</Types>`)
	pk.add("[Content_Types].xml", ct.String())
	pk.add("_rels/.rels", rels(
		[3]string{"rId1", nsR + "/officeDocument", "ppt/presentation.xml"},
		[3]string{"rId2", "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties", "docProps/core.xml"},
		[3]string{"rId3", nsR + "/extended-properties", "docProps/app.xml"},
	))
	pk.add("docProps/core.xml", coreXML(p.c, p.opts))
	pk.add("docProps/app.xml", appXML("Valuecase"))

	presRels := [][3]string{
		{"rId1", nsR + "/slideMaster", "slideMasters/slideMaster1.xml"},
		{"rId2", nsR + "/theme", "theme/theme1.xml"},
		{"rId3", nsR + "/presProps", "presProps.xml"},
		{"rId4", nsR + "/viewProps", "viewProps.xml"},
		{"rId5", nsR + "/tableStyles", "tableStyles.xml"},
	}
	var ids strings.Builder
	for i := range w.slides {
		presRels = append(presRels, [3]string{fmt.Sprintf("rId%d", 10+i), nsR + "/slide", fmt.Sprintf("slides/slide%d.xml", i+1)})
		fmt.Fprintf(&ids, `<p:sldId id="%d" r:id="rId%d"/>`, 256+i, 10+i)
	}
	pk.add("ppt/_rels/presentation.xml.rels", rels(presRels...))
	pk.add("ppt/presentation.xml", xmlHeader+`<p:presentation `+pptxNS+` saveSubsetFonts="1">`+
		`<p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst>`+
		`<p:sldIdLst>`+ids.String()+`</p:sldIdLst>`+
		fmt.Sprintf(`<p:sldSz cx="%d" cy="%d"/><p:notesSz cx="6858000" cy="9144000"/>`, slideW, slideH)+
		`<p:defaultTextStyle><a:lvl1pPr><a:defRPr sz="1800"><a:latin typeface="`+ooxmlFont+`"/></a:defRPr></a:lvl1pPr></p:defaultTextStyle>`+
		`</p:presentation>`)
	pk.add("ppt/presProps.xml", xmlHeader+`<p:presentationPr `+pptxNS+`/>`)
	pk.add("ppt/viewProps.xml", xmlHeader+`<p:viewPr `+pptxNS+`><p:normalViewPr><p:restoredLeft sz="15620"/><p:restoredTop sz="94660"/></p:normalViewPr>`+
		`<p:gridSpacing cx="76200" cy="76200"/></p:viewPr>`)
	pk.add("ppt/tableStyles.xml", xmlHeader+`<a:tblStyleLst xmlns:a="`+nsA+`" def="{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}"/>`)
	pk.add("ppt/slideMasters/slideMaster1.xml", slideMaster)
	pk.add("ppt/slideMasters/_rels/slideMaster1.xml.rels", rels(
		[3]string{"rId1", nsR + "/slideLayout", "../slideLayouts/slideLayout1.xml"},
		[3]string{"rId2", nsR + "/theme", "../theme/theme1.xml"},
	))
	pk.add("ppt/slideLayouts/slideLayout1.xml", xmlHeader+`<p:sldLayout `+pptxNS+` type="blank" preserve="1"><p:cSld name="Blank"><p:spTree>`+emptyTree+
		`</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>`)
	pk.add("ppt/slideLayouts/_rels/slideLayout1.xml.rels", rels([3]string{"rId1", nsR + "/slideMaster", "../slideMasters/slideMaster1.xml"}))
	pk.add("ppt/theme/theme1.xml", theme)
	for i, s := range w.slides {
		back := w.furniture(s, i+1, len(w.slides))
		pk.add(fmt.Sprintf("ppt/slides/slide%d.xml", i+1), xmlHeader+`<p:sld `+pptxNS+`><p:cSld><p:spTree>`+emptyTree+back+s.body.String()+
			`</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>`)
		sr := [][3]string{{"rId1", nsR + "/slideLayout", "../slideLayouts/slideLayout1.xml"}}
		for j, c := range s.charts {
			sr = append(sr, [3]string{fmt.Sprintf("rId%d", j+2), relChart, fmt.Sprintf("../charts/chart%d.xml", c)})
		}
		pk.add(fmt.Sprintf("ppt/slides/_rels/slide%d.xml.rels", i+1), rels(sr...))
	}
	pk.addCharts("ppt", w.charts)
	return pk.close()
}

const slideMaster = xmlHeader + `<p:sldMaster ` + pptxNS + `><p:cSld><p:bg><p:bgPr><a:solidFill><a:srgbClr val="FFFFFF"/></a:solidFill><a:effectLst/></p:bgPr></p:bg>` +
	`<p:spTree>` + emptyTree + `</p:spTree></p:cSld>` +
	`<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink"/>` +
	`<p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst>` +
	`<p:txStyles><p:titleStyle><a:lvl1pPr><a:defRPr sz="2800" b="1"><a:solidFill><a:srgbClr val="` + colorNavy + `"/></a:solidFill><a:latin typeface="+mj-lt"/></a:defRPr></a:lvl1pPr></p:titleStyle>` +
	`<p:bodyStyle><a:lvl1pPr><a:defRPr sz="1800"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/></a:defRPr></a:lvl1pPr></p:bodyStyle>` +
	`<p:otherStyle><a:lvl1pPr><a:defRPr sz="1800"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/></a:defRPr></a:lvl1pPr></p:otherStyle></p:txStyles>` +
	`</p:sldMaster>`

// theme is a complete, small theme: PowerPoint refuses a package without one.
const theme = xmlHeader + `<a:theme xmlns:a="` + nsA + `" name="Valuecase"><a:themeElements>` +
	`<a:clrScheme name="Valuecase"><a:dk1><a:srgbClr val="1F2937"/></a:dk1><a:lt1><a:srgbClr val="FFFFFF"/></a:lt1>` +
	`<a:dk2><a:srgbClr val="` + colorNavy + `"/></a:dk2><a:lt2><a:srgbClr val="` + colorShade + `"/></a:lt2>` +
	`<a:accent1><a:srgbClr val="` + colorNavy + `"/></a:accent1><a:accent2><a:srgbClr val="` + colorCash + `"/></a:accent2>` +
	`<a:accent3><a:srgbClr val="` + colorExpected + `"/></a:accent3><a:accent4><a:srgbClr val="` + colorPayback + `"/></a:accent4>` +
	`<a:accent5><a:srgbClr val="6B9E78"/></a:accent5><a:accent6><a:srgbClr val="9CA3AF"/></a:accent6>` +
	`<a:hlink><a:srgbClr val="1F6FB2"/></a:hlink><a:folHlink><a:srgbClr val="6B4FA0"/></a:folHlink></a:clrScheme>` +
	`<a:fontScheme name="Valuecase"><a:majorFont><a:latin typeface="` + ooxmlFont + `"/><a:ea typeface=""/><a:cs typeface=""/></a:majorFont>` +
	`<a:minorFont><a:latin typeface="` + ooxmlFont + `"/><a:ea typeface=""/><a:cs typeface=""/></a:minorFont></a:fontScheme>` +
	`<a:fmtScheme name="Valuecase"><a:fillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill>` +
	`<a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:fillStyleLst>` +
	`<a:lnStyleLst><a:ln w="6350"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln><a:ln w="12700"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln>` +
	`<a:ln w="19050"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln></a:lnStyleLst>` +
	`<a:effectStyleLst><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle></a:effectStyleLst>` +
	`<a:bgFillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"/></a:solidFill>` +
	`<a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:bgFillStyleLst></a:fmtScheme>` +
	`</a:themeElements><a:objectDefaults/><a:extraClrSchemeLst/></a:theme>`
