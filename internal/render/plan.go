package render

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
)

// A plan is the document's content in order, decided once per template so
// the PDF, DOCX and PPTX writers only lay it out. The title page is drawn by
// each writer from the Case itself.
type plan struct {
	c      *Case
	opts   Options
	format Format
	blocks []block
}

// block is one of the types below.
type block interface{ isBlock() }

// heading starts a part: a case section, "Supporting analysis" or "Appendix".
// Writers start it on a new page (PDF, DOCX) or slide (PPTX).
type heading struct {
	Text string
	// Break starts it on a new page in the PDF and DOCX (the appendix and
	// the supporting analysis); sections flow on.
	Break bool
	// Lead is a line under the title, e.g. the appendix's data-as-of.
	Lead string
}

// prose is a section's body (paragraphs and "- " bullets).
type prose struct{ Text string }

// keyFigures are the headline numbers as cards; Big for the board template.
type keyFigures struct {
	Title string
	Big   bool
	Items []keyFigure
}

// keyFigure is one card: the figure on the plan basis (Value, "Plan …")
// and on the forecast basis (Forecast, "Forecast …"), and a note.
type keyFigure struct{ Label, Value, Forecast, Note string }

type column struct {
	Header string
	Right  bool    // numbers align right
	Width  float64 // relative
}

// table is a titled table with an optional total row.
type table struct {
	Title     string
	Cols      []column
	Rows      [][]string
	Total     []string // nil: no total row
	Highlight int      // row index drawn emphasised, -1 for none
	Note      string   // under the table
	NoHeader  bool     // key/value tables
	keep      bool     // last row kept on the page with what follows (DOCX)
}

type chartKind int

const (
	barChart chartKind = iota
	lineChart
)

// chart is a category chart: clustered bars or a line. Nil values are gaps.
type chart struct {
	Title      string
	Kind       chartKind
	Categories []string
	Series     []series
	Marker     *marker // a point of the first series called out (payback)
	YTitle     string
	Note       string
}

type series struct {
	Name   string
	Color  string // RRGGBB
	Values []*float64
}

type marker struct {
	Index int
	Label string
}

// gantt is the roadmap: one bar per dated project.
type gantt struct {
	Title string
	Rows  []Project
	// from and to fix the time axis (zero: the rows' own span), so the
	// pages of one roadmap share one axis.
	from, to time.Time
}

// fitColumns sizes a table's columns to total: each at least as wide as
// its widest number (right-aligned cells never wrap) and its longest word
// (headers may wrap between words), the rest shared by the columns'
// relative widths. width measures a text at the table's type (bold for the
// total row) including the cell's padding. When the minimums are wider
// than total they are scaled down to fit (numbers may then wrap) and fits
// is false.
func fitColumns(t table, total float64, width func(s string, bold bool) float64) (widths []float64, fits bool) {
	need := make([]float64, len(t.Cols))
	measure := func(cells []string, header, bold bool) {
		for i, c := range cells {
			if i >= len(need) {
				break
			}
			words := strings.Fields(c)
			if !header && t.Cols[i].Right {
				words = []string{c}
			}
			for _, wd := range words {
				need[i] = max(need[i], width(wd, bold))
			}
		}
	}
	if !t.NoHeader {
		measure(headers(t.Cols), true, true)
	}
	for _, r := range t.Rows {
		measure(r, false, false)
	}
	if t.Total != nil {
		measure(t.Total, false, true)
	}
	sum, weight := 0.0, 0.0
	for i, n := range need {
		sum += n
		weight += t.Cols[i].Width
	}
	out := make([]float64, len(need))
	for i, n := range need {
		if sum > total {
			out[i] = n * total / sum
		} else {
			out[i] = n + (total-sum)*t.Cols[i].Width/weight
		}
	}
	return out, sum <= total
}

// rowSpan is the earliest start and the latest end of g's rows (zero without rows).
func (g gantt) rowSpan() (from, to time.Time) {
	if len(g.Rows) == 0 {
		return from, to
	}
	from, to = g.Rows[0].Start, g.Rows[0].End
	for _, r := range g.Rows {
		if r.Start.Before(from) {
			from = r.Start
		}
		if r.End.After(to) {
			to = r.End
		}
	}
	return from, to
}

