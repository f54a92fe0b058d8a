package render

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// DOCX: WordprocessingML written directly. Real heading styles (Heading1–3
// in styles.xml, so Word's navigation pane and TOC see them), real tables
// with repeating header rows, native charts, a header with the watermark
// (text plus a diagonal VML watermark) and a footer with PAGE/NUMPAGES.

const (
	twipsPerMM = 56.6929
	emuPerMM   = 36000
)

type docxWriter struct {
	p      *plan
	c      *Case
	body   strings.Builder
	charts []chartPart // chart parts, word/charts/chartN.xml
	shapes int         // drawing ids
	pageW  int         // twips
	pageH  int
	margin int
	textW  int // twips between the margins
	parts  int // headings placed so far: their bookmarks for the contents
}

func writeDOCX(ctx context.Context, out io.Writer, p *plan, pr *progress) error {
	w := &docxWriter{p: p, c: p.c, pageW: 11906, pageH: 16838, margin: 1134}
	if p.c.Template == BoardPresentation {
		w.pageW, w.pageH = w.pageH, w.pageW
	}
	w.textW = w.pageW - 2*w.margin
	w.titlePage()
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
			w.exhibitTitle(b.Title)
			if len(b.Categories) == 0 {
				w.note("No data yet.")
				continue
			}
			w.chart(chartXML(b, chartStyle{fontSize: 800}), 80, b.Title)
			w.note(b.Note)
		case gantt:
			for _, page := range b.pages(docxGanttRows) {
				w.exhibitTitle(page.Title)
				w.chart(ganttXML(page, chartStyle{fontSize: 800}), float64(22+9*len(page.Rows)), page.Title)
			}
			if len(b.Rows) > 0 {
				var legend []run
				for _, it := range ganttLegend {
					legend = append(legend, run{text: "■ ", color: projectColor(it.status)}, run{text: it.name + "    "})
				}
				w.para("Note", `<w:jc w:val="center"/>`, legend...)
			}
		case grid:
			w.grid(b)
		case calculations:
			w.calculations(b)
		case contents:
			w.contents(b)
		}
	}
	pr.report(90)

	pk := newPkg(out, p.opts.GeneratedAt)
	ct := `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="` + ctRels + `"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="xlsx" ContentType="` + ctXLSX + `"/>` +
		`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
		`<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>` +
		`<Override PartName="/word/settings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"/>` +
		`<Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/>` +
		`<Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>` +
		`<Override PartName="/word/footer1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/>` +
		`<Override PartName="/docProps/core.xml" ContentType="` + ctCore + `"/>` +
		`<Override PartName="/docProps/app.xml" ContentType="` + ctApp + `"/>`
	for i := range w.charts {
		ct += fmt.Sprintf(`<Override PartName="/word/charts/chart%d.xml" ContentType="%s"/>`, i+1, ctChart)
	}
	ct += `</Types>`
	pk.add("[Content_Types].xml", xmlHeader+ct)
	pk.add("_rels/.rels", rels(
		[3]string{"rId1", "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument", "word/document.xml"},
		[3]string{"rId2", "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties", "docProps/core.xml"},
		[3]string{"rId3", "http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties", "docProps/app.xml"},
	))
	pk.add("docProps/core.xml", coreXML(p.c, p.opts))
	pk.add("docProps/app.xml", appXML("Valuecase"))
	docRels := [][3]string{
		{"rIdStyles", nsR + "/styles", "styles.xml"},
		{"rIdSettings", nsR + "/settings", "settings.xml"},
		{"rIdNumbering", nsR + "/numbering", "numbering.xml"},
		{"rIdHeader", nsR + "/header", "header1.xml"},
		{"rIdFooter", nsR + "/footer", "footer1.xml"},
	}
	for i := range w.charts {
		docRels = append(docRels, [3]string{fmt.Sprintf("rIdChart%d", i+1), relChart, fmt.Sprintf("charts/chart%d.xml", i+1)})
	}
	pk.add("word/_rels/document.xml.rels", rels(docRels...))
	pk.add("word/document.xml", w.document())
	pk.add("word/styles.xml", docxStyles)
	pk.add("word/settings.xml", docxSettings)
	pk.add("word/numbering.xml", docxNumbering)
	pk.add("word/header1.xml", w.header())
	pk.add("word/footer1.xml", w.footer())
	pk.addCharts("word", w.charts)
	return pk.close()
}

const docxNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" ` +
	`xmlns:r="` + nsR + `" ` +
	`xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" ` +
	`xmlns:a="` + nsA + `" xmlns:c="` + nsC + `" ` +
	`xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" ` +
	`xmlns:w10="urn:schemas-microsoft-com:office:word"`

