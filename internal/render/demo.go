package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// DemoCase is a fixed, realistic case (sample documents, tests, the later
// API's demo data): a finance-platform rollout in Zürich with a shared-
// service hub in Łódź, 36 months from January 2027, data as of 30 Jun 2028.
//
// Its figures are consistent with its cash flows, computed independently:
//
//	monthly cash flow t = 1..36: benefits 0 (t ≤ 6), 90,000 (7..12),
//	160,000 (13..36); costs 20,000 run + 150,000 implementation (t ≤ 6)
//	+ 40,000 training (4..7). Totals: benefits 4,380,000, costs 1,780,000.
//	ROI  = (4,380,000 − 1,780,000) ÷ 1,780,000 = 146.07 %            (by hand)
//	NPV  = LibreOffice Calc NPV((1.08)^(1/12) − 1; net flows) = 2,117,586.90
//	IRR  = (1 + Calc IRR(net flows))^12 − 1 = 1.0711026^12 − 1 = 128.04 %
//	payback: cumulative −60,000 after month 17, +80,000 after 18;
//	         17 + 60,000 ÷ 140,000 = 17.43 months                      (by hand)
//	sensitivity (benefits ±20 %, costs ∓10 %), by hand:
//	  best  (5,256,000 − 1,602,000) ÷ 1,602,000 = 228.09 %
//	  worst (3,504,000 − 1,958,000) ÷ 1,958,000 = 78.96 %
//
// (The Calc sheet: a flat ODS with the 36 net flows in B1:B36 and the
// formulas above, converted to CSV with soffice --headless.)
func DemoCase() *Case {
	start := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &Case{
		Name:           "Zürich rollout",
		InitiativeName: "Finance shared services Łódź–Zürich",
		Version:        3,
		Status:         "approved",
		Approval: &Approval{
			Level: "executive",
			By:    "Jürg Meier, CFO",
			At:    time.Date(2028, 7, 14, 9, 30, 0, 0, time.UTC),
			Notes: "Approved subject to the Zürich decommissioning milestone being re-baselined by Q3 2028.",
		},
		Template:     CFOView,
		BaseCurrency: "CHF",
		Figures: KeyFigures{
			ROIPercent:    Figure{Value: new(146.07)},
			NPV:           Figure{Value: new(2117586.90)},
			IRR:           Figure{Value: new(1.2804)},
			PaybackMonths: Figure{Value: new(17.43)},
			DiscountRate:  new(0.08),
			HorizonMonths: 36,
		},
		Sensitivity: Sensitivity{
			BestROIPercent:     Figure{Value: new(228.09)},
			ExpectedROIPercent: Figure{Value: new(146.07)},
			WorstROIPercent:    Figure{Value: new(78.96)},
			Assumptions:        "Best case: benefits +20 %, costs −10 %. Worst case: benefits −20 %, costs +10 %.",
		},
		BenefitsPeriod: "to 30 Jun 2028",
		DataAsOf:       time.Date(2028, 6, 30, 18, 0, 0, 0, time.UTC),
		ContentHash:    "sha256:7c1e0f4b9a2d5e8c3f6a1b4d7e0c2f5a8b1d4e7c0f3a6b9d2e5c8f1a4b7d0e3c",
	}

	// Monthly cash flow (see the comment above).
	cum := 0.0
	for m := 1; m <= 36; m++ {
		cost := 20000.0
		if m <= 6 {
			cost += 150000
		}
		if m >= 4 && m <= 7 {
			cost += 40000
		}
		ben := 0.0
		switch {
		case m >= 13:
			ben = 160000
		case m >= 7:
			ben = 90000
		}
		cum += ben - cost
		c.CashFlow.Months = append(c.CashFlow.Months, CashFlowMonth{
			Label: FormatMonth(start.AddDate(0, m-1, 0)), Benefits: ben, Costs: cost,
			Net: ben - cost, Cumulative: cum,
		})
		if cum < 0 { // the payback month follows the last negative cumulative value
			c.CashFlow.PaybackMonth = new(m)
		}
	}

	// Quarterly benefits; measured through Q2 2028 (sums match the table).
	expected := []float64{0, 0, 270000, 270000, 480000, 480000, 480000, 480000, 480000, 480000, 480000, 480000}
	actual := []float64{0, 0, 251400, 262800, 421700, 422500}
	for i, e := range expected {
		pv := PeriodValue{Label: fmt.Sprintf("Q%d %d", i%4+1, 2027+i/4), Expected: e}
		if i < len(actual) {
			pv.Actual = new(actual[i])
		}
		c.Periods = append(c.Periods, pv)
	}

	benefit := func(name, cat string, exp float64, act *float64) Benefit {
		if act == nil { // not measured yet: its expectation is shown apart
			return Benefit{Name: name, Category: cat, Unmeasured: exp}
		}
		b := Benefit{Name: name, Category: cat, Expected: exp, Actual: act}
		b.Variance = new(*act - exp)
		b.VariancePercent = new((*act - exp) / exp * 100)
		return b
	}
	c.Benefits = []Benefit{
		benefit("Invoice processing automation", "Cost reduction", 420000, new(451200.0)),
		benefit("Shared-service consolidation in Łódź", "Cost reduction", 380000, new(334500.0)),
		benefit("Faster month-end close", "Productivity", 210000, new(198300.0)),
		benefit("Working-capital release", "Cash", 180000, new(205000.0)),
		benefit("Supplier early-payment discounts", "Cost reduction", 120000, new(98400.0)),
		benefit("Fewer audit findings", "Risk", 95000, new(71000.0)),
		benefit("Zürich legacy system decommissioning", "Cost reduction", 95000, nil),
	}
	c.Costs = []Cost{
		{"Platform implementation", "Implementation", "one-off, Jan–Jun 2027", 900000},
		{"Cloud licences and run costs", "Operations", "monthly, 36 months", 720000},
		{"Training and change management", "People", "Apr–Jul 2027", 160000},
	}
	c.Stakeholders = []Stakeholder{
		{"Jürg Meier", "Chief Financial Officer", "critical", "high", "", "positive"},
		{"Agnieszka Wróbel", "Site lead, Łódź hub", "high", "high", "", "positive"},
		{"Zoë Dubois", "Head of Procurement", "high", "medium", "", "cautious"},
		{"Paweł Łukasiewicz", "IT Infrastructure Lead", "medium", "high", "", "neutral"},
		{"Søren Kjær", "Group Controller", "high", "high", "", "neutral"},
		{"Renée Côté", "Works council representative", "high", "low", "", "negative"},
		{"Małgorzata Ząbek", "AP team lead, Łódź", "low", "high", "", "positive"},
		{"Björn Ångström", "External auditor", "medium", "medium", "", "neutral"},
		{"Dmitrij Šimko", "Treasury analyst", "low", "medium", "", ""},
		{"Ingrid Østergaard", "Regional CFO, Nordics", "high", "medium", "", "positive"},
		{"François Lefèvre", "Head of Shared Services, Zürich", "medium", "high", "", "cautious"},
		{"Ana Čapek", "Payroll specialist", "low", "low", "", ""},
	}
	for i := range c.Stakeholders {
		s := &c.Stakeholders[i]
		s.Quadrant = QuadrantOf(s.Influence, s.Interest)
	}
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	c.Projects = []Project{
		{"Landing zone and ERP integration", "Paweł Łukasiewicz", "completed", day(2027, 1, 4), day(2027, 3, 31), new(250000.0)},
		{"Invoice automation, wave 1", "Małgorzata Ząbek", "completed", day(2027, 2, 1), day(2027, 6, 30), new(200000.0)},
		{"Łódź hub ramp-up", "Agnieszka Wróbel", "completed", day(2027, 4, 1), day(2027, 12, 31), new(180000.0)},
		{"Month-end close redesign", "Søren Kjær", "in_progress", day(2027, 9, 1), day(2028, 6, 30), new(150000.0)},
		{"Zürich legacy decommissioning", "François Lefèvre", "at_risk", day(2028, 3, 1), day(2028, 9, 30), new(130000.0)},
		{"Supplier portal", "Zoë Dubois", "planned", day(2028, 7, 1), day(2029, 3, 31), new(150000.0)},
	}
	c.Sections = []Section{
		{SectionExecutiveSummary, "Executive summary", "The Zürich rollout moves transactional finance for the Swiss entities onto the group platform and into the shared-service hub in Łódź. Over 36 months it returns CHF 4.38 million of benefits for CHF 1.78 million of costs: an ROI of 146.1 % and a net present value of CHF 2.12 million at 8 %.\n\nEighteen months in, the case is on track: measured benefits are 3.3 % below plan, driven by a slower consolidation in Łódź, while invoice automation and working-capital release run ahead. Payback is reached in June 2028 as planned.\n\nWe ask the committee to confirm version 3 and the re-baselined decommissioning milestone."},
		{SectionFinancialAnalysis, "Financial analysis", "All figures are in Swiss francs over a 36-month horizon from January 2027, discounted monthly at an annual 8 %. Costs are front-loaded: CHF 900,000 of implementation in the first six months and CHF 160,000 of training. Benefits start in month 7 and reach their full run-rate of CHF 160,000 a month from month 13.\n\nThe cumulative cash flow turns positive in month 18 (June 2028); the interpolated payback is 17.4 months."},
		{SectionBenefitsPlan, "Benefits plan", "Seven benefits are tracked, six of them measured so far. Each has an owner, a baseline and a monthly measurement from the ledger.\n- Invoice automation runs 7.4 % ahead of plan.\n- Consolidation in Łódź is 12.0 % behind plan after a late second hiring wave.\n- Decommissioning savings start only when the Zürich ledger is switched off."},
		{SectionRiskAssessment, "Risk assessment", "The main risk is the Zürich decommissioning milestone: each quarter of delay keeps CHF 95,000 of run costs and postpones the last benefit. The works council has raised concerns about role changes; a social plan is agreed for affected staff.\n\nEven the worst case (benefits 20 % lower, costs 10 % higher) keeps an ROI of 79.0 %."},
		{SectionImplementationRoadmap, "Implementation roadmap", "Three of six projects are complete. The month-end close redesign finishes in June 2028; the decommissioning is at risk and is being re-planned; the supplier portal starts in July 2028."},
		{SectionStakeholderMap, "Stakeholders", "Twelve stakeholders are mapped. Sponsorship at group level is strong; the works council and procurement need closer engagement before the supplier-portal phase."},
		{SectionAssumptions, "Assumptions", "- Discount rate 8 % a year (group hurdle rate).\n- Benefits are counted from the month the process moves, at the run-rate measured in the ledger.\n- Exchange rates are fixed at plan rates (EUR/CHF 0.95, PLN/CHF 0.22)."},
	}
	c.Figures.DefinitionsVersion = finance.DefinitionsVersion
	c.Figures.MIRR, c.Figures.Forecast = demoMIRRAndForecast(c)
	c.Calculations = []Calculation{
		{"Return on investment", "ROI = (total benefits − total costs) ÷ total costs × 100",
			[]CalcInput{{"Total benefits, 36 months", FormatMoney(4380000, "CHF")}, {"Total costs, 36 months", FormatMoney(1780000, "CHF")}},
			FormatPercent(146.07)},
		{"Net present value", "NPV = Σ CFₜ ÷ (1 + r)^(t/12), t = 1 … 36",
			[]CalcInput{{"Discount rate r", FormatPercent(8)}, {"Monthly net cash flows CFₜ", "the monthly cash-flow table"}, {"Sum of undiscounted flows", FormatMoney(2600000, "CHF")}},
			FormatMoney(2117586.90, "CHF")},
		{"Internal rate of return", "IRR: the annual rate r at which NPV = 0; monthly rate m solves Σ CFₜ ÷ (1 + m)^t = 0, r = (1 + m)^12 − 1",
			[]CalcInput{{"Monthly rate m", FormatPercent(7.111)}, {"Monthly net cash flows CFₜ", "the monthly cash-flow table"}},
			FormatPercent(128.04)},
		{"Payback", "Payback = the last month the cumulative cash flow is negative + the missing amount ÷ the next month's net flow",
			[]CalcInput{{"Cumulative cash flow after month 17", FormatMoney(-60000, "CHF")}, {"Net cash flow in month 18", FormatMoney(140000, "CHF")}},
			FormatMonths(17.43)},
		{"Benefit variance", "Variance = actual − expected; variance % = variance ÷ expected × 100, per benefit to date",
			[]CalcInput{{"Expected to date (measured benefits)", FormatMoney(1405000, "CHF")}, {"Actual to date", FormatMoney(1358400, "CHF")}},
			FormatMoney(-46600, "CHF") + " (" + FormatPercent(-3.32) + ")"},
	}
	return c
}