// axis is the span g's time axis shows: the whole roadmap's on one of its
// pages, else its rows' own.
func (g gantt) axis() (from, to time.Time) {
	if !g.from.IsZero() {
		return g.from, g.to
	}
	return g.rowSpan()
}

// pages cuts the roadmap into charts of at most perPage rows on one time
// axis, the later ones titled "(continued)": a chart in a DOCX or PPTX is
// one fixed-size drawing, and 200 projects in one would be unreadable or
// taller than the page.
func (g gantt) pages(perPage int) []gantt {
	if len(g.Rows) == 0 {
		return nil
	}
	from, to := g.rowSpan()
	var out []gantt
	for i := 0; i < len(g.Rows); i += perPage {
		title := g.Title
		if i > 0 {
			title += " (continued)"
		}
		out = append(out, gantt{Title: title, Rows: g.Rows[i:min(i+perPage, len(g.Rows))], from: from, to: to})
	}
	return out
}

// grid is the power–interest grid: four quadrants in reading order
// (keep satisfied, manage closely, monitor, keep informed).
type grid struct {
	Title     string
	Quadrants [4]quadrantView
	Total     int
}

type quadrantView struct {
	Quadrant Quadrant
	Title    string
	Advice   string
	People   []Stakeholder // the first MaxNames, most influential first
	More     int           // how many are not listed
}

// contents lists the parts (every heading, in order) with the page each
// starts on; the writers number the headings as they place them.
type contents struct{ Entries []string }

// calculations is the appendix's formulas.
type calculations struct {
	Title string
	Items []Calculation
}

func (heading) isBlock()      {}
func (prose) isBlock()        {}
func (keyFigures) isBlock()   {}
func (table) isBlock()        {}
func (chart) isBlock()        {}
func (gantt) isBlock()        {}
func (grid) isBlock()         {}
func (calculations) isBlock() {}
func (contents) isBlock()     {}

// Colours shared by every format.
const (
	colorNavy     = "1F3A5F"
	colorExpected = "9DB4CF"
	colorActual   = "1F3A5F"
	colorCash     = "1F7A8C"
	colorPayback  = "D35400"
	colorGrey     = "6B7280"
	colorRule     = "C9D1DB"
	colorShade    = "EEF2F7"
)

// exhibit is a block with the sections it belongs after, first match wins.
type exhibit struct {
	homes  []string
	blocks []block
	text   string // a paragraph added to the home section's text instead
}