func (w *docxWriter) document() string {
	orient := ""
	if w.pageW > w.pageH {
		orient = ` w:orient="landscape"`
	}
	return xmlHeader + `<w:document ` + docxNS + `><w:body>` + w.body.String() +
		fmt.Sprintf(`<w:sectPr><w:headerReference w:type="default" r:id="rIdHeader"/><w:footerReference w:type="default" r:id="rIdFooter"/>`+
			`<w:pgSz w:w="%d" w:h="%d"%s/><w:pgMar w:top="1247" w:right="%d" w:bottom="1134" w:left="%d" w:header="567" w:footer="567" w:gutter="0"/>`+
			`</w:sectPr>`, w.pageW, w.pageH, orient, w.margin, w.margin) +
		`</w:body></w:document>`
}

// run is one run of text with direct formatting.
type run struct {
	text  string
	bold  bool
	size  int    // half-points; 0: style's
	color string // RRGGBB; "": style's
	shade string // background RRGGBB; "": none
}

func runXML(r run) string {
	var props strings.Builder
	if r.bold {
		props.WriteString(`<w:b/>`)
	}
	if r.shade != "" {
		props.WriteString(`<w:shd w:val="clear" w:color="auto" w:fill="` + r.shade + `"/>`)
	}
	if r.color != "" {
		props.WriteString(`<w:color w:val="` + r.color + `"/>`)
	}
	if r.size > 0 {
		fmt.Fprintf(&props, `<w:sz w:val="%d"/><w:szCs w:val="%d"/>`, r.size, r.size)
	}
	rpr := ""
	if props.Len() > 0 {
		rpr = `<w:rPr>` + props.String() + `</w:rPr>`
	}
	var b strings.Builder
	for i, line := range strings.Split(r.text, "\n") {
		if i > 0 {
			b.WriteString(`<w:br/>`)
		}
		b.WriteString(`<w:t xml:space="preserve">` + esc(line) + `</w:t>`)
	}
	return `<w:r>` + rpr + b.String() + `</w:r>`
}

// para writes a paragraph with a style, extra paragraph properties and runs.
func para(style, ppr string, runs ...run) string {
	var b strings.Builder
	b.WriteString(`<w:p>`)
	if style != "" || ppr != "" {
		b.WriteString(`<w:pPr>`)
		if style != "" {
			b.WriteString(`<w:pStyle w:val="` + style + `"/>`)
		}
		b.WriteString(ppr + `</w:pPr>`)
	}
	for _, r := range runs {
		b.WriteString(runXML(r))
	}
	b.WriteString(`</w:p>`)
	return b.String()
}

func (w *docxWriter) para(style, ppr string, runs ...run) {
	w.body.WriteString(para(style, ppr, runs...))
}

func (w *docxWriter) titlePage() {
	c := w.c
	w.para("Kicker", `<w:spacing w:before="2200"/>`, run{text: strings.ToUpper(fmt.Sprintf("Business case · %s · version %d", c.Template.Title(), c.Version))})
	w.para("Title", "", run{text: c.Name})
	if c.InitiativeName != "" {
		w.para("Subtitle", "", run{text: "Initiative: " + c.InitiativeName})
	}
	w.para("", `<w:spacing w:before="120" w:after="240"/>`,
		run{text: " " + strings.ToUpper(Label(c.Status)) + " ", bold: true, color: "FFFFFF", shade: statusColor(c.Status)})
	author := w.p.opts.Author
	if author == "" {
		author = "–"
	}
	w.table(table{Cols: []column{{"", false, 3}, {"", false, 8}}, NoHeader: true, Highlight: -1, Rows: [][]string{
		{"Version", strconv.Itoa(c.Version)},
		{"Status", Label(c.Status)},
		{"Template", c.Template.Title()},
		{"Base currency", c.BaseCurrency},
		{"Data as of", FormatTime(c.DataAsOf)},
		{"Prepared by", author},
		{"Generated", FormatTime(w.p.opts.GeneratedAt)},
	}})
	var cell strings.Builder
	cell.WriteString(para("BoxTitle", "", run{text: "Approval"}))
	if a := c.Approval; a != nil {
		cell.WriteString(para("", "", run{text: fmt.Sprintf("Approved at %s level by %s on %s.", a.Level, a.By, FormatTime(a.At))}))
		if a.Notes != "" {
			cell.WriteString(para("", "", run{text: "Notes: " + a.Notes}))
		}
	} else {
		cell.WriteString(para("", "", run{text: "Not approved: this version is " + strings.ToLower(Label(c.Status)) + "."}))
	}
	w.body.WriteString(`<w:tbl><w:tblPr><w:tblW w:w="5000" w:type="pct"/><w:tblBorders><w:left w:val="single" w:sz="24" w:color="` +
		statusColor(c.Status) + `"/></w:tblBorders><w:tblCellMar><w:top w:w="100" w:type="dxa"/><w:left w:w="160" w:type="dxa"/>` +
		`<w:bottom w:w="100" w:type="dxa"/><w:right w:w="160" w:type="dxa"/></w:tblCellMar></w:tblPr><w:tblGrid><w:gridCol w:w="` +
		strconv.Itoa(w.textW) + `"/></w:tblGrid><w:tr><w:tc><w:tcPr><w:shd w:val="clear" w:color="auto" w:fill="` + colorShade + `"/></w:tcPr>` +
		cell.String() + `</w:tc></w:tr></w:tbl>`)
	w.para("", "", run{})
	w.body.WriteString(`<w:p><w:r><w:br w:type="page"/></w:r></w:p>`)
}

