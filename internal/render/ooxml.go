package render

import (
	"archive/zip"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Shared by the DOCX and PPTX writers: the zip package, document
// properties, XML text escaping and DrawingML charts (the same chart part
// works in both; LibreOffice and Office draw it from the cached values, so
// no embedded workbook is written).

const (
	nsR       = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
	nsA       = "http://schemas.openxmlformats.org/drawingml/2006/main"
	nsC       = "http://schemas.openxmlformats.org/drawingml/2006/chart"
	nsPkgRels = "http://schemas.openxmlformats.org/package/2006/relationships"
	relChart  = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart"
	ctChart   = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
	ctRels    = "application/vnd.openxmlformats-package.relationships+xml"
	ctCore    = "application/vnd.openxmlformats-package.core-properties+xml"
	ctApp     = "application/vnd.openxmlformats-officedocument.extended-properties+xml"
	xmlHeader = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n"
	// ooxmlFont is the typeface named in DOCX and PPTX: present with Office
	// everywhere; LibreOffice substitutes a metric-compatible or sans font.
	ooxmlFont = "Arial"
)

// pkg is an OOXML package being written: parts in order, fixed timestamps
// so the same input gives the same bytes.
type pkg struct {
	zw  *zip.Writer
	mod time.Time
	err error
}

func newPkg(w io.Writer, mod time.Time) *pkg { return &pkg{zw: zip.NewWriter(w), mod: mod} }

func (p *pkg) add(name string, body string) {
	if p.err != nil {
		return
	}
	fw, err := p.zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: p.mod})
	if err != nil {
		p.err = err
		return
	}
	_, p.err = io.WriteString(fw, body)
}

func (p *pkg) close() error {
	if p.err != nil {
		return p.err
	}
	return p.zw.Close()
}

// esc escapes s for XML text and attributes; characters XML cannot carry
// become U+FFFD (encoding/xml's rule).
func esc(s string) string {
	if !strings.ContainsAny(s, "<>&'\"\r\n\t") && isPlainXML(s) {
		return s
	}
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func isPlainXML(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0xFFFE || r == 0xFFFF || (r >= 0xD800 && r < 0xE000) {
			return false
		}
	}
	return true
}

// coreXML is docProps/core.xml: the title and author a viewer shows.
func coreXML(c *Case, o Options) string {
	t := o.GeneratedAt.UTC().Format(time.RFC3339)
	return xmlHeader + `<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" ` +
		`xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" ` +
		`xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">` +
		`<dc:title>` + esc(c.Name) + `</dc:title>` +
		`<dc:subject>` + esc(subjectOf(c)) + `</dc:subject>` +
		`<dc:creator>` + esc(o.Author) + `</dc:creator>` +
		`<cp:lastModifiedBy>` + esc(o.Author) + `</cp:lastModifiedBy>` +
		`<cp:keywords>business case</cp:keywords>` +
		`<cp:revision>` + strconv.Itoa(max(c.Version, 1)) + `</cp:revision>` +
		`<dcterms:created xsi:type="dcterms:W3CDTF">` + t + `</dcterms:created>` +
		`<dcterms:modified xsi:type="dcterms:W3CDTF">` + t + `</dcterms:modified>` +
		`</cp:coreProperties>`
}

func appXML(application string) string {
	return xmlHeader + `<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" ` +
		`xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">` +
		`<Application>` + application + `</Application><Company>Valuecase</Company></Properties>`
}