func newPlan(c *Case, o Options, f Format) *plan {
	p := &plan{c: c, opts: o, format: f}
	t := c.Template

	p.add(p.decisionTable(), p.keyFigureCards())

	var ex []exhibit
	benefitRows := 0 // all
	switch t {
	case ExecutiveSummary:
		benefitRows = 10
	case BoardPresentation:
		benefitRows = 5
	}
	benefitHomes := []string{SectionBenefitsPlan, SectionFinancialAnalysis}
	if t == CFOView {
		ex = append(ex, exhibit{homes: []string{SectionFinancialAnalysis}, blocks: []block{p.keyFigureTable()}})
	}
	ex = append(ex,
		exhibit{homes: benefitHomes, blocks: []block{p.benefitsTable(benefitRows)}},
		exhibit{homes: benefitHomes, blocks: []block{p.periodChart()}},
		exhibit{homes: []string{SectionFinancialAnalysis}, blocks: []block{p.cashFlowChart()}},
	)
	if t == CFOView {
		ex = append(ex,
			exhibit{homes: []string{SectionFinancialAnalysis}, blocks: []block{p.cashFlowTable()}},
			exhibit{homes: []string{SectionRiskAssessment, SectionFinancialAnalysis}, blocks: []block{p.sensitivityTable()}},
		)
	}
	if t == CFOView || t == TechnicalDeepDive {
		ex = append(ex, exhibit{homes: []string{SectionFinancialAnalysis}, blocks: []block{p.costsTable()}})
	}
	if t == TechnicalDeepDive {
		if len(c.Projects) > 0 {
			ex = append(ex, exhibit{homes: []string{SectionImplementationRoadmap}, blocks: []block{p.roadmap(), p.projectsTable()}})
		} else {
			// An empty roadmap and a header-only table say less than a line.
			ex = append(ex, exhibit{homes: []string{SectionImplementationRoadmap}, text: "Projects: none are linked to this initiative yet."})
		}
	}
	ex = append(ex, exhibit{homes: []string{SectionStakeholderMap}, blocks: []block{p.grid()}})

	present := map[string]bool{}
	for _, s := range c.Sections {
		present[s.ID] = true
	}
	home := func(e exhibit) string {
		for _, h := range e.homes {
			if present[h] {
				return h
			}
		}
		return ""
	}
	placed := map[string]bool{} // a section id repeated gets its exhibits once
	for _, s := range c.Sections {
		body := s.Body
		if !placed[s.ID] {
			for _, e := range ex {
				if home(e) == s.ID && e.text != "" {
					body = strings.TrimSpace(body + "\n\n" + e.text)
				}
			}
		}
		p.add(heading{Text: s.Title}, prose{Text: body})
		if placed[s.ID] {
			continue
		}
		placed[s.ID] = true
		for _, e := range ex {
			if home(e) == s.ID {
				p.add(e.blocks...)
			}
		}
	}
	var rest []block
	for _, e := range ex {
		if home(e) == "" {
			rest = append(rest, e.blocks...)
			if e.text != "" {
				rest = append(rest, prose{Text: e.text})
			}
		}
	}
	if len(rest) > 0 {
		p.add(heading{Text: "Supporting analysis", Break: true})
		p.add(rest...)
	}

	if o.IncludeAppendices {
		p.add(heading{Text: "Appendix", Break: true, Lead: "Data as of " + FormatTime(c.DataAsOf)})
		p.add(p.snapshotTable(), calculations{Title: "Calculations", Items: c.Calculations})
		if benefitRows > 0 && len(c.Benefits) > benefitRows {
			b := p.benefitsTable(0)
			b.Title = "All benefits"
			p.add(b)
		}
		// A register of hundreds of people is reference material for a
		// document, not for slides: the PPTX grid already names the most
		// influential per quadrant.
		if f != PPTX && len(c.Stakeholders) > 0 {
			p.add(p.stakeholderRegister())
		}
	}
	// A table of contents after the decision in the documents; a deck of
	// a dozen slides is its own agenda.
	if f != PPTX {
		var toc contents
		for _, b := range p.blocks {
			if h, ok := b.(heading); ok {
				toc.Entries = append(toc.Entries, h.Text)
			}
		}
		if len(toc.Entries) > 1 {
			p.blocks = slices.Insert(p.blocks, 1, block(toc))
		}
	}
	return p
}

func (p *plan) add(b ...block) { p.blocks = append(p.blocks, b...) }

// headline is one headline figure on both bases, formatted.
type headline struct {
	label          string
	plan, forecast Figure
	text           func(Figure) string
}

// headlines are the headline figures in card order. A document frozen
// under definitions version 1 has no forecast figures: they read "not
// recorded".
func (c *Case) headlines(short bool) []headline {
	f := c.Figures
	fc := BasisFigures{}
	notRecorded := Figure{Reason: "not recorded under definitions version 1"}
	if f.Forecast != nil {
		fc = *f.Forecast
	} else {
		fc = BasisFigures{ROIPercent: notRecorded, NPV: notRecorded, IRR: notRecorded, MIRR: notRecorded, PaybackMonths: notRecorded}
	}
	for _, x := range []*Figure{&f.ROIPercent, &f.NPV, &f.IRR, &f.MIRR, &f.PaybackMonths} {
		if x.Value == nil && x.Reason == "" { // MIRR, before definitions version 2
			*x = notRecorded
		}
	}
	return []headline{
		{"Return on investment", f.ROIPercent, fc.ROIPercent, c.roiText},
		{"Net present value", f.NPV, fc.NPV, func(x Figure) string { return c.npvText(x, short) }},
		{"Internal rate of return", f.IRR, fc.IRR, rateText},
		{"Modified IRR", f.MIRR, fc.MIRR, rateText},
		{"Payback", f.PaybackMonths, fc.PaybackMonths, paybackText},
	}
}