func (w *docxWriter) heading(h heading) {
	ppr := ""
	if h.Break {
		ppr = `<w:pageBreakBefore/>`
	}
	w.parts++
	p := para("Heading1", ppr, run{text: h.Text})
	mark := fmt.Sprintf(`<w:bookmarkStart w:id="%d" w:name="%s"/>`, w.parts, tocBookmark(w.parts))
	p = strings.Replace(p, `</w:pPr>`, `</w:pPr>`+mark, 1) // the whole title is the target
	p = strings.Replace(p, `</w:p>`, fmt.Sprintf(`<w:bookmarkEnd w:id="%d"/></w:p>`, w.parts), 1)
	w.body.WriteString(p)
	if h.Lead != "" {
		w.para("Lead", "", run{text: h.Lead})
	}
}

func tocBookmark(n int) string { return fmt.Sprintf("_Part%d", n) }

// contents lists the parts, each with a PAGEREF field to its heading's
// bookmark: Word and LibreOffice compute the page when they lay it out.
func (w *docxWriter) contents(k contents) {
	w.exhibitTitle("Contents")
	for i, e := range k.Entries {
		field := `<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> PAGEREF ` + tocBookmark(i+1) +
			` \h </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>` + runXML(run{text: "–", color: colorGrey}) +
			`<w:r><w:fldChar w:fldCharType="end"/></w:r>`
		p := para("", `<w:tabs><w:tab w:val="right" w:leader="dot" w:pos="`+strconv.Itoa(w.textW)+`"/></w:tabs><w:spacing w:after="40"/>`,
			run{text: e})
		w.body.WriteString(strings.Replace(p, `</w:p>`, `<w:r><w:tab/></w:r>`+field+`</w:p>`, 1))
	}
}

func (w *docxWriter) prose(body string) {
	for _, p := range paragraphs(body) {
		if p.Bullet {
			w.para("ListBullet", "", run{text: p.Text})
		} else {
			w.para("", "", run{text: p.Text})
		}
	}
}

func (w *docxWriter) exhibitTitle(s string) { w.para("Heading2", "", run{text: s}) }

func (w *docxWriter) note(s string) {
	if s != "" {
		w.para("Note", "", run{text: s})
	}
}

func (w *docxWriter) keyFigures(k keyFigures) {
	w.exhibitTitle(k.Title)
	valueSize, labelSize := 30, 16
	perRow := 3 // three a row, so "Plan CHF 2.46m" stays on one line
	if k.Big {  // board-sized
		valueSize, labelSize = 44, 20
	}
	colW := w.textW / perRow
	var b strings.Builder
	b.WriteString(`<w:tbl><w:tblPr><w:tblW w:w="5000" w:type="pct"/><w:tblLayout w:type="fixed"/>` +
		`<w:tblCellMar><w:top w:w="100" w:type="dxa"/><w:left w:w="140" w:type="dxa"/><w:bottom w:w="120" w:type="dxa"/><w:right w:w="140" w:type="dxa"/></w:tblCellMar>` +
		`</w:tblPr><w:tblGrid>`)
	for range perRow {
		fmt.Fprintf(&b, `<w:gridCol w:w="%d"/>`, colW)
	}
	b.WriteString(`</w:tblGrid>`)
	for i, it := range k.Items {
		if i%perRow == 0 {
			b.WriteString(`<w:tr><w:trPr><w:cantSplit/></w:trPr>`)
		}
		fmt.Fprintf(&b, `<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/><w:tcBorders><w:top w:val="single" w:sz="18" w:color="%s"/>`+
			`<w:left w:val="single" w:sz="24" w:color="FFFFFF"/><w:bottom w:val="single" w:sz="24" w:color="FFFFFF"/><w:right w:val="single" w:sz="24" w:color="FFFFFF"/></w:tcBorders>`+
			`<w:shd w:val="clear" w:color="auto" w:fill="%s"/></w:tcPr>`, colW, colorCash, colorShade)
		b.WriteString(para("Compact", "", run{text: it.Label, size: labelSize, color: colorGrey}))
		b.WriteString(para("Compact", "", run{text: it.Value, bold: true, size: valueSize, color: colorNavy}))
		b.WriteString(para("Compact", "", run{text: it.Forecast, bold: true, size: labelSize + 2, color: colorNavy}))
		b.WriteString(para("Compact", "", run{text: it.Note, size: labelSize - 2, color: colorGrey}))
		b.WriteString(`</w:tc>`)
		if i%perRow == perRow-1 || i == len(k.Items)-1 {
			b.WriteString(`</w:tr>`)
		}
	}
	b.WriteString(`</w:tbl>`)
	w.body.WriteString(b.String())
	w.para("", "", run{})
}