// rels writes a relationships part; each entry is {id, type, target}.
func rels(entries ...[3]string) string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<Relationships xmlns="` + nsPkgRels + `">`)
	for _, e := range entries {
		fmt.Fprintf(&b, `<Relationship Id="%s" Type="%s" Target="%s"/>`, e[0], e[1], e[2])
	}
	b.WriteString(`</Relationships>`)
	return b.String()
}

// --- charts -------------------------------------------------------------------

// chartStyle is what differs between a chart on an A4 page and on a slide.
type chartStyle struct {
	fontSize int // hundredths of a point
}

func txPr(size int, color string, bold bool) string {
	b := "0"
	if bold {
		b = "1"
	}
	return `<c:txPr><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz="` + strconv.Itoa(size) + `" b="` + b + `">` +
		`<a:solidFill><a:srgbClr val="` + color + `"/></a:solidFill><a:latin typeface="` + ooxmlFont + `"/></a:defRPr></a:pPr>` +
		`<a:endParaRPr lang="en-US"/></a:p></c:txPr>`
}

func solidLine(color string, emu int) string {
	return `<a:ln w="` + strconv.Itoa(emu) + `"><a:solidFill><a:srgbClr val="` + color + `"/></a:solidFill></a:ln>`
}

func strCache(ref string, values []string) string {
	var b strings.Builder
	b.WriteString(`<c:strRef><c:f>` + ref + `</c:f><c:strCache><c:ptCount val="` + strconv.Itoa(len(values)) + `"/>`)
	for i, v := range values {
		fmt.Fprintf(&b, `<c:pt idx="%d"><c:v>%s</c:v></c:pt>`, i, esc(v))
	}
	b.WriteString(`</c:strCache></c:strRef>`)
	return b.String()
}

// numCache lists the values; nil ones are left out, which charts draw as gaps.
func numCache(ref, format string, values []*float64) string {
	var b strings.Builder
	b.WriteString(`<c:numRef><c:f>` + ref + `</c:f><c:numCache><c:formatCode>` + esc(format) + `</c:formatCode><c:ptCount val="` +
		strconv.Itoa(len(values)) + `"/>`)
	for i, v := range values {
		if v != nil {
			fmt.Fprintf(&b, `<c:pt idx="%d"><c:v>%s</c:v></c:pt>`, i, strconv.FormatFloat(*v, 'f', -1, 64))
		}
	}
	b.WriteString(`</c:numCache></c:numRef>`)
	return b.String()
}

// col is a spreadsheet column letter for the formula references (A, B, …).
func col(i int) string { return string(rune('A' + i)) }

func chartSpace(plotArea string, legend bool, st chartStyle) string {
	var b strings.Builder
	b.WriteString(xmlHeader + `<c:chartSpace xmlns:c="` + nsC + `" xmlns:a="` + nsA + `" xmlns:r="` + nsR + `">`)
	b.WriteString(`<c:date1904 val="0"/><c:lang val="en-US"/><c:roundedCorners val="0"/>`)
	b.WriteString(`<c:chart><c:autoTitleDeleted val="1"/><c:plotArea><c:layout/>`)
	b.WriteString(plotArea)
	b.WriteString(`</c:plotArea>`)
	if legend {
		b.WriteString(`<c:legend><c:legendPos val="b"/><c:overlay val="0"/>` + txPr(st.fontSize, "374151", false) + `</c:legend>`)
	}
	b.WriteString(`<c:plotVisOnly val="1"/><c:dispBlanksAs val="gap"/></c:chart>`)
	b.WriteString(`<c:spPr><a:noFill/><a:ln><a:noFill/></a:ln></c:spPr>`)
	b.WriteString(txPr(st.fontSize, "374151", false))
	// The embedded workbook (chartPart.Sheet): "Edit Data" opens it.
	b.WriteString(`<c:externalData r:id="rId1"><c:autoUpdate val="0"/></c:externalData>`)
	b.WriteString(`</c:chartSpace>`)
	return b.String()
}

func catAx(id, cross int, pos string, skip int, reverse bool, st chartStyle) string {
	orient := "minMax"
	if reverse {
		orient = "maxMin"
	}
	labels := txPr(st.fontSize, "6B7280", false)
	if skip > 1 {
		// Many categories: Office shows every skip-th label; LibreOffice
		// ignores the skip and shows all, so both get them at 45°.
		labels = strings.Replace(labels, `<a:bodyPr/>`, `<a:bodyPr rot="-2700000" vert="horz"/>`, 1)
	}
	s := fmt.Sprintf(`<c:catAx><c:axId val="%d"/><c:scaling><c:orientation val="%s"/></c:scaling><c:delete val="0"/>`+
		`<c:axPos val="%s"/><c:numFmt formatCode="General" sourceLinked="0"/><c:majorTickMark val="none"/><c:minorTickMark val="none"/>`+
		`<c:tickLblPos val="low"/><c:spPr>%s</c:spPr>%s<c:crossAx val="%d"/><c:crosses val="autoZero"/><c:auto val="1"/>`+
		`<c:lblAlgn val="ctr"/><c:lblOffset val="100"/>`, id, orient, pos, solidLine("9CA3AF", 9525), labels, cross)
	if skip > 1 {
		s += fmt.Sprintf(`<c:tickLblSkip val="%d"/><c:tickMarkSkip val="%d"/>`, skip, skip)
	}
	return s + `<c:noMultiLvlLbl val="0"/></c:catAx>`
}