// whyNot is a figure's reason in words ("never_paid_back" → "never paid back").
func whyNot(f Figure) string { return strings.ReplaceAll(f.Reason, "_", " ") }

// framed is the key figures' title, saying when they were frozen under
// older definitions.
func (c *Case) framed(title string) string {
	if v := c.Figures.DefinitionsVersion; v < finance.DefinitionsVersion {
		return fmt.Sprintf("%s (frozen at approval under definitions version %d)", title, max(v, 1))
	}
	return title
}

// decisionTable is the page every template opens with: what the approvers
// are asked to decide, and what the figures say, in sentences made from
// the figures themselves.
func (p *plan) decisionTable() table {
	c := p.c
	t := table{Title: "The decision requested", Cols: []column{{"", false, 2.2}, {"", false, 8}}, NoHeader: true, Highlight: -1}
	d := c.Decision
	if d == nil {
		t.Rows = append(t.Rows, []string{"Ask", "None recorded: this version asks no explicit decision."})
	} else {
		t.Rows = append(t.Rows, []string{"Ask", d.Ask})
		if d.Amount != nil {
			t.Rows = append(t.Rows, []string{"Amount", FormatMoney(*d.Amount, d.Currency)})
		}
		if !d.DecideBy.IsZero() {
			t.Rows = append(t.Rows, []string{"Decide by", FormatDate(d.DecideBy)})
		}
		if d.Recommendation != "" {
			t.Rows = append(t.Rows, []string{"Recommendation", d.Recommendation})
		}
	}
	if s := c.figureSentences(); s != "" {
		t.Rows = append(t.Rows, []string{"The figures", s})
	}
	return t
}

// figureSentences describe the plan from its numbers: how the monthly
// benefits run (flat, rising or falling, from which month), the payback
// month and the ROI. Nothing is said that the cash flow does not show.
func (c *Case) figureSentences() string {
	ms := c.CashFlow.Months
	first := -1
	for i, m := range ms {
		if m.Benefits != 0 {
			first = i
			break
		}
	}
	var out []string
	if first >= 0 {
		lo, hi := ms[first].Benefits, ms[first].Benefits
		for _, m := range ms[first:] {
			lo, hi = min(lo, m.Benefits), max(hi, m.Benefits)
		}
		cur := c.BaseCurrency
		switch last := ms[len(ms)-1].Benefits; {
		case FormatMoney(lo, cur) == FormatMoney(hi, cur) || (hi-lo) <= 0.01*hi:
			out = append(out, fmt.Sprintf("Planned benefits are flat at about %s a month from %s.", FormatMoneyShort(hi, cur), ms[first].Label))
		case last >= hi && ms[first].Benefits <= lo:
			out = append(out, fmt.Sprintf("Planned benefits rise from %s a month in %s to %s by %s.", FormatMoneyShort(ms[first].Benefits, cur), ms[first].Label,
				FormatMoneyShort(last, cur), ms[len(ms)-1].Label))
		default:
			out = append(out, fmt.Sprintf("Planned benefits start in %s and range from %s to %s a month.", ms[first].Label, FormatMoneyShort(lo, cur), FormatMoneyShort(hi, cur)))
		}
	}
	if m := c.CashFlow.PaybackMonth; m != nil {
		out = append(out, fmt.Sprintf("The cumulative cash flow turns positive in %s (month %d).", ms[*m].Label, *m+1))
	} else if len(ms) > 0 {
		out = append(out, "The cumulative cash flow does not turn positive within the horizon.")
	}
	if v := c.Figures.ROIPercent.Value; v != nil && len(ms) > 0 {
		out = append(out, fmt.Sprintf("Over %d months the plan returns %s on its costs.", len(ms), FormatPercent(*v)))
	}
	return strings.Join(out, " ")
}