// table writes a real Word table: fixed column widths, a header row that
// repeats on every page, rows that do not split, numbers right-aligned.
func (w *docxWriter) table(t table) {
	if t.Title != "" {
		w.exhibitTitle(t.Title)
	}
	// Table text is 8.5 pt (TableText) in cells with 80 twips each side.
	fit, _ := fitColumns(t, float64(w.textW), func(s string, bold bool) float64 {
		return emWidth(s, bold)*8.5*20*1.08 + 2*80 + 40
	})
	widths := make([]int, len(fit))
	for i, x := range fit {
		widths[i] = int(x)
	}
	var b strings.Builder
	b.WriteString(`<w:tbl><w:tblPr><w:tblStyle w:val="VCTable"/><w:tblW w:w="5000" w:type="pct"/><w:tblLayout w:type="fixed"/>` +
		`<w:tblLook w:val="0420" w:firstRow="1" w:lastRow="0" w:firstColumn="0" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/></w:tblPr><w:tblGrid>`)
	for _, cw := range widths {
		fmt.Fprintf(&b, `<w:gridCol w:w="%d"/>`, cw)
	}
	b.WriteString(`</w:tblGrid>`)
	// Keep-with-next chains rows so a page break leaves at least two rows
	// on each side: a short table stays whole, a long one links its header
	// to the first two rows and its last three rows (and the note or
	// result that follows, t.keep) together; the rows between flow.
	n := len(t.Rows) + btoi(!t.NoHeader) + btoi(t.Total != nil)
	rowIndex := 0
	keepNext := func() bool {
		i := rowIndex
		rowIndex++
		if i == n-1 {
			return t.keep
		}
		return n <= docxWholeTableRows || i <= btoi(!t.NoHeader) || i >= n-3
	}
	row := func(cells []string, header, bold bool, fill, color, topBorder string) {
		keep := keepNext()
		b.WriteString(`<w:tr><w:trPr><w:cantSplit/>`)
		if header {
			b.WriteString(`<w:tblHeader/>`)
		}
		b.WriteString(`</w:trPr>`)
		for i := range t.Cols {
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			fmt.Fprintf(&b, `<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/>`, widths[i])
			if topBorder != "" {
				b.WriteString(`<w:tcBorders><w:top w:val="single" w:sz="8" w:color="` + topBorder + `"/></w:tcBorders>`)
			}
			if fill != "" {
				b.WriteString(`<w:shd w:val="clear" w:color="auto" w:fill="` + fill + `"/>`)
			}
			b.WriteString(`</w:tcPr>`)
			ppr := ""
			if keep {
				ppr = `<w:keepNext/>`
			}
			if t.Cols[i].Right {
				ppr += `<w:jc w:val="right"/>`
			}
			c := color
			if t.NoHeader && i == 0 {
				c = colorGrey
			}
			b.WriteString(para("TableText", ppr, run{text: cell, bold: bold, color: c}))
			b.WriteString(`</w:tc>`)
		}
		b.WriteString(`</w:tr>`)
	}
	if !t.NoHeader {
		row(headers(t.Cols), true, true, colorNavy, "FFFFFF", "")
	}
	for i, r := range t.Rows {
		fill := ""
		if i%2 == 1 && !t.NoHeader {
			fill = "F6F8FB"
		}
		bold := false
		if i == t.Highlight {
			fill, bold = "FCE9D9", true
		}
		row(r, false, bold, fill, "", "")
	}
	if t.Total != nil {
		row(t.Total, false, true, "", colorNavy, colorNavy)
	}
	b.WriteString(`</w:tbl>`)
	w.body.WriteString(b.String())
	if t.Note != "" {
		w.note(t.Note)
	} else {
		w.para("Compact", "", run{})
	}
}