// monthSerials are the categories as spreadsheet dates when every one is
// a month label (Jun 2028), else nil.
func monthSerials(cats []string) []*float64 {
	out := make([]*float64, len(cats))
	for i, c := range cats {
		t, err := time.Parse("Jan 2006", c)
		if err != nil {
			return nil
		}
		out[i] = new(excelDate(t))
	}
	return out
}

// dateAx is a category axis of months labelled every step months, level:
// Office and LibreOffice both honour a date axis' major unit, where they
// differ on a text axis' label skip.
func dateAx(id, cross, step int, st chartStyle) string {
	return fmt.Sprintf(`<c:dateAx><c:axId val="%d"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:delete val="0"/>`+
		`<c:axPos val="b"/><c:numFmt formatCode="mmm yyyy" sourceLinked="0"/><c:majorTickMark val="out"/><c:minorTickMark val="none"/>`+
		`<c:tickLblPos val="low"/><c:spPr>%s</c:spPr>%s<c:crossAx val="%d"/><c:crosses val="autoZero"/><c:auto val="0"/>`+
		`<c:lblOffset val="100"/><c:baseTimeUnit val="months"/><c:majorUnit val="%d"/><c:majorTimeUnit val="months"/></c:dateAx>`,
		id, solidLine("9CA3AF", 9525), txPr(st.fontSize, "6B7280", false), cross, step)
}

func valAx(id, cross int, pos, format string, scaling, majorUnit string, st chartStyle) string {
	if scaling == "" {
		scaling = `<c:orientation val="minMax"/>`
	}
	return fmt.Sprintf(`<c:valAx><c:axId val="%d"/><c:scaling>%s</c:scaling><c:delete val="0"/><c:axPos val="%s"/>`+
		`<c:majorGridlines><c:spPr>%s</c:spPr></c:majorGridlines><c:numFmt formatCode="%s" sourceLinked="0"/>`+
		`<c:majorTickMark val="none"/><c:minorTickMark val="none"/><c:tickLblPos val="nextTo"/><c:spPr><a:ln><a:noFill/></a:ln></c:spPr>%s`+
		`<c:crossAx val="%d"/><c:crosses val="autoZero"/><c:crossBetween val="between"/>%s</c:valAx>`,
		id, scaling, pos, solidLine("E5E7EB", 6350), esc(format), txPr(st.fontSize, "6B7280", false), cross, majorUnit)
}

// axisScale is the value axis of a chart: the PDF's scale (niceScale over
// the values, five steps) and a number format that labels each step the way
// shortNumber does in the PDF: 400k, 1.5m, −2m (U+2212, the house minus).
func axisScale(ch chart) (scaling, majorUnit, format string) {
	lo, hi := 0.0, 0.0
	for _, s := range ch.Series {
		for _, v := range s.Values {
			if v != nil {
				lo, hi = math.Min(lo, *v), math.Max(hi, *v)
			}
		}
	}
	min, max, step := niceScale(lo, hi, 5)
	scaling = fmt.Sprintf(`<c:orientation val="minMax"/><c:max val="%s"/><c:min val="%s"/>`,
		strconv.FormatFloat(max, 'f', -1, 64), strconv.FormatFloat(min, 'f', -1, 64))
	majorUnit = `<c:majorUnit val="` + strconv.FormatFloat(step, 'f', -1, 64) + `"/>`
	unit, scale := "", ""
	div := 1.0
	switch a := math.Max(math.Abs(min), math.Abs(max)); {
	case a >= 1e9:
		unit, scale, div = "bn", ",,,", 1e9
	case a >= 1e6:
		unit, scale, div = "m", ",,", 1e6
	case a >= 1e4:
		unit, scale, div = "k", ",", 1e3
	}
	digits := ""
	for d := step / div; math.Abs(d-math.Round(d)) > 1e-9 && len(digits) < 3; d *= 10 {
		digits += "0"
	}
	num := "#,##0"
	if digits != "" {
		num += "." + digits
	}
	num += scale
	if unit != "" {
		num += `"` + unit + `"`
	}
	return scaling, majorUnit, num + `;"` + Minus + `"` + num + `;0`
}

