package finance

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

func TestBuildCashFlows(t *testing.T) {
	h := horizon(t, "2026-01", "2026-06")
	benefits := []Benefit{
		{ExpectedValue: d(1200), Frequency: MeasuredMonthly, Start: month(t, "2026-02"), Currency: "USD",
			Actuals: map[Month]decimal.Decimal{month(t, "2026-02"): d(70), month(t, "2026-04"): d(150)}},
		{ExpectedValue: d(2400), Frequency: MeasuredQuarterly, Start: month(t, "2026-01"), Currency: "USD",
			Actuals: map[Month]decimal.Decimal{month(t, "2026-01"): d(500)}},
	}
	costs := []Cost{
		{Amount: d(1000), Currency: "USD", Recurrence: Once, Period: month(t, "2026-01")},
		{Amount: d(20), Currency: "USD", Recurrence: Monthly, Period: month(t, "2026-03")},
	}

	expected, missing := BuildCashFlows(h, benefits, costs, BasisExpected, FX{})
	// Monthly 1200/12 = 100 from 02; quarterly 2400/4 = 600 in 01 and 04.
	wantBenefits := []float64{600, 100, 100, 700, 100, 100}
	wantCosts := []float64{1000, 0, 20, 20, 20, 20}
	if !decEqual(expected.Benefits, wantBenefits) || !decEqual(expected.Costs, wantCosts) || len(missing) != 0 {
		t.Errorf("expected basis: benefits %v costs %v missing %v\nwant benefits %v costs %v", expected.Benefits, expected.Costs, missing, wantBenefits, wantCosts)
	}
	if net := expected.Net(); !decEqual(net, []float64{-400, 100, 80, 680, 80, 80}) {
		t.Errorf("Net = %v", net)
	}
	if expected.Start != h.Start || expected.Horizon() != h {
		t.Errorf("horizon = %v", expected.Horizon())
	}

	// Last actual over both benefits: 2026-04. Up to it: 01 = 500 (quarterly
	// actual) + 0; 02 = 70; 03 = 100 (no actual: expected); 04 = 150 + 600
	// (the quarter from 04 has no actual: expected). After it: expected.
	actual, _ := BuildCashFlows(h, benefits, costs, BasisActual, FX{})
	if want := []float64{500, 70, 100, 750, 100, 100}; !decEqual(actual.Benefits, want) {
		t.Errorf("actual basis benefits = %v, want %v", actual.Benefits, want)
	}
	if !decEqual(actual.Costs, wantCosts) {
		t.Errorf("actual basis costs = %v, want them as scheduled", actual.Costs)
	}
	last, _ := LastActual(benefits)
	toDate := actual.Through(last)
	if want := []float64{500, 70, 100, 750}; !decEqual(toDate.Benefits, want) || len(toDate.Costs) != 4 {
		t.Errorf("Through(%v) = %v", last, toDate.Benefits)
	}
	if len(actual.Through(h.Start.Add(-1)).Benefits) != 0 || len(actual.Through(h.End.Add(5)).Benefits) != h.Len() {
		t.Error("Through outside the horizon")
	}

	noActuals := []Benefit{benefits[0], benefits[1]}
	noActuals[0].Actuals, noActuals[1].Actuals = nil, nil
	if cf, _ := BuildCashFlows(h, noActuals, costs, BasisActual, FX{}); !decEqual(cf.Benefits, wantBenefits) {
		t.Errorf("actual basis without actuals = %v, want the expected %v", cf.Benefits, wantBenefits)
	}
}