func (p *plan) keyFigureCards() keyFigures {
	c := p.c
	npvNote := ""
	if r := c.Figures.DiscountRate; r != nil {
		npvNote = "at " + FormatPercent(*r*100) + " discount rate"
	}
	if h := c.Figures.HorizonMonths; h > 0 {
		npvNote = strings.TrimSpace(npvNote + fmt.Sprintf(" over %d months", h))
	}
	paybackNote := ""
	if m := c.CashFlow.PaybackMonth; m != nil {
		paybackNote = "plan break-even in " + c.CashFlow.Months[*m].Label
	}
	notes := []string{"over the horizon", npvNote, "annual", "annual, reinvested at the discount rate", paybackNote}
	k := keyFigures{Title: c.framed("At a glance: plan and forecast"), Big: c.Template == BoardPresentation}
	for i, h := range c.headlines(true) {
		note := notes[i]
		if h.plan.Value == nil {
			note = "plan: " + whyNot(h.plan)
		}
		if h.forecast.Value == nil && h.forecast.Reason != h.plan.Reason {
			note = strings.TrimPrefix(note+"; forecast: "+whyNot(h.forecast), "; ")
		}
		k.Items = append(k.Items, keyFigure{Label: h.label, Value: "Plan " + h.text(h.plan), Forecast: "Forecast " + h.text(h.forecast), Note: note})
	}
	return k
}

func (p *plan) keyFigureTable() table {
	c := p.c
	cards := p.keyFigureCards()
	bases := []string{"(benefits − costs) ÷ costs over the horizon", "discounted monthly cash flow, " + cards.Items[1].Note,
		"annual rate at which the NPV is zero", "annual; costs financed and gains reinvested at the discount rate", cards.Items[4].Note}
	t := table{
		Title: c.framed("Key figures"),
		Cols:  []column{{"Figure", false, 3}, {"Plan", true, 2.2}, {"Forecast", true, 2.2}, {"Basis", false, 4.5}},
		Note:  "Plan: expected values only. Forecast: actuals to date, then plan.",
	}
	t.Highlight = -1
	for i, h := range c.headlines(false) {
		basis := bases[i]
		if h.plan.Value == nil {
			basis = "plan: " + whyNot(h.plan)
		}
		if h.forecast.Value == nil {
			basis += "; forecast: " + whyNot(h.forecast)
		}
		t.Rows = append(t.Rows, []string{h.label, h.text(h.plan), h.text(h.forecast), basis})
	}
	return t
}

func (p *plan) benefitsTable(limit int) table {
	c := p.c
	likeForLike := c.Figures.DefinitionsVersion >= LikeForLikeVersion
	rows := slices.Clone(c.Benefits)
	t := table{
		Title: "Benefits: expected vs actual",
		Cols: []column{{"Benefit", false, 3.2}, {"Category", false, 1.8},
			{"Expected (" + c.BaseCurrency + ")", true, 2.1}, {"Actual (" + c.BaseCurrency + ")", true, 2.1},
			{"Variance (" + c.BaseCurrency + ")", true, 2.1}, {"Variance %", true, 1.6}},
		Highlight: -1,
	}
	if likeForLike {
		t.Cols = append(t.Cols, column{"Not yet measured", true, 2.1})
	}
	var other []Benefit
	if limit > 0 && len(rows) > limit {
		// The largest expected benefits carry the case; the rest are summed.
		slices.SortStableFunc(rows, func(a, b Benefit) int { return cmp.Compare(b.Expected+b.Unmeasured, a.Expected+a.Unmeasured) })
		rows, other = rows[:limit], rows[limit:]
		t.Title = fmt.Sprintf("Benefits: expected vs actual (largest %d of %d)", limit, len(c.Benefits))
	}
	if c.BenefitsPeriod != "" {
		t.Title += ", " + c.BenefitsPeriod
	}
	line := func(name, category string, b Benefit) []string {
		out := []string{name, category, FormatAmount(b.Expected, c.BaseCurrency), optAmount(b.Actual, c.BaseCurrency),
			optAmount(b.Variance, c.BaseCurrency), optPercent(b.VariancePercent)}
		if likeForLike {
			out = append(out, FormatAmount(b.Unmeasured, c.BaseCurrency))
		}
		return out
	}
	for _, b := range rows {
		t.Rows = append(t.Rows, line(b.Name, Label(b.Category), b))
	}
	if len(other) > 0 {
		t.Rows = append(t.Rows, line(fmt.Sprintf("%d other benefits", len(other)), "", sumBenefits(other, likeForLike)))
	}
	s := sumBenefits(c.Benefits, likeForLike)
	if c.BenefitsTotal != nil {
		s = *c.BenefitsTotal
	}
	t.Total = line("Total", "", s)
	t.Note = "Like for like: expected, actual and variance cover the periods measured so far; " +
		"what the periods not yet measured expect is shown apart, not as a shortfall; – means not measured yet."
	if !likeForLike {
		t.Note = "Actual and variance cover benefits measured so far; – means not measured yet. " +
			"Total variance % is the total variance over the expected value of the measured benefits."
	}
	if !foots(t) {
		t.Note += " Each row is rounded to the currency's minor unit and the total is the exact sum rounded once, so the rows may differ from it by a unit."
	}
	return t
}