// docxWholeTableRows is the longest table (rows with header and total)
// kept on one page: a key-figure or sensitivity table read across a page
// break loses its point.
const docxWholeTableRows = 12

// chart places a chart part inline, heightMM tall across the text width.
// docxGanttRows is how many projects one roadmap chart shows: 22 + 9 mm a
// row stays within the text height of an A4 page.
const docxGanttRows = 24

func (w *docxWriter) chart(part chartPart, heightMM float64, descr string) {
	w.charts = append(w.charts, part)
	w.shapes++
	id := len(w.charts)
	cx := int(float64(w.textW) / twipsPerMM * emuPerMM)
	cy := int(heightMM * emuPerMM)
	fmt.Fprintf(&w.body, `<w:p><w:pPr><w:pStyle w:val="Compact"/></w:pPr><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0">`+
		`<wp:extent cx="%d" cy="%d"/><wp:effectExtent l="0" t="0" r="0" b="0"/><wp:docPr id="%d" name="Chart %d" descr="%s"/>`+
		`<wp:cNvGraphicFramePr/><a:graphic><a:graphicData uri="%s"><c:chart r:id="rIdChart%d"/></a:graphicData></a:graphic>`+
		`</wp:inline></w:drawing></w:r></w:p>`, cx, cy, w.shapes, id, esc(descr), nsC, id)
}

var sentimentGlyph = "●"

func (w *docxWriter) grid(g grid) {
	w.exhibitTitle(g.Title)
	if g.Total == 0 {
		w.para("", "", run{text: "No stakeholders are mapped yet.", color: colorGrey})
		return
	}
	axisW := 1500
	qW := (w.textW - axisW) / 2
	fills := map[Quadrant]string{ManageClosely: "DCE8F2", KeepSatisfied: "EAF1F7", KeepInformed: "EAF1F7", Monitor: "F4F6F9"}
	var b strings.Builder
	b.WriteString(`<w:tbl><w:tblPr><w:tblW w:w="5000" w:type="pct"/><w:tblLayout w:type="fixed"/>` +
		`<w:tblBorders><w:insideH w:val="single" w:sz="24" w:color="FFFFFF"/><w:insideV w:val="single" w:sz="24" w:color="FFFFFF"/></w:tblBorders>` +
		`<w:tblCellMar><w:top w:w="100" w:type="dxa"/><w:left w:w="140" w:type="dxa"/><w:bottom w:w="100" w:type="dxa"/><w:right w:w="140" w:type="dxa"/></w:tblCellMar>` +
		`</w:tblPr>`)
	fmt.Fprintf(&b, `<w:tblGrid><w:gridCol w:w="%d"/><w:gridCol w:w="%d"/><w:gridCol w:w="%d"/></w:tblGrid>`, axisW, qW, qW)
	axisCell := func(text string, width int, center bool) {
		// Every paragraph of a row keeps with the next, so the grid moves to a new page whole
		// rather than splitting between its two rows of quadrants.
		jc := `<w:keepNext/>`
		if center {
			jc += `<w:jc w:val="center"/>`
		}
		fmt.Fprintf(&b, `<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/><w:vAlign w:val="center"/></w:tcPr>`, width)
		b.WriteString(para("TableText", jc, run{text: text, bold: true, color: colorGrey}))
		b.WriteString(`</w:tc>`)
	}
	// Header row: the interest axis.
	b.WriteString(`<w:tr><w:trPr><w:cantSplit/></w:trPr>`)
	axisCell("", axisW, false)
	axisCell("Lower interest", qW, true)
	axisCell("High interest →", qW, true)
	b.WriteString(`</w:tr>`)
	for rowIdx, label := range []string{"High influence ↑", "Lower influence"} {
		b.WriteString(`<w:tr><w:trPr><w:cantSplit/></w:trPr>`)
		axisCell(label, axisW, false)
		for _, q := range g.Quadrants[rowIdx*2 : rowIdx*2+2] {
			fmt.Fprintf(&b, `<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/><w:shd w:val="clear" w:color="auto" w:fill="%s"/></w:tcPr>`, qW, fills[q.Quadrant])
			b.WriteString(para("TableText", `<w:keepNext/>`, run{text: fmt.Sprintf("%s (%d)", q.Title, len(q.People)+q.More), bold: true, color: colorNavy, size: 20}))
			b.WriteString(para("TableText", `<w:keepNext/><w:spacing w:after="60"/>`, run{text: q.Advice, color: colorGrey, size: 14}))
			for _, s := range q.People {
				glyph := run{text: sentimentGlyph + " ", color: sentimentColor(s.Sentiment)}
				if glyph.color == "" {
					glyph = run{text: "○ ", color: "9CA3AF"}
				}
				runs := []run{glyph, {text: s.Name}}
				if s.Role != "" {
					runs = append(runs, run{text: " · " + s.Role, color: colorGrey})
				}
				b.WriteString(para("TableText", `<w:keepNext/>`, runs...))
			}
			if q.More > 0 {
				b.WriteString(para("TableText", `<w:keepNext/>`, run{text: fmt.Sprintf("+ %d more", q.More), color: colorGrey}))
			}
			if len(q.People) == 0 {
				b.WriteString(para("TableText", `<w:keepNext/>`, run{text: "Nobody", color: colorGrey}))
			}
			b.WriteString(`</w:tc>`)
		}
		b.WriteString(`</w:tr>`)
	}
	b.WriteString(`</w:tbl>`)
	w.body.WriteString(b.String())
	w.para("Note", "",
		run{text: sentimentGlyph, color: sentimentColor("positive")}, run{text: " positive   "},
		run{text: sentimentGlyph, color: sentimentColor("neutral")}, run{text: " neutral   "},
		run{text: sentimentGlyph, color: sentimentColor("cautious")}, run{text: " cautious   "},
		run{text: sentimentGlyph, color: sentimentColor("negative")}, run{text: " negative   "},
		run{text: "○", color: "9CA3AF"}, run{text: " not engaged yet"})
}

