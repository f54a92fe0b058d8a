// Package render turns a business-case snapshot (Case) into a board-ready
// PDF, DOCX or PPTX document. It has no database or HTTP dependency: the
// export workflow's snapshot activity builds a Case from one tenant
// transaction, and the render activity calls Render with it.
//
// Every figure arrives computed (by the finance core); the renderer only
// formats, sums table columns and lays out. Content is chosen per template
// in one place (plan.go) so the three formats say the same thing.
package render

import (
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/valuecase/valuecase/internal/stakeholder"
)

// Template shapes what a document contains (see plan.go for the exact list).
type Template string

const (
	// ExecutiveSummary is short: key figures, section texts, a top-10
	// benefits table, the two charts and the stakeholder grid.
	ExecutiveSummary Template = "executive_summary"
	// CFOView adds the monthly cash-flow table, NPV/IRR/payback with their
	// reasons, the sensitivity table, costs and the full benefits table.
	CFOView Template = "cfo_view"
	// TechnicalDeepDive adds the roadmap (Gantt), projects and costs.
	TechnicalDeepDive Template = "technical_deep_dive"
	// BoardPresentation: few words, big numbers, a top-5 benefits table.
	BoardPresentation Template = "board_presentation"
)

// Templates lists the valid templates in the order the API documents them.
var Templates = []Template{ExecutiveSummary, CFOView, TechnicalDeepDive, BoardPresentation}

// Title is the template's name as a reader sees it.
func (t Template) Title() string {
	switch t {
	case ExecutiveSummary:
		return "Executive summary"
	case CFOView:
		return "CFO view"
	case TechnicalDeepDive:
		return "Technical deep dive"
	case BoardPresentation:
		return "Board presentation"
	}
	return string(t)
}

// Section identifiers the renderer knows where to attach exhibits to. Any
// other identifier is rendered as text in its place; exhibits whose home
// section is missing go to a "Supporting analysis" part after the sections.
const (
	SectionExecutiveSummary      = "executive_summary"
	SectionFinancialAnalysis     = "financial_analysis"
	SectionRiskAssessment        = "risk_assessment"
	SectionImplementationRoadmap = "implementation_roadmap"
	SectionStakeholderMap        = "stakeholder_map"
	SectionBenefitsPlan          = "benefits_plan"
	SectionAssumptions           = "assumptions"
)

// Quadrant is a place on the power–interest grid; the rule that places a
// stakeholder is internal/stakeholder's, the one the API reports.
type Quadrant = stakeholder.Quadrant

const (
	ManageClosely = stakeholder.ManageClosely
	KeepSatisfied = stakeholder.KeepSatisfied
	KeepInformed  = stakeholder.KeepInformed
	Monitor       = stakeholder.Monitor
)

// QuadrantOf places a stakeholder on the grid from the spec's levels.
func QuadrantOf(influence, interest string) Quadrant {
	return stakeholder.QuadrantOf(stakeholder.Influence(influence), stakeholder.Interest(interest))
}

// Case is the snapshot of one business-case version, complete: the renderer
// reads nothing else. Amounts are in BaseCurrency units (display only).
// JSON tags make it a workflow payload as is.
type Case struct {
	Name           string    `json:"name"`
	InitiativeName string    `json:"initiative_name"`
	Version        int       `json:"version"`
	Status         string    `json:"status"` // draft, pending_approval, approved, rejected
	Approval       *Approval `json:"approval,omitempty"`
	Template       Template  `json:"template"`
	Sections       []Section `json:"sections"`
	// Decision is what the case asks its approvers to decide; nil: none
	// recorded. Every template puts it first.
	Decision *DecisionRequest `json:"decision,omitempty"`

	BaseCurrency string      `json:"base_currency"` // ISO 4217, e.g. CHF
	Figures      KeyFigures  `json:"figures"`
	Sensitivity  Sensitivity `json:"sensitivity"`
	Benefits     []Benefit   `json:"benefits"`
	// BenefitsTotal is the benefits table's total computed from the exact
	// amounts (the API's figures, rounded once); nil: the rows are summed.
	BenefitsTotal *Benefit `json:"benefits_total,omitempty"`
	// BenefitsPeriod says what the benefits table's expected and actual
	// cover, e.g. "to 30 Jun 2028"; it is printed in the table's title.
	BenefitsPeriod string `json:"benefits_period,omitempty"`
	// Periods is expected vs actual benefit per reporting period (all
	// benefits summed), oldest first.
	Periods      []PeriodValue `json:"periods"`
	CashFlow     CashFlow      `json:"cash_flow"`
	Costs        []Cost        `json:"costs"`
	Stakeholders []Stakeholder `json:"stakeholders"`
	Projects     []Project     `json:"projects"`
	// Calculations is the appendix: every formula and input behind each
	// figure, printed only with Options.IncludeAppendices.
	Calculations []Calculation `json:"calculations"`

	DataAsOf    time.Time `json:"data_as_of"`
	ContentHash string    `json:"content_hash"` // of the snapshot, e.g. "sha256:…"
}