// foots reports whether every amount column's printed rows add up to its
// printed total.
func foots(t table) bool {
	for col := range t.Cols {
		if col >= len(t.Total) || !t.Cols[col].Right {
			continue
		}
		total, ok := parseAmount(t.Total[col])
		if !ok {
			continue
		}
		sum := 0.0
		for _, r := range t.Rows {
			if v, ok := parseAmount(r[col]); ok {
				sum += v
			}
		}
		if math.Abs(sum-total) > 0.0004 {
			return false
		}
	}
	return true
}

// LikeForLikeVersion is the first definitions version whose benefits table
// compares like for like (see Figures.DefinitionsVersion).
const LikeForLikeVersion = 2

// sumBenefits totals rows: actual and variance over the measured rows,
// variance % relative to the measured rows' expected; like for like the
// expected column sums the measured rows and the unmeasured expectation
// all, before (a frozen document of version 1) the expected column sums all.
func sumBenefits(rows []Benefit, likeForLike bool) Benefit {
	var s Benefit
	var actual, variance, measuredExpected float64
	measured := false
	for _, b := range rows {
		s.Unmeasured += b.Unmeasured
		if !likeForLike {
			s.Expected += b.Expected
		}
		if b.Actual != nil {
			measured = true
			measuredExpected += b.Expected
			actual += *b.Actual
			if b.Variance != nil {
				variance += *b.Variance
			} else {
				variance += *b.Actual - b.Expected
			}
		}
	}
	if likeForLike {
		s.Expected = measuredExpected
	}
	if measured {
		s.Actual, s.Variance = new(actual), new(variance)
		if measuredExpected != 0 {
			s.VariancePercent = new(variance / measuredExpected * 100)
		}
	}
	return s
}

func (p *plan) periodChart() chart {
	c := p.c
	exp := make([]*float64, len(c.Periods))
	act := make([]*float64, len(c.Periods))
	cats := make([]string, len(c.Periods))
	for i, v := range c.Periods {
		cats[i], exp[i], act[i] = v.Label, new(v.Expected), v.Actual
	}
	return chart{
		Title:      "Benefits per period: expected vs actual",
		Kind:       barChart,
		Categories: cats,
		Series:     []series{{"Expected", colorExpected, exp}, {"Actual", colorActual, act}},
		YTitle:     c.BaseCurrency,
	}
}

func (p *plan) cashFlowChart() chart {
	c := p.c
	cats := make([]string, len(c.CashFlow.Months))
	vals := make([]*float64, len(c.CashFlow.Months))
	for i, m := range c.CashFlow.Months {
		cats[i], vals[i] = m.Label, new(m.Cumulative)
	}
	ch := chart{
		Title:      "Cumulative cash flow",
		Kind:       lineChart,
		Categories: cats,
		Series:     []series{{"Cumulative cash flow", colorCash, vals}},
		YTitle:     c.BaseCurrency,
	}
	if m := c.CashFlow.PaybackMonth; m != nil {
		ch.Marker = &marker{Index: *m, Label: fmt.Sprintf("Payback: %s (month %d)", cats[*m], *m+1)}
	} else {
		ch.Note = "Payback is not reached within the horizon."
	}
	return ch
}