// demoMIRRAndForecast computes, with internal/finance, the demo's MIRR
// (plan) and its forecast figures: the plan series with each measured
// quarter's benefits scaled to its actual (actuals to date, then plan).
func demoMIRRAndForecast(c *Case) (Figure, *BasisFigures) {
	fig := func(r finance.Result) Figure {
		if v, ok := r.Get(); ok {
			return Figure{Value: &v}
		}
		return Figure{Reason: string(r.Reason)}
	}
	plan, forecast := finance.CashFlows{Start: finance.MonthOf(2027, 1)}, finance.CashFlows{Start: finance.MonthOf(2027, 1)}
	for i, m := range c.CashFlow.Months {
		benefits, costs := decimal.NewFromFloat(m.Benefits), decimal.NewFromFloat(m.Costs)
		plan.Benefits, plan.Costs = append(plan.Benefits, benefits), append(plan.Costs, costs)
		b := m.Benefits
		if q := c.Periods[i/3]; q.Actual != nil && q.Expected != 0 {
			b *= *q.Actual / q.Expected
		}
		forecast.Benefits, forecast.Costs = append(forecast.Benefits, decimal.NewFromFloat(b)), append(forecast.Costs, costs)
	}
	rate := *c.Figures.DiscountRate
	p, f := finance.Evaluate(plan, rate), finance.Evaluate(forecast, rate)
	return fig(p.MIRR), &BasisFigures{
		ROIPercent: fig(f.ROIPercent), NPV: Figure{Value: &f.NPV}, IRR: fig(f.IRR), MIRR: fig(f.MIRR), PaybackMonths: fig(f.PaybackMonths),
	}
}