// DecisionRequest is the case's ask. Amount is rounded to Currency's
// minor units; DecideBy zero: no date.
type DecisionRequest struct {
	Ask            string    `json:"ask"`
	Amount         *float64  `json:"amount,omitempty"`
	Currency       string    `json:"currency,omitempty"`
	DecideBy       time.Time `json:"decide_by,omitzero"`
	Recommendation string    `json:"recommendation,omitempty"`
}

// Approval is who approved the version, at which level, and why.
type Approval struct {
	Level string    `json:"level"` // manager, director, executive, board
	By    string    `json:"by"`
	At    time.Time `json:"at"`
	Notes string    `json:"notes,omitempty"`
}

// Section is one titled block of prose. Body is plain text: blank lines
// separate paragraphs, lines starting "- " are bullets.
type Section struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Figure is a number that may be undefined; Reason then says why in words a
// reader understands ("cash flows never turn positive").
type Figure struct {
	Value  *float64 `json:"value"`
	Reason string   `json:"reason,omitempty"`
}

// KeyFigures are the headline numbers: on the plan basis at the top level,
// and on the forecast basis (actuals to date, then plan) in Forecast.
type KeyFigures struct {
	ROIPercent    Figure `json:"roi_percent"`    // 184.3 means 184.3 %
	NPV           Figure `json:"npv"`            // in BaseCurrency
	IRR           Figure `json:"irr"`            // a fraction: 0.273 means 27.3 %
	PaybackMonths Figure `json:"payback_months"` // may be fractional
	MIRR          Figure `json:"mirr"`           // a fraction, at the discount rate
	// Forecast is the same figures on the forecast basis; nil in a
	// document frozen under definitions version 1 (plan only).
	Forecast *BasisFigures `json:"forecast,omitempty"`
	// DefinitionsVersion is the finance definitions the figures were
	// computed under (0 in a document frozen before it was recorded: 1);
	// from LikeForLikeVersion the benefits table compares like for like
	// with a "not yet measured" column, before it the table of its time.
	DefinitionsVersion int `json:"definitions_version,omitempty"`
	// DiscountRate is the NPV's rate as a fraction, shown beside it.
	DiscountRate  *float64 `json:"discount_rate,omitempty"`
	HorizonMonths int      `json:"horizon_months,omitempty"`
}

// BasisFigures are the headline figures on one basis.
type BasisFigures struct {
	ROIPercent    Figure `json:"roi_percent"`
	NPV           Figure `json:"npv"`
	IRR           Figure `json:"irr"`
	MIRR          Figure `json:"mirr"`
	PaybackMonths Figure `json:"payback_months"`
}

// Sensitivity is ROI under the best, expected and worst scenario.
type Sensitivity struct {
	BestROIPercent     Figure `json:"best_roi_percent"`
	ExpectedROIPercent Figure `json:"expected_roi_percent"`
	WorstROIPercent    Figure `json:"worst_roi_percent"`
	// Assumptions says how the scenarios differ ("benefits ±20 %, costs ±10 %").
	Assumptions string `json:"assumptions,omitempty"`
}

// Benefit is one row of the benefits table, like for like: Expected is the
// expectation of the periods that have an actual, Unmeasured that of the
// periods to date without one (shown apart, never as a shortfall). Actual is
// nil until measured; the variances are then nil too (and VariancePercent
// when Expected is 0). Amounts are rounded to the base currency's minor units.
type Benefit struct {
	Name            string   `json:"name"`
	Category        string   `json:"category"`
	Expected        float64  `json:"expected"`
	Unmeasured      float64  `json:"expected_unmeasured"`
	Actual          *float64 `json:"actual"`
	Variance        *float64 `json:"variance"`
	VariancePercent *float64 `json:"variance_percent"` // -12.5 means -12.5 %
}