func (w *docxWriter) calculations(k calculations) {
	w.exhibitTitle(k.Title)
	if len(k.Items) == 0 {
		w.para("", "", run{text: "No calculations were recorded in this snapshot.", color: colorGrey})
		return
	}
	for _, it := range k.Items {
		w.para("Heading3", "", run{text: it.Name})
		w.para("Formula", `<w:keepNext/>`, run{text: it.Formula})
		if len(it.Inputs) > 0 {
			rows := make([][]string, len(it.Inputs))
			for i, in := range it.Inputs {
				rows[i] = []string{in.Name, in.Value}
			}
			w.table(table{Cols: []column{{"", false, 5}, {"", false, 6}}, NoHeader: true, Highlight: -1, Rows: rows, keep: true})
		}
		w.para("", `<w:keepLines/>`, run{text: "Result: " + it.Result, bold: true, color: colorNavy})
	}
}

// header carries the running head, the watermark as text (searchable, read
// aloud) and a diagonal VML watermark behind the page, as Word makes one.
func (w *docxWriter) header() string {
	wm := w.p.opts.Watermark
	var b strings.Builder
	b.WriteString(xmlHeader + `<w:hdr ` + docxNS + `>`)
	b.WriteString(`<w:p><w:pPr><w:pStyle w:val="Header"/><w:tabs><w:tab w:val="right" w:pos="` + strconv.Itoa(w.textW) + `"/></w:tabs></w:pPr>`)
	b.WriteString(runXML(run{text: fmt.Sprintf("%s · business case v%d", w.c.Name, w.c.Version)}))
	if wm != "" {
		b.WriteString(`<w:r><w:tab/></w:r>` + runXML(run{text: wm, bold: true, color: "B91C1C"}))
		// Diagonal watermark; its height follows the text length so the
		// letters keep their shape.
		widthPt := float64(w.textW) / 20 * 0.95
		heightPt := min(widthPt/(0.62*float64(len([]rune(wm)))), 110)
		fmt.Fprintf(&b, `<w:r><w:pict><v:shapetype id="_x0000_t136" coordsize="21600,21600" o:spt="136" adj="10800" path="m@7,l@8,m@5,21600l@6,21600e">`+
			`<v:formulas><v:f eqn="sum #0 0 10800"/><v:f eqn="prod #0 2 1"/><v:f eqn="sum 21600 0 @1"/><v:f eqn="sum 0 0 @2"/>`+
			`<v:f eqn="sum 21600 0 @3"/><v:f eqn="if @0 @3 0"/><v:f eqn="if @0 21600 @1"/><v:f eqn="if @0 0 @2"/><v:f eqn="if @0 @4 21600"/>`+
			`<v:f eqn="mid @5 @6"/><v:f eqn="mid @8 @5"/><v:f eqn="mid @7 @8"/><v:f eqn="mid @6 @7"/><v:f eqn="sum @6 0 @5"/></v:formulas>`+
			`<v:path textpathok="t" o:connecttype="custom" o:connectlocs="@9,0;@10,10800;@11,21600;@12,10800" o:connectangles="270,180,90,0"/>`+
			`<v:textpath on="t" fitshape="t"/><o:lock v:ext="edit" text="t" shapetype="t"/></v:shapetype>`+
			`<v:shape id="VCWatermark" o:spid="_x0000_s2049" type="#_x0000_t136" style="position:absolute;margin-left:0;margin-top:0;`+
			`width:%.0fpt;height:%.0fpt;rotation:315;z-index:-251657216;mso-position-horizontal:center;mso-position-horizontal-relative:margin;`+
			`mso-position-vertical:center;mso-position-vertical-relative:margin" o:allowincell="f" fillcolor="#B91C1C" stroked="f">`+
			`<v:fill opacity="0.1"/><v:textpath style="font-family:&quot;%s&quot;;font-size:1pt;font-weight:bold" string="%s"/>`+
			`<w10:wrap anchorx="margin" anchory="margin"/></v:shape></w:pict></w:r>`, widthPt, heightPt, ooxmlFont, esc(wm))
	}
	b.WriteString(`</w:p></w:hdr>`)
	return b.String()
}