// chartXML is a chart block as a DrawingML chart part: clustered columns or
// a line; the payback marker is a second, marker-only series with a label.
func chartXML(ch chart, st chartStyle) chartPart {
	n := len(ch.Categories)
	catRef := fmt.Sprintf("Sheet1!$A$2:$A$%d", n+1)
	skip := 1
	if n > 12 {
		skip = int(math.Ceil(float64(n) / 12))
	}
	// A long run of months is a date axis labelled every quarter or more,
	// so its labels stay level and legible.
	months := monthSerials(ch.Categories)
	cats := strCache(catRef, ch.Categories)
	if n > 12 && months != nil {
		skip = max(3, int(math.Ceil(float64(n)/8/3))*3)
		cats = numCache(catRef, "mmm yyyy", months)
	} else {
		months = nil
	}
	var b strings.Builder
	switch ch.Kind {
	case barChart:
		b.WriteString(`<c:barChart><c:barDir val="col"/><c:grouping val="clustered"/><c:varyColors val="0"/>`)
	case lineChart:
		b.WriteString(`<c:lineChart><c:grouping val="standard"/><c:varyColors val="0"/>`)
	}
	series := ch.Series
	for i, s := range series {
		fmt.Fprintf(&b, `<c:ser><c:idx val="%d"/><c:order val="%d"/><c:tx>%s</c:tx>`, i, i, strCache(fmt.Sprintf("Sheet1!$%s$1", col(i+1)), []string{s.Name}))
		switch ch.Kind {
		case barChart:
			b.WriteString(`<c:spPr><a:solidFill><a:srgbClr val="` + s.Color + `"/></a:solidFill></c:spPr><c:invertIfNegative val="0"/>`)
		case lineChart:
			b.WriteString(`<c:spPr>` + solidLine(s.Color, 28575) + `</c:spPr><c:marker><c:symbol val="none"/></c:marker>`)
		}
		b.WriteString(`<c:cat>` + cats + `</c:cat>`)
		b.WriteString(`<c:val>` + numCache(fmt.Sprintf("Sheet1!$%s$2:$%s$%d", col(i+1), col(i+1), n+1), "#,##0", s.Values) + `</c:val>`)
		if ch.Kind == lineChart {
			b.WriteString(`<c:smooth val="0"/>`)
		}
		b.WriteString(`</c:ser>`)
	}
	if m := ch.Marker; m != nil && ch.Kind == lineChart && len(series) > 0 {
		vals := make([]*float64, n)
		vals[m.Index] = series[0].Values[m.Index]
		i := len(series)
		fmt.Fprintf(&b, `<c:ser><c:idx val="%d"/><c:order val="%d"/><c:tx>%s</c:tx>`, i, i, strCache(fmt.Sprintf("Sheet1!$%s$1", col(i+1)), []string{m.Label}))
		b.WriteString(`<c:spPr><a:ln w="28575"><a:noFill/></a:ln></c:spPr>`)
		b.WriteString(`<c:marker><c:symbol val="diamond"/><c:size val="11"/><c:spPr><a:solidFill><a:srgbClr val="` + colorPayback +
			`"/></a:solidFill><a:ln><a:noFill/></a:ln></c:spPr></c:marker>`)
		// Beside the point, on the side the line is not: the cumulative
		// line rises through payback, so the label goes left of it, unless
		// the point is too near the left edge for the label to fit.
		side := "l"
		if m.Index < n/3 {
			side = "r"
		}
		// Two lines broken where a reader would ("Payback" / "May 2026"),
		// not where a narrow chart happens to wrap; the legend has it whole.
		line := func(text string) string {
			return `<a:p><a:pPr><a:defRPr sz="` + strconv.Itoa(st.fontSize) + `" b="1"/></a:pPr><a:r><a:rPr lang="en-GB" sz="` + strconv.Itoa(st.fontSize) +
				`" b="1"><a:solidFill><a:srgbClr val="` + colorPayback + `"/></a:solidFill></a:rPr><a:t>` + esc(text) + `</a:t></a:r></a:p>`
		}
		b.WriteString(`<c:dLbls><c:dLbl><c:idx val="` + strconv.Itoa(m.Index) + `"/><c:tx><c:rich><a:bodyPr wrap="none"/><a:lstStyle/>` +
			line("Payback") + line(ch.Categories[m.Index]) + `</c:rich></c:tx><c:spPr><a:noFill/><a:ln><a:noFill/></a:ln></c:spPr>` +
			`<c:dLblPos val="` + side + `"/><c:showLegendKey val="0"/><c:showVal val="0"/><c:showCatName val="0"/><c:showSerName val="1"/>` +
			`<c:showPercent val="0"/><c:showBubbleSize val="0"/></c:dLbl>` +
			`<c:spPr><a:noFill/><a:ln><a:noFill/></a:ln></c:spPr>` + txPr(st.fontSize, colorPayback, true) +
			`<c:dLblPos val="` + side + `"/><c:showLegendKey val="0"/><c:showVal val="0"/><c:showCatName val="0"/><c:showSerName val="1"/>` +
			`<c:showPercent val="0"/><c:showBubbleSize val="0"/></c:dLbls>`)
		b.WriteString(`<c:cat>` + cats + `</c:cat>`)
		b.WriteString(`<c:val>` + numCache(fmt.Sprintf("Sheet1!$%s$2:$%s$%d", col(i+1), col(i+1), n+1), "#,##0", vals) + `</c:val>`)
		b.WriteString(`<c:smooth val="0"/></c:ser>`)
	}
	switch ch.Kind {
	case barChart:
		b.WriteString(`<c:gapWidth val="60"/><c:overlap val="-5"/>`)
	case lineChart:
		b.WriteString(`<c:marker val="1"/>`)
	}
	b.WriteString(`<c:axId val="1001"/><c:axId val="1002"/>`)
	if ch.Kind == barChart {
		b.WriteString(`</c:barChart>`)
	} else {
		b.WriteString(`</c:lineChart>`)
	}
	if months != nil {
		b.WriteString(dateAx(1001, 1002, skip, st))
	} else {
		b.WriteString(catAx(1001, 1002, "b", skip, false, st))
	}
	scaling, majorUnit, format := axisScale(ch)
	b.WriteString(valAx(1002, 1001, "l", format, scaling, majorUnit, st))
	// The workbook holds what the chart's references name: categories in
	// A, one series a column, the payback marker's one point last.
	header := []any{""}
	for _, s := range series {
		header = append(header, s.Name)
	}
	if ch.Marker != nil && ch.Kind == lineChart && len(series) > 0 {
		header = append(header, ch.Marker.Label)
	}
	sheet := [][]any{header}
	for r := range n {
		row := []any{ch.Categories[r]}
		if months != nil {
			row[0] = monthCell(*months[r])
		}
		for _, s := range series {
			row = append(row, cellValue(s.Values[r]))
		}
		if len(header) > len(series)+1 {
			if r == ch.Marker.Index {
				row = append(row, cellValue(series[0].Values[r]))
			} else {
				row = append(row, nil)
			}
		}
		sheet = append(sheet, row)
	}
	return chartPart{XML: chartSpace(b.String(), true, st), Sheet: sheet}
}

