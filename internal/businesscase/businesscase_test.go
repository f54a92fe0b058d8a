package businesscase

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/db/dbsqlc"
	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/settings"
	"github.com/valuecase/valuecase/internal/validation"
	"github.com/valuecase/valuecase/internal/valuation"
)

func TestTransitions(t *testing.T) {
	blocked := []Problem{{Code: ProblemNoCosts}}
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"submit draft", CheckSubmit(Draft), nil},
		{"submit rejected", CheckSubmit(Rejected), nil},
		{"submit pending", CheckSubmit(PendingApproval), ErrAlreadyPending},
		{"submit approved", CheckSubmit(Approved), ErrAlreadyApproved},
		{"approve draft", CheckApprove(Draft, nil), nil},
		{"approve pending", CheckApprove(PendingApproval, nil), nil},
		{"approve rejected", CheckApprove(Rejected, nil), nil},
		{"approve approved", CheckApprove(Approved, nil), ErrAlreadyApproved},
		{"approve approved with problems", CheckApprove(Approved, blocked), ErrAlreadyApproved},
		{"reject pending", CheckReject(PendingApproval), nil},
		{"reject draft", CheckReject(Draft), ErrNotPending},
		{"reject rejected", CheckReject(Rejected), ErrNotPending},
		{"reject approved", CheckReject(Approved), ErrAlreadyApproved},
		{"edit draft", CheckEditable(Draft), nil},
		{"edit pending", CheckEditable(PendingApproval), nil},
		{"edit rejected", CheckEditable(Rejected), nil},
		{"edit approved", CheckEditable(Approved), ErrLocked},
		{"limit 49", CheckCanAdd(49), nil},
		{"limit 50", CheckCanAdd(50), ErrLimitReached},
		{"archived", CheckInitiativeWritable(true), ErrInitiativeArchived},
	} {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	err := CheckApprove(Draft, []Problem{{Code: ProblemNoCosts, Message: "no costs"}, {Code: ProblemNoBenefits, Message: "no benefits"}})
	be, ok := errors.AsType[*BlockedError](err)
	if !ok || len(be.Problems) != 2 || !strings.Contains(err.Error(), "no costs; no benefits") {
		t.Errorf("blocked approval: %v", err)
	}
}

func fieldCodes(err error) map[string]string {
	out := map[string]string{}
	if es, ok := errors.AsType[validation.Errors](err); ok {
		for _, e := range es {
			out[e.Field] = e.Code
		}
	}
	return out
}

func TestCheckDefinition(t *testing.T) {
	good := Definition{Name: "Case", Template: CFOView, Sections: []Section{ExecutiveSummary, FinancialAnalysis}, Content: Content{ExecutiveSummary: {Title: "Summary", Body: "Line 1\nLine 2"}}}
	if err := CheckDefinition(good); err != nil {
		t.Fatalf("good: %v", err)
	}
	for _, c := range []struct {
		name        string
		mod         func(*Definition)
		field, code string
	}{
		{"blank name", func(d *Definition) { d.Name = "  " }, "name", "required"},
		{"long name", func(d *Definition) { d.Name = strings.Repeat("é", 201) }, "name", "too_long"},
		{"template", func(d *Definition) { d.Template = "memo" }, "template", "invalid_value"},
		{"no template", func(d *Definition) { d.Template = "" }, "template", "required"},
		{"no sections", func(d *Definition) { d.Sections = nil }, "sections", "required"},
		{"unknown section", func(d *Definition) { d.Sections = append(d.Sections, "appendix") }, "sections[2]", "invalid_value"},
		{"duplicate section", func(d *Definition) { d.Sections = append(d.Sections, ExecutiveSummary) }, "sections[2]", "duplicate"},
		{"content of unlisted section", func(d *Definition) { d.Content = Content{RiskAssessment: {Body: "x"}} }, "content.risk_assessment", "not_allowed"},
		{"content of unknown section", func(d *Definition) { d.Content = Content{"appendix": {Body: "x"}} }, "content.appendix", "invalid_value"},
		{"long title", func(d *Definition) { d.Content = Content{ExecutiveSummary: {Title: strings.Repeat("t", 201)}} }, "content.executive_summary.title", "too_long"},
		{"title with a line break", func(d *Definition) { d.Content = Content{ExecutiveSummary: {Title: "a\nb"}} }, "content.executive_summary.title", "invalid_characters"},
		{"long body", func(d *Definition) { d.Content = Content{ExecutiveSummary: {Body: strings.Repeat("b", 20001)}} }, "content.executive_summary.body", "too_long"},
		{"bidi override in body", func(d *Definition) { d.Content = Content{ExecutiveSummary: {Body: "a\u202eb"}} }, "content.executive_summary.body", "invalid_characters"},
	} {
		d := good
		d.Sections = append([]Section{}, good.Sections...)
		c.mod(&d)
		if got := fieldCodes(CheckDefinition(d)); got[c.field] != c.code {
			t.Errorf("%s: errors %v, want %s=%s", c.name, got, c.field, c.code)
		}
	}
}