func (w *docxWriter) footer() string {
	left := w.c.Template.Title() + " · data as of " + FormatDate(w.c.DataAsOf)
	if w.c.InitiativeName != "" {
		left = w.c.InitiativeName + " · " + left
	}
	return xmlHeader + `<w:ftr ` + docxNS + `><w:p><w:pPr><w:pStyle w:val="Footer"/><w:tabs><w:tab w:val="right" w:pos="` +
		strconv.Itoa(w.textW) + `"/></w:tabs></w:pPr>` + runXML(run{text: left}) + `<w:r><w:tab/></w:r>` + runXML(run{text: "Page "}) +
		`<w:fldSimple w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple>` + runXML(run{text: " of "}) +
		`<w:fldSimple w:instr=" NUMPAGES "><w:r><w:t>1</w:t></w:r></w:fldSimple></w:p></w:ftr>`
}

const docxSettings = xmlHeader + `<w:settings xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
	`<w:updateFields w:val="false"/><w:defaultTabStop w:val="720"/><w:characterSpacingControl w:val="doNotCompress"/>` +
	`<w:compat><w:compatSetting w:name="compatibilityMode" w:uri="http://schemas.microsoft.com/office/word" w:val="15"/></w:compat></w:settings>`

const docxNumbering = xmlHeader + `<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
	`<w:abstractNum w:abstractNumId="0"><w:multiLevelType w:val="singleLevel"/><w:lvl w:ilvl="0"><w:start w:val="1"/>` +
	`<w:numFmt w:val="bullet"/><w:lvlText w:val="•"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="360" w:hanging="240"/></w:pPr>` +
	`<w:rPr><w:color w:val="` + colorCash + `"/></w:rPr></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>`

