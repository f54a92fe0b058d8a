package businesscase_test

import (
	"fmt"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/businesscase"
	"github.com/valuecase/valuecase/internal/finance"
)

// TestAttributeGolden walks a case through every cause and checks each
// step against numbers worked by hand.
//
// Method. Months are m0..m3 (2026-01..04). against: annual rate 0; cost C
// 1200 in m0; benefit A 300 in each of m0..m3; benefit B 100 in m0, m1.
// case: annual rate 1.01^12 − 1 (so the monthly rate is exactly 1 %); cost C
// 1500 in m0; A 400 in each of m0..m3; B gone; D (new) 200 in m1, m2.
// ROI = (ΣB − ΣC) ÷ ΣC × 100; NPV = Σ netₜ ÷ 1.01^t (t = 0 for m0; rate 0:
// the plain sum); payback = (k − 1) + (−Cₖ₋₁ ÷ CFₖ) for the first k with
// cumulative Cₖ ≥ 0. Each step's net flow and figures:
//
//	against       net −800, 400, 300, 300   ROI 200/1200 = 16.67   NPV 200.00     payback 3 + 100/300 = 3.33
//	1 rate 1 %    same net                  ROI 16.67              NPV −800 + 400/1.01 + 300/1.01² + 300/1.01³ = 181.31   payback 3.33
//	2 costs 1500  net −1100, 400, 300, 300  ROI −100/1500 = −6.67  NPV 181.31 − 300 = −118.69   payback never (cum −100 at m3)
//	3 − B         net −1200, 300, 300, 300  ROI −300/1500 = −20.00 NPV −1200 + 300 (1/1.01 + 1/1.01² + 1/1.01³) = −317.70   never
//	4 + D         net −1200, 500, 500, 300  ROI 100/1500 = 6.67    NPV −317.70 + 200/1.01 + 200/1.01² = 76.37   payback 3 + 200/300 = 3.67
//	5 A changed   net −1100, 600, 600, 400  ROI 500/1500 = 33.33   NPV 76.37 + 100 (1 + 1/1.01 + 1/1.01² + 1/1.01³) = 470.47   payback 2 + 500/600 = 2.83
//
// (NPVs unrounded, by a calculator: 181.3055, −118.6945, −317.7044,
// 76.3746, 470.4731.) Changes: ROI 0, −23.34, −13.33, +26.67, +26.66 (sum
// 16.66 = 33.33 − 16.67); NPV −18.69, −300.00, −199.01, +394.07, +394.10
// (sum 270.47 = 470.47 − 200.00); payback 0, then null (no value on one
// side) for steps 2..5.
func TestAttributeGolden(t *testing.T) {
	m0 := finance.MonthOf(2026, 1)
	against := businesscase.Inputs{BaseCurrency: "CHF", DiscountRate: 0,
		Costs: []businesscase.Item{{ID: "c", Name: "C", Start: m0, Months: decs(1200)}},
		Benefits: []businesscase.Item{
			{ID: "a", Name: "A", Start: m0, Months: decs(300, 300, 300, 300)},
			{ID: "b", Name: "B", Start: m0, Months: decs(100, 100)},
		}}
	target := businesscase.Inputs{BaseCurrency: "CHF", DiscountRate: 0.12682503013196977,
		Costs: []businesscase.Item{{ID: "c", Name: "C", Start: m0, Months: decs(1500)}},
		Benefits: []businesscase.Item{
			{ID: "a", Name: "A", Start: m0, Months: decs(400, 400, 400, 400)},
			{ID: "d", Name: "D", Start: m0.Add(1), Months: decs(200, 200)},
		}}
	show := func(f businesscase.Figure) string {
		if f.Value == nil {
			return "null(" + *f.Reason + ")"
		}
		return fmt.Sprintf("%.2f", *f.Value)
	}
	showChange := func(v *float64) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprintf("%+.2f", *v)
	}
	if got := fmt.Sprintf("%s %s %s", show(businesscase.FiguresOf(against).ROIPercent), show(businesscase.FiguresOf(against).NPV), show(businesscase.FiguresOf(against).PaybackMonths)); got != "16.67 200.00 3.33" {
		t.Errorf("against: %s", got)
	}
	want := []string{
		"discount_rate - ROI 16.67 (+0.00) NPV 181.31 (-18.69) payback 3.33 (+0.00)",
		"costs - ROI -6.67 (-23.34) NPV -118.69 (-300.00) payback null(never_paid_back) (null)",
		"benefit_removed B ROI -20.00 (-13.33) NPV -317.70 (-199.01) payback null(never_paid_back) (null)",
		"benefit_added D ROI 6.67 (+26.67) NPV 76.37 (+394.07) payback 3.67 (null)",
		"benefit_changed A ROI 33.33 (+26.66) NPV 470.47 (+394.10) payback 2.83 (-0.84)",
	}
	steps := businesscase.Attribute(against, target)
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(steps), len(want))
	}
	var sumROI, sumNPV float64
	for i, s := range steps {
		name := "-"
		if s.BenefitName != nil {
			name = *s.BenefitName
		}
		got := fmt.Sprintf("%s %s ROI %s (%s) NPV %s (%s) payback %s (%s)", s.Cause, name, show(s.Figures.ROIPercent), showChange(s.Change.ROIPercent),
			show(s.Figures.NPV), showChange(s.Change.NPV), show(s.Figures.PaybackMonths), showChange(s.Change.PaybackMonths))
		if got != want[i] {
			t.Errorf("step %d:\n got %s\nwant %s", i+1, got, want[i])
		}
		sumROI += *s.Change.ROIPercent
		sumNPV += *s.Change.NPV
	}
	if fmt.Sprintf("%.2f %.2f", sumROI, sumNPV) != "16.66 270.47" {
		t.Errorf("the steps sum to ROI %.2f, NPV %.2f; want the total change 16.66, 270.47", sumROI, sumNPV)
	}
	total := businesscase.ChangeOf(businesscase.FiguresOf(against), businesscase.FiguresOf(target))
	if fmt.Sprintf("%.2f %.2f %.2f", *total.ROIPercent, *total.NPV, *total.PaybackMonths) != "16.66 270.47 -0.50" {
		t.Errorf("total change: %+v", total)
	}
	// Identical inputs: zero steps of change, no benefit steps.
	same := businesscase.Attribute(target, target)
	if len(same) != 2 || *same[0].Change.NPV != 0 || *same[1].Change.NPV != 0 {
		t.Errorf("a case against itself: %+v", same)
	}
}

func decs(vs ...float64) []decimal.Decimal {
	out := make([]decimal.Decimal, len(vs))
	for i, v := range vs {
		out[i] = decimal.NewFromFloat(v)
	}
	return out
}