// PeriodValue is one reporting period's benefit. Actual is nil for periods
// not yet measured (drawn as a gap, never as zero).
type PeriodValue struct {
	Label    string   `json:"label"` // e.g. "2027-Q1" or "Jan 2027"
	Expected float64  `json:"expected"`
	Actual   *float64 `json:"actual"`
}

// CashFlow is the monthly cash flow; PaybackMonth is the index in Months of
// the month the payback falls in: after it the cumulative value is never
// negative again (nil: never paid back).
type CashFlow struct {
	Months       []CashFlowMonth `json:"months"`
	PaybackMonth *int            `json:"payback_month"`
}

// CashFlowMonth is one month: benefits in, costs out (positive), their
// difference and the running total.
type CashFlowMonth struct {
	Label      string  `json:"label"` // e.g. "2027-01"
	Benefits   float64 `json:"benefits"`
	Costs      float64 `json:"costs"`
	Net        float64 `json:"net"`
	Cumulative float64 `json:"cumulative"`
}

// Cost is one cost line; Amount is the total over the horizon.
type Cost struct {
	Name     string  `json:"name"`
	Category string  `json:"category"`
	Timing   string  `json:"timing"` // e.g. "one-off, Q1 2027" or "monthly"
	Amount   float64 `json:"amount"`
}

// Stakeholder is one person on the power–interest grid. Quadrant may be
// empty; it is then QuadrantOf(Influence, Interest).
type Stakeholder struct {
	Name      string   `json:"name"`
	Role      string   `json:"role"`
	Influence string   `json:"influence"` // low, medium, high, critical
	Interest  string   `json:"interest"`  // low, medium, high
	Quadrant  Quadrant `json:"quadrant,omitempty"`
	Sentiment string   `json:"sentiment,omitempty"` // positive, neutral, cautious, negative; empty: not engaged yet
}