// docxStyles defines the styles the document uses; headings carry outline
// levels so they are real headings to Word, LibreOffice and screen readers.
const docxStyles = xmlHeader + `<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">` +
	`<w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="` + ooxmlFont + `" w:hAnsi="` + ooxmlFont + `" w:eastAsia="` + ooxmlFont + `" w:cs="` + ooxmlFont + `"/>` +
	`<w:color w:val="1F2937"/><w:sz w:val="20"/><w:szCs w:val="20"/><w:lang w:val="en-GB"/></w:rPr></w:rPrDefault>` +
	`<w:pPrDefault><w:pPr><w:spacing w:after="120" w:line="276" w:lineRule="auto"/></w:pPr></w:pPrDefault></w:docDefaults>` +
	`<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/>` +
	`<w:pPr><w:spacing w:after="120"/></w:pPr><w:rPr><w:b/><w:color w:val="` + colorNavy + `"/><w:sz w:val="56"/><w:szCs w:val="56"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Subtitle"><w:name w:val="Subtitle"/><w:basedOn w:val="Normal"/><w:qFormat/>` +
	`<w:pPr><w:pBdr><w:bottom w:val="single" w:sz="12" w:space="8" w:color="` + colorCash + `"/></w:pBdr><w:spacing w:after="240"/></w:pPr>` +
	`<w:rPr><w:color w:val="374151"/><w:sz w:val="28"/><w:szCs w:val="28"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Kicker"><w:name w:val="Kicker"/><w:basedOn w:val="Normal"/>` +
	`<w:rPr><w:b/><w:color w:val="` + colorGrey + `"/><w:spacing w:val="10"/><w:sz w:val="18"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/>` +
	`<w:pPr><w:keepNext/><w:keepLines/><w:pBdr><w:bottom w:val="single" w:sz="8" w:space="4" w:color="` + colorCash + `"/></w:pBdr>` +
	`<w:spacing w:before="360" w:after="160"/><w:outlineLvl w:val="0"/></w:pPr>` +
	`<w:rPr><w:b/><w:color w:val="` + colorNavy + `"/><w:sz w:val="32"/><w:szCs w:val="32"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading2"><w:name w:val="heading 2"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/>` +
	`<w:pPr><w:keepNext/><w:keepLines/><w:spacing w:before="240" w:after="100"/><w:outlineLvl w:val="1"/></w:pPr>` +
	`<w:rPr><w:b/><w:color w:val="` + colorNavy + `"/><w:sz w:val="23"/><w:szCs w:val="23"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Heading3"><w:name w:val="heading 3"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:qFormat/>` +
	`<w:pPr><w:keepNext/><w:keepLines/><w:spacing w:before="180" w:after="60"/><w:outlineLvl w:val="2"/></w:pPr>` +
	`<w:rPr><w:b/><w:color w:val="111827"/><w:sz w:val="20"/><w:szCs w:val="20"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Lead"><w:name w:val="Lead"/><w:basedOn w:val="Normal"/><w:rPr><w:color w:val="` + colorGrey + `"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="BoxTitle"><w:name w:val="Box title"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="60"/></w:pPr>` +
	`<w:rPr><w:b/><w:color w:val="` + colorNavy + `"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Compact"><w:name w:val="Compact"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:after="0" w:line="240" w:lineRule="auto"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="TableText"><w:name w:val="Table text"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:spacing w:before="30" w:after="30" w:line="240" w:lineRule="auto"/></w:pPr><w:rPr><w:sz w:val="17"/><w:szCs w:val="17"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Note"><w:name w:val="Note"/><w:basedOn w:val="Normal"/><w:pPr><w:spacing w:before="60" w:after="200"/></w:pPr>` +
	`<w:rPr><w:color w:val="` + colorGrey + `"/><w:sz w:val="15"/><w:szCs w:val="15"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Formula"><w:name w:val="Formula"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:shd w:val="clear" w:color="auto" w:fill="` + colorShade + `"/><w:spacing w:after="80"/><w:ind w:left="80" w:right="80"/></w:pPr>` +
	`<w:rPr><w:color w:val="` + colorNavy + `"/><w:sz w:val="18"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr><w:spacing w:after="60"/></w:pPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Header"><w:name w:val="header"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:pBdr><w:bottom w:val="single" w:sz="4" w:space="4" w:color="` + colorRule + `"/></w:pBdr><w:spacing w:after="0"/></w:pPr>` +
	`<w:rPr><w:color w:val="` + colorGrey + `"/><w:sz w:val="15"/></w:rPr></w:style>` +
	`<w:style w:type="paragraph" w:styleId="Footer"><w:name w:val="footer"/><w:basedOn w:val="Normal"/>` +
	`<w:pPr><w:pBdr><w:top w:val="single" w:sz="4" w:space="4" w:color="` + colorRule + `"/></w:pBdr><w:spacing w:after="0"/></w:pPr>` +
	`<w:rPr><w:color w:val="` + colorGrey + `"/><w:sz w:val="15"/></w:rPr></w:style>` +
	`<w:style w:type="table" w:default="1" w:styleId="TableNormal"><w:name w:val="Normal Table"/><w:tblPr><w:tblInd w:w="0" w:type="dxa"/>` +
	`<w:tblCellMar><w:top w:w="0" w:type="dxa"/><w:left w:w="108" w:type="dxa"/><w:bottom w:w="0" w:type="dxa"/><w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>` +
	`<w:style w:type="table" w:styleId="VCTable"><w:name w:val="Valuecase table"/><w:basedOn w:val="TableNormal"/><w:tblPr>` +
	`<w:tblBorders><w:bottom w:val="single" w:sz="6" w:color="` + colorNavy + `"/><w:insideH w:val="single" w:sz="4" w:color="E5E7EB"/></w:tblBorders>` +
	`<w:tblCellMar><w:top w:w="20" w:type="dxa"/><w:left w:w="80" w:type="dxa"/><w:bottom w:w="20" w:type="dxa"/><w:right w:w="80" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>` +
	`</w:styles>`