func TestBuildCashFlowsConvertsPerMonth(t *testing.T) {
	h := horizon(t, "2026-01", "2026-06")
	rates := map[string]map[Month]float64{
		"EUR": {month(t, "2026-01"): 1.125, month(t, "2026-04"): 1.5, month(t, "2026-05"): 1.25},
	}
	fx := FX{Base: "USD", Rate: func(currency string, m Month) (decimal.Decimal, bool) {
		r, ok := rates[currency][m]
		return d(r), ok
	}}
	benefits := []Benefit{
		// 400 a quarter in EUR, in 01 and 04: converted at 01's and 04's rates.
		{ExpectedValue: d(1600), Frequency: MeasuredQuarterly, Start: month(t, "2026-01"), Currency: "EUR"},
		{ExpectedValue: d(120), Frequency: MeasuredMonthly, Start: month(t, "2026-01"), Currency: "USD"},
	}
	costs := []Cost{
		{Amount: d(100), Currency: "EUR", Recurrence: Monthly, Period: month(t, "2026-04"), End: new(month(t, "2026-06"))},
		{Amount: d(50), Currency: "GBP", Recurrence: Once, Period: month(t, "2026-02")},
	}
	cf, missing := BuildCashFlows(h, benefits, costs, BasisExpected, fx)
	// USD 10 a month needs no rate; EUR 400 × 1.125 = 450 and 400 × 1.5 = 600.
	if want := []float64{460, 10, 10, 610, 10, 10}; !decEqual(cf.Benefits, want) {
		t.Errorf("benefits = %v, want %v", cf.Benefits, want)
	}
	// EUR 100 × 1.5 in 04, × 1.25 in 05, no rate in 06; GBP has no rate.
	if want := []float64{0, 0, 0, 150, 125, 0}; !decEqual(cf.Costs, want) {
		t.Errorf("costs = %v, want %v", cf.Costs, want)
	}
	wantMissing := []MissingRate{{"EUR", month(t, "2026-06")}, {"GBP", month(t, "2026-02")}}
	if !slices.Equal(missing, wantMissing) {
		t.Errorf("missing = %v, want %v", missing, wantMissing)
	}
}

func TestShocked(t *testing.T) {
	cf := CashFlows{Start: MonthOf(2026, 1), Benefits: ds(0, 100, 200, 300), Costs: ds(500, 10, 10, 10)}
	if got := cf.Shocked(Baseline); !slices.EqualFunc(got.Benefits, cf.Benefits, decimal.Decimal.Equal) || !slices.EqualFunc(got.Costs, cf.Costs, decimal.Decimal.Equal) || got.Start != cf.Start {
		t.Errorf("Baseline changed the flows: %+v", got)
	}
	worst := cf.Shocked(Shock{BenefitFactor: 0.8, CostFactor: 1.2, BenefitDelayMonths: 1})
	if want := []float64{0, 0, 80, 160}; !decEqual(worst.Benefits, want) {
		t.Errorf("worst benefits = %v, want %v (the last month's 300 falls out)", worst.Benefits, want)
	}
	if want := []float64{600, 12, 12, 12}; !decEqual(worst.Costs, want) {
		t.Errorf("worst costs = %v, want %v", worst.Costs, want)
	}
	if earlier := cf.Shocked(Shock{BenefitFactor: 1, CostFactor: 1, BenefitDelayMonths: -2}); !decEqual(earlier.Benefits, []float64{200, 300, 0, 0}) {
		t.Errorf("two months earlier = %v", earlier.Benefits)
	}
	if !decEqual(cf.Benefits, []float64{0, 100, 200, 300}) || !decEqual(cf.Costs, []float64{500, 10, 10, 10}) {
		t.Error("Shocked changed its receiver")
	}
	// ROI per scenario, by hand: expected (600 − 530)/530; worst: benefits
	// 240, costs 636 → (240 − 636)/636; best (×1.2 benefits, ×0.9 costs):
	// (720 − 477)/477.
	for _, tc := range []struct {
		name  string
		shock Shock
		want  float64
	}{
		{"expected", Baseline, (600.0 - 530) / 530 * 100},
		{"worst", Shock{BenefitFactor: 0.8, CostFactor: 1.2, BenefitDelayMonths: 1}, (240.0 - 636) / 636 * 100},
		{"best", Shock{BenefitFactor: 1.2, CostFactor: 0.9}, (720.0 - 477) / 477 * 100},
	} {
		wantValue(t, tc.name+" ROI", Evaluate(cf.Shocked(tc.shock), 0.08).ROIPercent, tc.want, 1e-9)
	}
}

// d is an exact decimal of a test literal.
func d(v float64) decimal.Decimal { return decimal.NewFromFloat(v) }

// ds is a series of test literals.
func ds(vs ...float64) []decimal.Decimal {
	out := make([]decimal.Decimal, len(vs))
	for i, v := range vs {
		out[i] = d(v)
	}
	return out
}

// decEqual reports whether got holds exactly the amounts of want.
func decEqual(got []decimal.Decimal, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !got[i].Equal(d(want[i])) {
			return false
		}
	}
	return true
}