func (p *plan) cashFlowTable() table {
	c := p.c
	t := table{
		Title: "Monthly cash flow (" + c.BaseCurrency + ")",
		Cols: []column{{"Month", false, 2}, {"Benefits", true, 2.2}, {"Costs", true, 2.2},
			{"Net", true, 2.2}, {"Cumulative", true, 2.4}},
		Highlight: -1,
	}
	var b, k, n float64
	for i, m := range c.CashFlow.Months {
		t.Rows = append(t.Rows, []string{m.Label, FormatAmount(m.Benefits, c.BaseCurrency), FormatAmount(m.Costs, c.BaseCurrency),
			FormatAmount(m.Net, c.BaseCurrency), FormatAmount(m.Cumulative, c.BaseCurrency)})
		b, k, n = b+m.Benefits, k+m.Costs, n+m.Net
		if pm := c.CashFlow.PaybackMonth; pm != nil && *pm == i {
			t.Highlight = i
		}
	}
	if len(c.CashFlow.Months) > 0 {
		t.Total = []string{"Total", FormatAmount(b, c.BaseCurrency), FormatAmount(k, c.BaseCurrency), FormatAmount(n, c.BaseCurrency), ""}
	}
	if t.Highlight >= 0 {
		t.Note = "Highlighted: the payback month, the first with a cumulative cash flow of zero or more."
	}
	return t
}