// Project is one roadmap row. Zero Start or End keeps it out of the Gantt
// chart but in the table.
type Project struct {
	Name   string    `json:"name"`
	Owner  string    `json:"owner,omitempty"`
	Status string    `json:"status"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	Budget *float64  `json:"budget,omitempty"`
}

// Calculation is one appendix entry. Values are display strings, formatted
// by the caller (FormatMoney, FormatPercent) because units vary.
type Calculation struct {
	Name    string      `json:"name"`    // "Net present value"
	Formula string      `json:"formula"` // "NPV = Σ CFₜ / (1 + r)^(t/12)"
	Inputs  []CalcInput `json:"inputs"`
	Result  string      `json:"result"`
}

// CalcInput is one named input of a calculation.
type CalcInput struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Options are the export request's choices plus the workflow's hooks.
type Options struct {
	IncludeAppendices bool
	Watermark         string // at most MaxWatermarkRunes characters; empty: none
	Author            string // document metadata and title page "Prepared by"
	// Progress, if set, is called with 0..100 as rendering advances (each
	// value at most once, increasing); the workflow heartbeats with it.
	Progress func(pct int)
	// GeneratedAt is printed on the title page and stored in the metadata;
	// zero means now. Fixing it makes output byte-for-byte reproducible.
	GeneratedAt time.Time
}

// MaxWatermarkRunes is the longest watermark accepted.
const MaxWatermarkRunes = 64

// Limits that keep one document bounded; the API bounds content before
// this, these only stop a runaway snapshot. The API's limits allow about
// 600,000 characters of printed text (7 sections of 20,200, and up to 200
// characters for each name of 500 stakeholders, 500 costs, 200 projects and
// 100 benefits) and about 1,500 rows: every case it accepts renders, long
// text paginated (TestLargestAcceptedCaseRenders). A Case carries only what
// is printed (a project's description is not); it is built and rendered in
// the same activity, never passed through a workflow's history
// (TestLargestAcceptedCaseExports).
const (
	maxTextRunes = 2_000_000
	maxRows      = 10_000
)

// InvalidInputError is every validation failure, so callers can tell bad
// input (a failed export with a clear message) from an internal error.
// Reason says what is wrong, for a person.
type InvalidInputError struct {
	Reason string
}

func (e *InvalidInputError) Error() string { return "render: invalid input: " + e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidInputError{Reason: fmt.Sprintf(format, args...)}
}

var (
	influenceLevels = []string{"low", "medium", "high", "critical"}
	interestLevels  = []string{"low", "medium", "high"}
	sentiments      = []string{"", "positive", "neutral", "cautious", "negative"}
)

// Validate reports the first problem that would make a broken or misleading
// document: unknown template or levels, invalid UTF-8, a payback month
// outside the series, oversized input.
func (c *Case) Validate() error {
	if c == nil {
		return invalid("no case")
	}
	if c.Name == "" {
		return invalid("case name is empty")
	}
	switch c.Template {
	case ExecutiveSummary, CFOView, TechnicalDeepDive, BoardPresentation:
	default:
		return invalid("unknown template %q", c.Template)
	}
	if c.BaseCurrency == "" {
		return invalid("base currency is empty")
	}
	if n := len(c.Benefits) + len(c.Periods) + len(c.CashFlow.Months) + len(c.Costs) +
		len(c.Stakeholders) + len(c.Projects) + len(c.Calculations) + len(c.Sections); n > maxRows {
		return invalid("%d rows in total, more than %d", n, maxRows)
	}
	if p := c.CashFlow.PaybackMonth; p != nil && (*p < 0 || *p >= len(c.CashFlow.Months)) {
		return invalid("payback month %d outside the %d-month cash flow", *p, len(c.CashFlow.Months))
	}
	for i, s := range c.Stakeholders {
		if !slices.Contains(influenceLevels, s.Influence) {
			return invalid("stakeholder %d: unknown influence %q", i+1, s.Influence)
		}
		if !slices.Contains(interestLevels, s.Interest) {
			return invalid("stakeholder %d: unknown interest %q", i+1, s.Interest)
		}
		if !slices.Contains(sentiments, s.Sentiment) {
			return invalid("stakeholder %d: unknown sentiment %q", i+1, s.Sentiment)
		}
		switch s.Quadrant {
		case "", ManageClosely, KeepSatisfied, KeepInformed, Monitor:
		default:
			return invalid("stakeholder %d: unknown quadrant %q", i+1, s.Quadrant)
		}
	}
	total := 0
	for _, s := range c.texts() {
		if !utf8.ValidString(s) {
			return invalid("text is not valid UTF-8: %q", s)
		}
		total += utf8.RuneCountInString(s)
	}
	if total > maxTextRunes {
		return invalid("%d characters of text, more than %d", total, maxTextRunes)
	}
	return nil
}

// Validate checks the options.
func (o Options) Validate() error {
	if !utf8.ValidString(o.Watermark) || !utf8.ValidString(o.Author) {
		return invalid("watermark or author is not valid UTF-8")
	}
	if n := utf8.RuneCountInString(o.Watermark); n > MaxWatermarkRunes {
		return invalid("watermark has %d characters, at most %d", n, MaxWatermarkRunes)
	}
	return nil
}

// texts lists every free text of the case, for the UTF-8 and size checks.
func (c *Case) texts() []string {
	out := []string{c.Name, c.InitiativeName, c.Status, c.BaseCurrency, c.ContentHash,
		c.Figures.ROIPercent.Reason, c.Figures.NPV.Reason, c.Figures.IRR.Reason,
		c.Figures.PaybackMonths.Reason, c.Figures.MIRR.Reason, c.Sensitivity.Assumptions, c.BenefitsPeriod,
		c.Sensitivity.BestROIPercent.Reason, c.Sensitivity.ExpectedROIPercent.Reason,
		c.Sensitivity.WorstROIPercent.Reason}
	if f := c.Figures.Forecast; f != nil {
		out = append(out, f.ROIPercent.Reason, f.NPV.Reason, f.IRR.Reason, f.MIRR.Reason, f.PaybackMonths.Reason)
	}
	if a := c.Approval; a != nil {
		out = append(out, a.Level, a.By, a.Notes)
	}
	if d := c.Decision; d != nil {
		out = append(out, d.Ask, d.Currency, d.Recommendation)
	}
	for _, s := range c.Sections {
		out = append(out, s.ID, s.Title, s.Body)
	}
	for _, b := range c.Benefits {
		out = append(out, b.Name, b.Category)
	}
	for _, p := range c.Periods {
		out = append(out, p.Label)
	}
	for _, m := range c.CashFlow.Months {
		out = append(out, m.Label)
	}
	for _, x := range c.Costs {
		out = append(out, x.Name, x.Category, x.Timing)
	}
	for _, s := range c.Stakeholders {
		out = append(out, s.Name, s.Role)
	}
	for _, p := range c.Projects {
		out = append(out, p.Name, p.Owner, p.Status)
	}
	for _, k := range c.Calculations {
		out = append(out, k.Name, k.Formula, k.Result)
		for _, in := range k.Inputs {
			out = append(out, in.Name, in.Value)
		}
	}
	return out
}
