package render

import (
	"fmt"
	"math"
	"time"

	"github.com/jung-kurt/gofpdf"
)

// niceScale picks axis bounds and a step of 1, 2, 2.5 or 5 × 10ⁿ covering
// lo..hi (always including zero) in about ticks steps.
func niceScale(lo, hi float64, ticks int) (float64, float64, float64) {
	lo, hi = math.Min(lo, 0), math.Max(hi, 0)
	if hi-lo == 0 {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(ticks)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= m*mag {
			step = m * mag
			break
		}
	}
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step, step
}

func (w *pdfWriter) chart(ch chart) {
	f := w.f
	h := 72.0
	if w.c.Template == BoardPresentation {
		h = 92
	}
	w.blockTitle(ch.Title, h)
	if len(ch.Categories) == 0 {
		w.font("", 9)
		w.textColor(colorGrey)
		w.lines(w.left, w.cw, "No data yet.")
		return
	}
	top := w.y()
	// Value range.
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ch.Series {
		for _, v := range s.Values {
			if v != nil {
				lo, hi = math.Min(lo, *v), math.Max(hi, *v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	lo, hi, step := niceScale(lo, hi, 5)

	w.font("", 7)
	axisW := 0.0
	for v := lo; v <= hi+step/2; v += step {
		axisW = math.Max(axisW, w.width(shortNumber(v)))
	}
	plotX := w.left + axisW + 3
	plotW := w.cw - (plotX - w.left) - 2
	legendH := 7.0
	labelH := 5.0
	plotY := top + 2
	plotH := h - legendH - labelH - 4
	yOf := func(v float64) float64 { return plotY + plotH - (v-lo)/(hi-lo)*plotH }

	// Grid and value axis.
	f.SetLineWidth(0.15)
	for v := lo; v <= hi+step/2; v += step {
		y := yOf(v)
		w.drawColor("E5E7EB")
		if math.Abs(v) < step/2 {
			w.drawColor("6B7280")
			f.SetLineWidth(0.3)
		}
		f.Line(plotX, y, plotX+plotW, y)
		f.SetLineWidth(0.15)
		w.textColor(colorGrey)
		f.SetXY(w.left, y-2)
		w.cell(axisW, 4, shortNumber(v), "R")
	}
	if ch.YTitle != "" {
		w.font("", 6.5)
		f.SetXY(plotX, plotY-4)
		w.cell(30, 3, ch.YTitle, "L")
		w.font("", 7)
	}

	n := len(ch.Categories)
	slot := plotW / float64(n)
	xOf := func(i int) float64 { return plotX + slot*(float64(i)+0.5) }

	// Category labels, thinned so they never overlap.
	maxLabel := 0.0
	for _, c := range ch.Categories {
		maxLabel = math.Max(maxLabel, w.width(c))
	}
	every := max(1, int(math.Ceil((maxLabel+2)/slot)))
	w.textColor(colorGrey)
	for i, c := range ch.Categories {
		if i%every != 0 {
			continue
		}
		lw := w.width(c)
		x := math.Min(math.Max(xOf(i)-lw/2, plotX-axisW), plotX+plotW-lw)
		w.textAt(x, plotY+plotH+4, c)
	}

	switch ch.Kind {
	case barChart:
		ns := len(ch.Series)
		barW := slot * 0.78 / float64(ns)
		zero := yOf(0)
		for si, s := range ch.Series {
			w.fillColor(s.Color)
			for i, v := range s.Values {
				if v == nil {
					continue
				}
				x := plotX + slot*float64(i) + slot*0.11 + barW*float64(si)
				y := yOf(*v)
				f.Rect(x, math.Min(y, zero), barW*0.92, math.Abs(zero-y), "F")
			}
		}
	case lineChart:
		zero := yOf(0)
		for _, s := range ch.Series {
			var pts []gofpdf.PointType
			for i, v := range s.Values {
				if v != nil {
					pts = append(pts, gofpdf.PointType{X: xOf(i), Y: yOf(*v)})
				}
			}
			if len(pts) == 0 {
				continue
			}
			// Light area between the line and zero.
			area := append([]gofpdf.PointType{{X: pts[0].X, Y: zero}}, pts...)
			area = append(area, gofpdf.PointType{X: pts[len(pts)-1].X, Y: zero})
			w.fillColor(s.Color)
			f.SetAlpha(0.12, "Normal")
			f.Polygon(area, "F")
			f.SetAlpha(1, "Normal")
			w.drawColor(s.Color)
			f.SetLineWidth(0.6)
			f.SetLineJoinStyle("round")
			for i := 1; i < len(pts); i++ {
				f.Line(pts[i-1].X, pts[i-1].Y, pts[i].X, pts[i].Y)
			}
		}
		if m := ch.Marker; m != nil && len(ch.Series) > 0 && m.Index < len(ch.Series[0].Values) {
			if v := ch.Series[0].Values[m.Index]; v != nil {
				x, y := xOf(m.Index), yOf(*v)
				w.drawColor(colorPayback)
				f.SetLineWidth(0.35)
				f.SetDashPattern([]float64{1.2, 1}, 0)
				f.Line(x, plotY, x, plotY+plotH)
				f.SetDashPattern(nil, 0)
				w.fillColor(colorPayback)
				f.Polygon([]gofpdf.PointType{{X: x, Y: y - 2}, {X: x + 2, Y: y}, {X: x, Y: y + 2}, {X: x - 2, Y: y}}, "F")
				w.font("B", 7.5)
				lw := w.width(m.Label) + 3
				lx := x + 2
				if lx+lw > plotX+plotW {
					lx = x - 2 - lw
				}
				w.fillColor("FFFFFF")
				f.Rect(lx, plotY+1, lw, 4.5, "F")
				w.textColor(colorPayback)
				f.SetXY(lx, plotY+1)
				w.cell(lw, 4.5, m.Label, "C")
			}
		}
	}
	// Plot frame: the category axis.
	w.drawColor("9CA3AF")
	f.SetLineWidth(0.25)
	f.Line(plotX, plotY+plotH, plotX+plotW, plotY+plotH)

	// Legend.
	w.font("", 7.5)
	lx := plotX
	ly := plotY + plotH + labelH + 2
	for _, s := range ch.Series {
		w.fillColor(s.Color)
		if ch.Kind == lineChart {
			f.Rect(lx, ly+1.6, 5, 0.9, "F")
		} else {
			f.Rect(lx, ly+0.6, 3, 3, "F")
		}
		w.textColor("374151")
		f.SetXY(lx+6, ly)
		w.cell(w.width(s.Name)+1, 4, s.Name, "L")
		lx += 10 + w.width(s.Name)
	}
	if m := ch.Marker; m != nil {
		w.fillColor(colorPayback)
		f.Polygon([]gofpdf.PointType{{X: lx + 1.6, Y: ly + 0.4}, {X: lx + 3.2, Y: ly + 2}, {X: lx + 1.6, Y: ly + 3.6}, {X: lx, Y: ly + 2}}, "F")
		f.SetXY(lx+5, ly)
		w.textColor("374151")
		w.cell(w.width(m.Label)+1, 4, m.Label, "L")
	}
	f.SetY(top + h)
	w.note(ch.Note)
	w.gap(3)
}

// projectColor is the colour of a roadmap bar by its project's status: done, running, at risk, or planned.
func projectColor(status string) string {
	switch status {
	case "completed", "done", "closed":
		return "6B9E78"
	case "active", "in_progress", "running", "on_track":
		return colorCash
	case "at_risk", "delayed", "blocked", "off_track":
		return colorPayback
	}
	return colorExpected
}

func monthStart(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

func (w *pdfWriter) gantt(g gantt) {
	f := w.f
	if len(g.Rows) == 0 {
		return
	}
	rowH := 6.5
	w.font("", 8)
	labelW := math.Min(w.cw*0.32, 62)
	from, to := g.rowSpan()
	from = monthStart(from)
	to = monthStart(to).AddDate(0, 1, 0)
	span := to.Sub(from).Hours()
	plotX := w.left + labelW
	plotW := w.cw - labelW
	xOf := func(t time.Time) float64 {
		return plotX + math.Max(0, math.Min(1, t.Sub(from).Hours()/span))*plotW
	}
	months := (to.Year()-from.Year())*12 + int(to.Month()-from.Month())
	stepMonths := 1
	for _, s := range []int{1, 3, 6, 12, 24} {
		stepMonths = s
		if float64(months/s) <= plotW/16 {
			break
		}
	}
	w.blockTitle(g.Title, 10+rowH*math.Min(float64(len(g.Rows)), 4))
	drawAxis := func() {
		y := w.y()
		w.font("", 7)
		w.textColor(colorGrey)
		for m := 0; m <= months; m += stepMonths {
			t := from.AddDate(0, m, 0)
			x := xOf(t)
			w.drawColor("E5E7EB")
			f.SetLineWidth(0.15)
			f.Line(x, y+4.5, x, y+5.5)
			if m < months {
				label := t.Format("Jan 2006")
				if stepMonths%3 == 0 && int(t.Month()-1)%3 == 0 {
					label = fmt.Sprintf("Q%d %d", int(t.Month()-1)/3+1, t.Year())
				}
				w.textAt(x+0.8, y+3.5, label)
			}
		}
		f.SetY(y + 6)
	}
	drawAxis()
	for i, r := range g.Rows {
		if rowH > w.room() {
			f.AddPage()
			drawAxis()
		}
		y := w.y()
		if i%2 == 0 {
			w.fillColor("F6F8FB")
			f.Rect(w.left, y, w.cw, rowH, "F")
		}
		w.font("", 8)
		w.textColor("111827")
		name := r.Name
		for w.width(name) > labelW-3 && len([]rune(name)) > 4 {
			rs := []rune(name)
			name = string(rs[:len(rs)-2]) + "…"
		}
		f.SetXY(w.left+1, y)
		w.cell(labelW-2, rowH, name, "L")
		x0, x1 := xOf(r.Start), xOf(r.End.AddDate(0, 0, 1))
		w.fillColor(projectColor(r.Status))
		f.RoundedRect(x0, y+1.4, math.Max(x1-x0, 1), rowH-2.8, 1, "1234", "F")
		f.SetY(y + rowH)
	}
	// Data-as-of line.
	if asOf := w.c.DataAsOf; !asOf.IsZero() && asOf.After(from) && asOf.Before(to) {
		x := xOf(asOf)
		y1 := w.y()
		y0 := y1 - float64(len(g.Rows))*rowH
		if y0 > w.top {
			w.drawColor(colorPayback)
			f.SetLineWidth(0.3)
			f.SetDashPattern([]float64{1, 0.8}, 0)
			f.Line(x, y0, x, y1)
			f.SetDashPattern(nil, 0)
		}
	}
	// Legend.
	w.gap(1.5)
	lx := w.left
	w.font("", 7.5)
	for _, it := range ganttLegend {
		w.fillColor(projectColor(it.status))
		f.Rect(lx, w.y()+0.6, 3, 3, "F")
		w.textColor("374151")
		f.SetXY(lx+4.5, w.y())
		w.cell(w.width(it.name)+1, 4, it.name, "L")
		lx += 10 + w.width(it.name)
	}
	w.drawColor(colorPayback)
	f.SetLineWidth(0.3)
	f.SetDashPattern([]float64{1, 0.8}, 0)
	f.Line(lx, w.y()+0.5, lx, w.y()+3.5)
	f.SetDashPattern(nil, 0)
	f.SetXY(lx+2, w.y())
	w.cell(30, 4, "Data as of "+FormatDate(w.c.DataAsOf), "L")
	w.gap(7)
}

func sentimentColor(s string) string {
	switch s {
	case "positive":
		return "2E7D32"
	case "neutral":
		return "9CA3AF"
	case "cautious":
		return "D97706"
	case "negative":
		return "B91C1C"
	}
	return ""
}

func (w *pdfWriter) grid(g grid) {
	f := w.f
	axis := 7.0
	gapX := 3.0
	boxW := (w.cw - axis - gapX) / 2
	w.font("", 8)
	lineH := w.lh()
	maxNames := 0
	for _, q := range g.Quadrants {
		n := len(q.People)
		if q.More > 0 {
			n++
		}
		maxNames = max(maxNames, n)
	}
	boxH := 14 + float64(max(maxNames, 1))*lineH + 3
	w.blockTitle(g.Title, 2*boxH+gapX+16)
	if g.Total == 0 {
		w.font("", 9)
		w.textColor(colorGrey)
		w.lines(w.left, w.cw, "No stakeholders are mapped yet.")
		return
	}
	top := w.y()
	fills := map[Quadrant]string{ManageClosely: "DCE8F2", KeepSatisfied: "EAF1F7", KeepInformed: "EAF1F7", Monitor: "F4F6F9"}
	for i, q := range g.Quadrants {
		x := w.left + axis + float64(i%2)*(boxW+gapX)
		y := top + float64(i/2)*(boxH+gapX)
		w.fillColor(fills[q.Quadrant])
		f.Rect(x, y, boxW, boxH, "F")
		w.font("B", 10)
		w.textColor(colorNavy)
		f.SetXY(x+3, y+2.5)
		count := len(q.People) + q.More
		w.cell(boxW-6, 5, fmt.Sprintf("%s (%d)", q.Title, count), "L")
		w.font("", 7)
		w.textColor(colorGrey)
		f.SetXY(x+3, y+7.5)
		w.cell(boxW-6, 4, q.Advice, "L")
		w.font("", 8)
		ny := y + 13
		for _, s := range q.People {
			if c := sentimentColor(s.Sentiment); c != "" {
				w.fillColor(c)
				f.Circle(x+4.2, ny+lineH/2, 1.1, "F")
			} else {
				w.drawColor("9CA3AF")
				f.SetLineWidth(0.25)
				f.Circle(x+4.2, ny+lineH/2, 1.0, "D")
			}
			w.textColor("111827")
			f.SetXY(x+7, ny)
			name := s.Name
			role := ""
			if s.Role != "" {
				role = " · " + s.Role
			}
			avail := boxW - 10
			nw := w.width(name)
			w.cell(math.Min(nw, avail), lineH, name, "L")
			if role != "" && nw+4 < avail {
				w.textColor(colorGrey)
				r := role
				for w.width(r) > avail-nw && len([]rune(r)) > 4 {
					rs := []rune(r)
					r = string(rs[:len(rs)-2]) + "…"
				}
				w.cell(avail-nw, lineH, r, "L")
			}
			ny += lineH
		}
		if q.More > 0 {
			w.textColor(colorGrey)
			f.SetXY(x+7, ny)
			w.cell(boxW-10, lineH, fmt.Sprintf("+ %d more", q.More), "L")
		}
		if count == 0 {
			w.textColor(colorGrey)
			f.SetXY(x+7, ny)
			w.cell(boxW-10, lineH, "Nobody", "L")
		}
	}
	// Axes.
	gridH := 2*boxH + gapX
	w.drawColor(colorGrey)
	f.SetLineWidth(0.3)
	f.Line(w.left+3, top+gridH, w.left+3, top)
	f.Polygon([]gofpdf.PointType{{X: w.left + 3, Y: top - 1}, {X: w.left + 4.2, Y: top + 1.5}, {X: w.left + 1.8, Y: top + 1.5}}, "F")
	w.font("B", 7.5)
	w.textColor(colorGrey)
	f.TransformBegin()
	f.TransformRotate(90, w.left+2, top+gridH/2)
	lbl := "Influence (power)"
	w.textAt(w.left+2-w.width(lbl)/2, top+gridH/2, lbl)
	f.TransformEnd()
	ay := top + gridH + 2.5
	f.Line(w.left+axis, ay, w.left+w.cw, ay)
	w.fillColor(colorGrey)
	f.Polygon([]gofpdf.PointType{{X: w.left + w.cw + 1, Y: ay}, {X: w.left + w.cw - 1.5, Y: ay - 1.2}, {X: w.left + w.cw - 1.5, Y: ay + 1.2}}, "F")
	f.SetXY(w.left+axis, ay+0.8)
	w.cell(w.cw-axis, 4, "Interest", "C")
	f.SetY(ay + 6)

	// Sentiment legend.
	w.font("", 7.5)
	lx := w.left + axis
	for _, it := range []struct{ name, s string }{{"Positive", "positive"}, {"Neutral", "neutral"},
		{"Cautious", "cautious"}, {"Negative", "negative"}, {"Not engaged yet", ""}} {
		if c := sentimentColor(it.s); c != "" {
			w.fillColor(c)
			f.Circle(lx+1.2, w.y()+2, 1.1, "F")
		} else {
			w.drawColor("9CA3AF")
			f.SetLineWidth(0.25)
			f.Circle(lx+1.2, w.y()+2, 1.0, "D")
		}
		w.textColor("374151")
		f.SetXY(lx+3.5, w.y())
		w.cell(w.width(it.name)+1, 4, it.name, "L")
		lx += 9 + w.width(it.name)
	}
	w.gap(7)
}