func (p *plan) sensitivityTable() table {
	s := p.c.Sensitivity
	figures := []struct {
		name string
		f    Figure
	}{{"Best case", s.BestROIPercent}, {"Expected case", s.ExpectedROIPercent}, {"Worst case", s.WorstROIPercent}}
	t := table{
		Title:     "Sensitivity: return on investment by scenario",
		Cols:      []column{{"Scenario", false, 3}, {"ROI", true, 2}},
		Highlight: 1,
		Note:      s.Assumptions,
	}
	reasons := false
	for _, f := range figures {
		reasons = reasons || f.f.Value == nil
	}
	if reasons { // a column for why a scenario has no ROI
		t.Cols = append(t.Cols, column{"Note", false, 5})
	}
	for _, f := range figures {
		row := []string{f.name, p.c.roiText(f.f)}
		if reasons {
			row = append(row, f.f.Reason)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func (p *plan) costsTable() table {
	c := p.c
	t := table{
		Title: "Costs",
		Cols: []column{{"Cost", false, 4}, {"Category", false, 2.4}, {"Timing", false, 2.6},
			{"Amount (" + c.BaseCurrency + ")", true, 2.4}},
		Highlight: -1,
	}
	var sum float64
	for _, x := range c.Costs {
		t.Rows = append(t.Rows, []string{x.Name, Label(x.Category), Label(x.Timing), FormatAmount(x.Amount, c.BaseCurrency)})
		sum += x.Amount
	}
	t.Total = []string{"Total", "", "", FormatAmount(sum, c.BaseCurrency)}
	return t
}

func (p *plan) roadmap() gantt {
	var rows []Project
	for _, pr := range p.c.Projects {
		if !pr.Start.IsZero() && !pr.End.IsZero() && !pr.End.Before(pr.Start) {
			rows = append(rows, pr)
		}
	}
	return gantt{Title: "Roadmap", Rows: rows}
}

func (p *plan) projectsTable() table {
	c := p.c
	t := table{
		Title: "Projects",
		Cols: []column{{"Project", false, 4}, {"Owner", false, 2.6}, {"Status", false, 2},
			{"Start", false, 2}, {"End", false, 2}, {"Budget (" + c.BaseCurrency + ")", true, 2.4}},
		Highlight: -1,
	}
	var sum float64
	budgeted := false
	for _, pr := range c.Projects {
		t.Rows = append(t.Rows, []string{pr.Name, pr.Owner, Label(pr.Status), FormatDate(pr.Start),
			FormatDate(pr.End), optAmount(pr.Budget, c.BaseCurrency)})
		if pr.Budget != nil {
			sum, budgeted = sum+*pr.Budget, true
		}
	}
	if budgeted {
		t.Total = []string{"Total", "", "", "", "", FormatAmount(sum, c.BaseCurrency)}
	}
	return t
}

var influenceRank = map[string]int{"critical": 0, "high": 1, "medium": 2, "low": 3}
var interestRank = map[string]int{"high": 0, "medium": 1, "low": 2}

// quadrantOrder is the grid in reading order: top row (high influence)
// keep satisfied | manage closely, bottom row monitor | keep informed.
var quadrantOrder = [4]struct {
	q             Quadrant
	title, advice string
}{
	{KeepSatisfied, "Keep satisfied", "High influence, lower interest"},
	{ManageClosely, "Manage closely", "High influence, high interest"},
	{Monitor, "Monitor", "Lower influence, lower interest"},
	{KeepInformed, "Keep informed", "Lower influence, high interest"},
}

func (s Stakeholder) quadrant() Quadrant {
	if s.Quadrant != "" {
		return s.Quadrant
	}
	return QuadrantOf(s.Influence, s.Interest)
}

// byInfluence orders the most influential, then most interested, first.
func byInfluence(a, b Stakeholder) int {
	return cmp.Or(cmp.Compare(influenceRank[a.Influence], influenceRank[b.Influence]),
		cmp.Compare(interestRank[a.Interest], interestRank[b.Interest]),
		strings.Compare(a.Name, b.Name))
}

func (p *plan) grid() grid {
	names := 8
	switch {
	case p.format == PPTX || p.c.Template == BoardPresentation:
		names = 5
	}
	g := grid{Title: "Stakeholders: power–interest grid", Total: len(p.c.Stakeholders)}
	for i, qo := range quadrantOrder {
		var people []Stakeholder
		for _, s := range p.c.Stakeholders {
			if s.quadrant() == qo.q {
				people = append(people, s)
			}
		}
		slices.SortFunc(people, byInfluence)
		v := quadrantView{Quadrant: qo.q, Title: qo.title, Advice: qo.advice, People: people}
		if len(people) > names {
			v.People, v.More = people[:names], len(people)-names
		}
		g.Quadrants[i] = v
	}
	return g
}

func (p *plan) stakeholderRegister() table {
	people := slices.Clone(p.c.Stakeholders)
	rank := map[Quadrant]int{ManageClosely: 0, KeepSatisfied: 1, KeepInformed: 2, Monitor: 3}
	slices.SortStableFunc(people, func(a, b Stakeholder) int {
		return cmp.Or(cmp.Compare(rank[a.quadrant()], rank[b.quadrant()]), byInfluence(a, b))
	})
	t := table{
		Title: "Stakeholder register",
		Cols: []column{{"Name", false, 3.2}, {"Role", false, 3.2}, {"Influence", false, 1.7},
			{"Interest", false, 1.5}, {"Quadrant", false, 2.4}, {"Sentiment", false, 1.8}},
		Highlight: -1,
	}
	for _, s := range people {
		sent := s.Sentiment
		if sent == "" {
			sent = "not engaged"
		}
		t.Rows = append(t.Rows, []string{s.Name, s.Role, Label(s.Influence), Label(s.Interest),
			Label(string(s.quadrant())), Label(sent)})
	}
	return t
}

func (p *plan) snapshotTable() table {
	c := p.c
	hash := c.ContentHash
	if hash == "" {
		hash = "–"
	}
	return table{
		Title:    "Snapshot",
		Cols:     []column{{"", false, 3}, {"", false, 8}},
		NoHeader: true,
		Rows: [][]string{
			{"Data as of", FormatTime(c.DataAsOf)},
			{"Snapshot content hash", hash},
			{"Case version", fmt.Sprintf("%d", c.Version)},
			{"Template", c.Template.Title()},
			{"Base currency", c.BaseCurrency},
		},
		Highlight: -1,
	}
}