// excelDate is the spreadsheet serial day number of t (1900 date system).
func excelDate(t time.Time) float64 {
	return math.Floor(t.Sub(time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)).Hours() / 24)
}

// ganttXML draws the roadmap as a native chart: stacked horizontal bars, an
// invisible one up to each start and a coloured one for the duration, on a
// date-formatted value axis.
func ganttXML(g gantt, st chartStyle) chartPart {
	n := len(g.Rows)
	names := make([]string, n)
	starts := make([]*float64, n)
	days := make([]*float64, n)
	for i, r := range g.Rows {
		names[i] = r.Name
		s, e := excelDate(r.Start), excelDate(r.End)+1
		starts[i], days[i] = new(s), new(e-s)
	}
	axisFrom, axisTo := g.axis()
	from, to := excelDate(monthStart(axisFrom)), excelDate(monthStart(axisTo).AddDate(0, 1, 0))
	catRef := fmt.Sprintf("Sheet1!$A$2:$A$%d", n+1)
	var b strings.Builder
	b.WriteString(`<c:barChart><c:barDir val="bar"/><c:grouping val="stacked"/><c:varyColors val="0"/>`)
	b.WriteString(`<c:ser><c:idx val="0"/><c:order val="0"/><c:tx>` + strCache("Sheet1!$B$1", []string{"Start"}) + `</c:tx>`)
	b.WriteString(`<c:spPr><a:noFill/><a:ln><a:noFill/></a:ln></c:spPr><c:invertIfNegative val="0"/>`)
	b.WriteString(`<c:cat>` + strCache(catRef, names) + `</c:cat><c:val>` + numCache(fmt.Sprintf("Sheet1!$B$2:$B$%d", n+1), "d mmm yyyy", starts) + `</c:val></c:ser>`)
	b.WriteString(`<c:ser><c:idx val="1"/><c:order val="1"/><c:tx>` + strCache("Sheet1!$C$1", []string{"Duration (days)"}) + `</c:tx>`)
	b.WriteString(`<c:spPr><a:solidFill><a:srgbClr val="` + colorCash + `"/></a:solidFill></c:spPr><c:invertIfNegative val="0"/>`)
	for i, r := range g.Rows {
		fmt.Fprintf(&b, `<c:dPt><c:idx val="%d"/><c:invertIfNegative val="0"/><c:bubble3D val="0"/><c:spPr><a:solidFill><a:srgbClr val="%s"/></a:solidFill></c:spPr></c:dPt>`,
			i, projectColor(r.Status))
	}
	b.WriteString(`<c:cat>` + strCache(catRef, names) + `</c:cat><c:val>` + numCache(fmt.Sprintf("Sheet1!$C$2:$C$%d", n+1), "0", days) + `</c:val></c:ser>`)
	b.WriteString(`<c:gapWidth val="50"/><c:overlap val="100"/><c:axId val="2001"/><c:axId val="2002"/></c:barChart>`)
	b.WriteString(catAx(2001, 2002, "l", 1, true, st))
	scaling := fmt.Sprintf(`<c:orientation val="minMax"/><c:max val="%g"/><c:min val="%g"/>`, to, from)
	b.WriteString(valAx(2002, 2001, "t", "mmm yyyy", scaling, `<c:majorUnit val="`+strconv.FormatFloat(ganttUnit(to-from), 'f', -1, 64)+`"/>`, st))
	sheet := [][]any{{"Project", "Start", "Duration (days)"}}
	for i := range n {
		sheet = append(sheet, []any{names[i], dayCell(*starts[i]), *days[i]})
	}
	return chartPart{XML: chartSpace(b.String(), false, st), Sheet: sheet}
}

// ganttUnit is the axis step in days: a month, a quarter or a year (of
// 365.25 days, so labels stay on the first month of each step).
func ganttUnit(days float64) float64 {
	switch {
	case days > 365*4:
		return 365.25
	case days > 365*1.5:
		return 365.25 / 4
	}
	return 365.25 / 12
}

// ganttLegend names the bar colours (the native chart has no legend for
// per-bar colours).
var ganttLegend = []struct{ name, status string }{{"Completed", "completed"}, {"In progress", "in_progress"},
	{"At risk", "at_risk"}, {"Planned", "planned"}}