func TestCheckDecision(t *testing.T) {
	if l, err := CheckDecision(new("board"), nil, true); err != nil || *l != Board {
		t.Errorf("approve as board: %v %v", l, err)
	}
	for _, c := range []struct {
		name        string
		level       *string
		notes       *string
		approving   bool
		field, code string
	}{
		{"approve without level", nil, nil, true, "approval_level", "required"},
		{"unknown level", new("ceo"), nil, true, "approval_level", "invalid_value"},
		{"reject without notes", nil, nil, false, "notes", "required"},
		{"reject with blank notes", nil, new(" "), false, "notes", "required"},
		{"long notes", new("manager"), new(strings.Repeat("n", 2001)), true, "notes", "too_long"},
	} {
		_, err := CheckDecision(c.level, c.notes, c.approving)
		if got := fieldCodes(err); got[c.field] != c.code {
			t.Errorf("%s: %v, want %s=%s", c.name, got, c.field, c.code)
		}
	}
}

func TestValidate(t *testing.T) {
	full := Definition{Name: "Case", Template: BoardPresentation, Sections: []Section{ExecutiveSummary, FinancialAnalysis, RiskAssessment, ImplementationRoadmap},
		Content: Content{ExecutiveSummary: {Body: "s"}, FinancialAnalysis: {Body: "f"}, RiskAssessment: {Body: "r"}, ImplementationRoadmap: {Body: "i"}}}
	ok := Facts{Benefits: 1, Costs: 1}
	codes := func(ps []Problem) string {
		var out []string
		for _, p := range ps {
			s := p.Code
			if p.Section != nil {
				s += ":" + string(*p.Section)
			}
			out = append(out, s)
		}
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		name string
		d    Definition
		f    Facts
		want string
	}{
		{"complete", full, ok, ""},
		{"archived", full, Facts{InitiativeArchived: true, Benefits: 1, Costs: 1}, "initiative_archived"},
		{"no benefits, no costs", full, Facts{}, "no_benefits:financial_analysis,no_costs:financial_analysis"},
		{"missing fx", full, Facts{Benefits: 1, Costs: 1, MissingFXRates: []finance.MissingRate{{Currency: "EUR", Period: finance.MonthOf(2026, 1)}}}, "missing_fx_rates:financial_analysis"},
		{"missing sections and empty text", Definition{Template: BoardPresentation, Sections: []Section{ExecutiveSummary, Assumptions}, Content: Content{ExecutiveSummary: {Title: "only a title"}}}, Facts{},
			"missing_section:financial_analysis,missing_section:risk_assessment,missing_section:implementation_roadmap,empty_content:executive_summary,empty_content:assumptions"},
		{"executive summary template needs two", Definition{Template: ExecutiveSummaryTemplate, Sections: []Section{ExecutiveSummary}, Content: Content{ExecutiveSummary: {Body: "x"}}}, Facts{}, "missing_section:financial_analysis"},
	} {
		if got := codes(Validate(c.d, c.f)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if got := Validate(full, ok); got == nil || len(got) != 0 {
		t.Errorf("no problems is an empty list, not nil: %#v", got)
	}
}

// TestFigures freezes the initiative's figures: 1,000/month benefits over
// 2026, one 6,000 cost in 2026-01, in USD at 0 % discount.
func TestFigures(t *testing.T) {
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	b := dbsqlc.Benefit{ID: uuid.New(), Unit: "currency", Currency: new("USD"), Status: "on_track", ExpectedValue: decimal.NewFromFloat(12000), MeasurementFrequency: "monthly", ExpectedStartDate: jan, ExpectedEndDate: &end}
	rows := valuation.Rows{
		Settings: settings.Settings{BaseCurrency: "USD", DiscountRate: 0, FiscalYearStartMonth: 1},
		Benefits: []dbsqlc.Benefit{b},
		Costs:    []dbsqlc.InitiativeCost{{Amount: decimal.NewFromFloat(6000), Currency: "USD", Recurrence: "once", Period: jan}},
	}
	now := time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC)
	s, f, err := Figures(rows, now, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.Benefits != 1 || f.Costs != 1 || len(f.MissingFXRates) != 0 || f.InitiativeArchived {
		t.Errorf("facts %+v", f)
	}
	if s.TotalCosts != 6000 || s.TotalBenefits <= 0 || s.NPV != s.TotalBenefits-s.TotalCosts || s.ROIPercent == nil || s.PaybackMonths == nil || s.HorizonStart == nil || *s.HorizonStart != "2026-01" {
		t.Errorf("snapshot %+v", s)
	}
	if s.BaseCurrency != "USD" || !s.AsOf.Equal(now) || s.CostsCount != 1 || s.BenefitsCount != 1 {
		t.Errorf("snapshot context %+v", s)
	}
	// Nothing to compute: no horizon, reasons instead of values.
	s, f, err = Figures(valuation.Rows{Settings: settings.Defaults}, now, true)
	if err != nil || s.HorizonStart != nil || s.IRR != nil || s.IRRReason == nil || *s.IRRReason != "no_costs" || !f.InitiativeArchived || f.Benefits != 0 {
		t.Errorf("empty: %+v %+v %v", s, f, err)
	}
}

// TestFiguresBothBases: the snapshot carries the plan figures at the top
// and the forecast ones (actuals to date, then plan) in Forecast, under the
// current definitions. 1,000 a month over 2026 against 6,000 in 2026-01 at
// 0 %: plan ROI (12,000 − 6,000) / 6,000 = 100 %, payback 6 months (C = −5,000
// … −1,000, 0 after month 6); with actuals of 500 in 2026-01..03 the
// forecast has 10,500 of benefits: ROI 75 %, C after month 7 = −6,000 +
// 1,500 + 4 × 1,000 = −500, payback 7 + 500 / 1,000 = 7.5.
func TestFiguresBothBases(t *testing.T) {
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	b := dbsqlc.Benefit{ID: uuid.New(), Unit: "currency", Currency: new("USD"), Status: "on_track", ExpectedValue: decimal.NewFromInt(12000), MeasurementFrequency: "monthly", ExpectedStartDate: jan, ExpectedEndDate: &end}
	rows := valuation.Rows{
		Settings: settings.Settings{BaseCurrency: "USD", DiscountRate: 0, FiscalYearStartMonth: 1},
		Benefits: []dbsqlc.Benefit{b},
		Costs:    []dbsqlc.InitiativeCost{{Amount: decimal.NewFromInt(6000), Currency: "USD", Recurrence: "once", Period: jan}},
	}
	for m := range 3 {
		rows.Actuals = append(rows.Actuals, dbsqlc.BenefitActual{BenefitID: b.ID, Period: jan.AddDate(0, m, 0), Value: decimal.NewFromInt(500)})
	}
	s, _, err := Figures(rows, time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC), false)
	if err != nil {
		t.Fatal(err)
	}
	if s.DefinitionsVersion != finance.DefinitionsVersion || s.Basis != "plan" || s.Forecast == nil || s.Forecast.Basis != "forecast" {
		t.Fatalf("snapshot %+v", s)
	}
	if *s.ROIPercent != 100 || *s.PaybackMonths != 6 || s.Forecast.TotalBenefits != 10500 || *s.Forecast.ROIPercent != 75 || *s.Forecast.PaybackMonths != 7.5 {
		t.Errorf("plan ROI %v payback %v; forecast %+v", *s.ROIPercent, *s.PaybackMonths, *s.Forecast)
	}
	if s.MIRR == nil || s.Forecast.MIRR == nil || *s.Forecast.MIRR >= *s.MIRR || len(s.IRRRoots) != 1 {
		t.Errorf("MIRR plan %v forecast %v, roots %v", s.MIRR, s.Forecast.MIRR, s.IRRRoots)
	}
}

// TestReadSnapshotOfVersion1: a snapshot stored before definition versions
// were recorded reads as version 1, its figures as stored, no forecast.
func TestReadSnapshotOfVersion1(t *testing.T) {
	s, err := ReadSnapshot([]byte(`{"as_of":"2025-01-31T00:00:00Z","base_currency":"EUR","npv":10,"payback_months":0,"irr":0.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.DefinitionsVersion != 1 || s.Basis != "plan" || s.Forecast != nil || s.MIRR != nil || *s.PaybackMonths != 0 || *s.IRR != 0.5 || s.IRRRoots == nil {
		t.Errorf("%+v", s)
	}
	if s, _ := ReadSnapshot([]byte(`{"definitions_version":2,"basis":"plan"}`)); s.DefinitionsVersion != 2 {
		t.Errorf("version 2 read as %d", s.DefinitionsVersion)
	}
}