// SyntheticCase is the demo case grown to the export benchmark's size:
// benefits × periods of actuals, that many stakeholders, every
// section filled with several paragraphs and an appendix entry per benefit.
func SyntheticCase(benefits, periods, stakeholders int) *Case {
	c := DemoCase()
	c.Name = "Zürich rollout (large)"
	base := c.Benefits
	c.Benefits = nil
	cats := []string{"Cost reduction", "Productivity", "Cash", "Risk", "Revenue"}
	for i := range benefits {
		exp := float64(50000 + (i*7919)%400000)
		b := Benefit{Name: fmt.Sprintf("%s – stream %d", base[i%len(base)].Name, i+1), Category: cats[i%len(cats)], Expected: exp}
		if i%9 != 8 { // every ninth not measured yet
			act := exp * (0.8 + float64((i*37)%41)/100)
			b.Actual, b.Variance, b.VariancePercent = new(act), new(act-exp), new((act-exp)/exp*100)
		} else {
			b.Expected, b.Unmeasured = 0, exp
		}
		c.Benefits = append(c.Benefits, b)
		c.Calculations = append(c.Calculations, Calculation{
			Name:    "Variance: " + b.Name,
			Formula: "Variance = actual − expected; variance % = variance ÷ expected × 100",
			Inputs:  []CalcInput{{"Expected", FormatMoney(b.Expected, "CHF")}, {"Actual", optMoney(b.Actual, "CHF")}},
			Result:  optMoney(b.Variance, "CHF"),
		})
	}
	c.Periods = nil
	for i := range periods {
		exp := 400000 + float64(i)*12000
		pv := PeriodValue{Label: FormatMonth(time.Date(2027, time.Month(1+i), 1, 0, 0, 0, 0, time.UTC)), Expected: exp}
		pv.Actual = new(exp * (0.9 + float64(i%7)/30))
		c.Periods = append(c.Periods, pv)
	}
	first := []string{"Jürg", "Agnieszka", "Zoë", "Paweł", "Søren", "Renée", "Małgorzata", "Björn", "Dmitrij", "Ingrid", "François", "Ana"}
	last := []string{"Meier", "Wróbel", "Dubois", "Łukasiewicz", "Kjær", "Côté", "Ząbek", "Ångström", "Šimko", "Østergaard", "Lefèvre", "Čapek", "Nowak", "Keller"}
	c.Stakeholders = nil
	for i := range stakeholders {
		s := Stakeholder{
			Name:      fmt.Sprintf("%s %s %d", first[i%len(first)], last[(i/len(first))%len(last)], i+1),
			Role:      []string{"Finance manager", "Process owner", "IT lead", "Controller", "Works council", "Auditor"}[i%6],
			Influence: influenceLevels[i%4],
			Interest:  interestLevels[(i/4)%3],
			Sentiment: sentiments[i%5],
		}
		s.Quadrant = QuadrantOf(s.Influence, s.Interest)
		c.Stakeholders = append(c.Stakeholders, s)
	}
	for i := range c.Sections {
		s := &c.Sections[i]
		s.Body = strings.Repeat(s.Body+"\n\n", 3) + "This section is repeated to the size of a full board paper."
	}
	return c
}

func optMoney(v *float64, currency string) string {
	if v == nil {
		return "not measured yet"
	}
	return FormatMoney(*v, currency)
}
