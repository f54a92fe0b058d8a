package benefit

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

func near(a decimal.Decimal, b float64) bool { return math.Abs(a.InexactFloat64()-b) < 1e-9 }

func nearPtr(got *decimal.Decimal, want *float64) bool {
	if got == nil || want == nil {
		return got == nil && want == nil
	}
	return near(*got, *want)
}

func show(p *decimal.Decimal) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

func d(v float64) decimal.Decimal { return decimal.NewFromFloat(v) }

// actuals is a test's actuals by period as exact decimals.
func actuals(in map[finance.Month]float64) map[finance.Month]decimal.Decimal {
	out := make(map[finance.Month]decimal.Decimal, len(in))
	for p, v := range in {
		out[p] = d(v)
	}
	return out
}

func monthlyExpected(year, fromMonth, toMonth int, each float64) []Expected {
	var out []Expected
	for m := fromMonth; m <= toMonth; m++ {
		out = append(out, Expected{mi(year, m), d(each)})
	}
	return out
}

// Hand calculation: expected 100 in each of Jan..Apr 2026 (expected_value
// 1200/12); actuals Jan 90, Feb 110, Apr 130, March missing. Like for like:
//
//	expected_ytd = 3 × 100 = 300 (Jan, Feb, Apr), actual_ytd = 90 + 110 + 130 = 330
//	variance = 330 − 300 = +30, variance_percent = 30 / 300 × 100 = +10
//	expected_unmeasured = 100 (March): reported apart, not a shortfall
//	periods: Jan −10 (−10 %), Feb +10 (+10 %), Mar null, Apr +30 (+30 %)
//	trend: last three with an actual are Jan, Feb, Apr; Δ = (30 − (−10)) / 100 = 0.4 → improving
func TestVarianceMonthlyWithMissingPeriod(t *testing.T) {
	v := ComputeVariance(monthlyExpected(2026, 1, 4, 100), actuals(map[finance.Month]float64{
		mi(2026, 1): 90, mi(2026, 2): 110, mi(2026, 4): 130,
		mi(2025, 12): 5000, mi(2026, 5): 5000, // outside the range: ignored
	}))
	if !near(v.ExpectedYTD, 300) || !near(v.ActualYTD, 330) || !near(v.Variance, 30) || !nearPtr(v.VariancePercent, new(10.0)) || !near(v.ExpectedUnmeasured, 100) {
		t.Errorf("totals: expected %v actual %v variance %v percent %s unmeasured %v", v.ExpectedYTD, v.ActualYTD, v.Variance, show(v.VariancePercent), v.ExpectedUnmeasured)
	}
	want := []struct {
		actual, variance, percent *float64
	}{
		{new(90.0), new(-10.0), new(-10.0)},
		{new(110.0), new(10.0), new(10.0)},
		{nil, nil, nil},
		{new(130.0), new(30.0), new(30.0)},
	}
	if len(v.Periods) != 4 {
		t.Fatalf("periods: %d, want 4", len(v.Periods))
	}
	for i, w := range want {
		p := v.Periods[i]
		if p.Period != mi(2026, i+1) || !near(p.Expected, 100) || !nearPtr(p.Actual, w.actual) || !nearPtr(p.Variance, w.variance) || !nearPtr(p.VariancePercent, w.percent) {
			t.Errorf("period %d: %s expected %v actual %s variance %s percent %s", i, p.Period, p.Expected, show(p.Actual), show(p.Variance), show(p.VariancePercent))
		}
	}
	if !slices.Equal(v.MissingPeriods, []finance.Month{mi(2026, 3)}) {
		t.Errorf("missing periods %v, want [2026-03]", v.MissingPeriods)
	}
	if v.Trend != Improving {
		t.Errorf("trend %s, want improving", v.Trend)
	}
}

// Hand calculation: expected_value 1000 a year, quarterly → 250 a quarter;
// actuals Q1 200, Q2 260. expected_ytd 500, actual_ytd 460, variance −40,
// variance_percent −40 / 500 × 100 = −8; two actuals → insufficient_data.
func TestVarianceQuarterly(t *testing.T) {
	expected := []Expected{{mi(2026, 1), d(1000.0 / 4)}, {mi(2026, 4), d(1000.0 / 4)}}
	v := ComputeVariance(expected, actuals(map[finance.Month]float64{mi(2026, 1): 200, mi(2026, 4): 260}))
	if !near(v.ExpectedYTD, 500) || !near(v.ActualYTD, 460) || !near(v.Variance, -40) || !nearPtr(v.VariancePercent, new(-8.0)) {
		t.Errorf("got %+v", v)
	}
	if !nearPtr(v.Periods[1].VariancePercent, new(4.0)) { // (260 − 250) / 250 × 100
		t.Errorf("Q2 percent %s, want 4", show(v.Periods[1].VariancePercent))
	}
	if v.Trend != InsufficientData || len(v.MissingPeriods) != 0 {
		t.Errorf("trend %s missing %v", v.Trend, v.MissingPeriods)
	}
}

func TestVarianceExpectedZero(t *testing.T) {
	// Nothing expected (e.g. a plan that starts later): percentages are null, never a division error.
	v := ComputeVariance(monthlyExpected(2026, 1, 3, 0), actuals(map[finance.Month]float64{mi(2026, 1): 5, mi(2026, 2): 0, mi(2026, 3): 7}))
	if v.VariancePercent != nil || !near(v.Variance, 12) {
		t.Errorf("variance %v percent %s, want 12 and null", v.Variance, show(v.VariancePercent))
	}
	for _, p := range v.Periods {
		if p.VariancePercent != nil {
			t.Errorf("%s: percent %s, want null", p.Period, show(p.VariancePercent))
		}
	}
	// The measured periods' expected sums to 0 although periods do not: the total percentage is still null.
	v = ComputeVariance([]Expected{{mi(2026, 1), d(100)}, {mi(2026, 2), d(-100)}, {mi(2026, 3), d(40)}}, actuals(map[finance.Month]float64{mi(2026, 1): 50, mi(2026, 2): -90}))
	if v.VariancePercent != nil || v.Periods[0].VariancePercent == nil || !near(*v.Periods[0].VariancePercent, -50) {
		t.Errorf("total percent %s, Jan percent %s", show(v.VariancePercent), show(v.Periods[0].VariancePercent))
	}
}

func TestVarianceEmptyRange(t *testing.T) {
	v := ComputeVariance(nil, actuals(map[finance.Month]float64{mi(2026, 1): 5}))
	if !v.ExpectedYTD.IsZero() || !v.ActualYTD.IsZero() || !v.Variance.IsZero() || v.VariancePercent != nil || v.Trend != InsufficientData {
		t.Errorf("got %+v", v)
	}
	if v.Periods == nil || v.MissingPeriods == nil || len(v.Periods) != 0 {
		t.Error("empty lists must be [] in JSON, not null")
	}
}

// Trend boundaries: three(expected, …) builds Jan..Mar expecting `expected`
// each, with actuals that give the listed variances (oldest first).
func TestTrend(t *testing.T) {
	three := func(expected float64, oldest, mid, newest float64) Variance {
		return ComputeVariance(monthlyExpected(2026, 1, 3, expected), actuals(map[finance.Month]float64{
			mi(2026, 1): expected + oldest, mi(2026, 2): expected + mid, mi(2026, 3): expected + newest,
		}))
	}
	cases := []struct {
		name string
		v    Variance
		want Trend
	}{
		// mean |expected| 100, so Δ = (newest − oldest) / 100
		{"Δ exactly +0.05", three(100, 0, 0, 5), Improving},
		{"Δ just under +0.05", three(100, 0, 0, 4.999), Stable},
		{"Δ exactly −0.05", three(100, 0, 0, -5), Declining},
		{"Δ just above −0.05", three(100, 0, 0, -4.999), Stable},
		{"no change", three(100, 7, -50, 7), Stable},
		{"the middle period does not count", three(100, 0, 90, 1), Stable},
		{"large fall", three(100, 20, 10, -20), Declining},
		{"negative expectations use |expected|", three(-100, 0, 0, 5), Improving},
		{"nothing expected: sign of the raw difference, up", three(0, 0, 0, 1e-9), Improving},
		{"nothing expected: down", three(0, 3, 0, 2), Declining},
		{"nothing expected: unchanged", three(0, 4, 9, 4), Stable},
	}
	for _, c := range cases {
		if c.v.Trend != c.want {
			t.Errorf("%s: trend %s, want %s", c.name, c.v.Trend, c.want)
		}
	}
}

func TestTrendUsesTheLastThreePeriodsWithAnActual(t *testing.T) {
	// Jan..Jun expect 100. Jan is far off (+500) but is not among the last three actuals
	// (Mar, Apr, Jun; Feb and May have none): Δ = (variance Jun − variance Mar) / 100 = (−10 − 0) / 100 = −0.1.
	v := ComputeVariance(monthlyExpected(2026, 1, 6, 100), actuals(map[finance.Month]float64{
		mi(2026, 1): 600, mi(2026, 3): 100, mi(2026, 4): 100, mi(2026, 6): 90,
	}))
	if v.Trend != Declining {
		t.Errorf("trend %s, want declining", v.Trend)
	}
	// Mean |expected| is over the three periods compared: 50, 100, 150 → 100; Δ = 5 / 100 → improving.
	v = ComputeVariance([]Expected{{mi(2026, 1), d(50)}, {mi(2026, 2), d(100)}, {mi(2026, 3), d(150)}}, actuals(map[finance.Month]float64{
		mi(2026, 1): 50, mi(2026, 2): 100, mi(2026, 3): 155,
	}))
	if v.Trend != Improving {
		t.Errorf("trend %s, want improving", v.Trend)
	}
	// Two actuals in six periods: insufficient.
	v = ComputeVariance(monthlyExpected(2026, 1, 6, 100), actuals(map[finance.Month]float64{mi(2026, 2): 1, mi(2026, 5): 1}))
	if v.Trend != InsufficientData {
		t.Errorf("trend %s, want insufficient_data", v.Trend)
	}
}

// ExpectedOver uses finance.Benefit.ExpectedFor: 1,200 a year monthly from
// 2026-03 through 2026-05 expects 100 in March..May and 0 around them; a plan
// replaces the spread (unlisted periods 0).
func TestExpectedOver(t *testing.T) {
	b := finance.Benefit{ExpectedValue: d(1200), Frequency: finance.MeasuredMonthly, Start: mi(2026, 3), End: new(mi(2026, 5))}
	got := ExpectedOver(b, months(2026, 2, 3, 4, 5, 6))
	want := []Expected{{mi(2026, 2), d(0)}, {mi(2026, 3), d(100)}, {mi(2026, 4), d(100)}, {mi(2026, 5), d(100)}, {mi(2026, 6), d(0)}}
	if !slices.EqualFunc(got, want, func(a, b Expected) bool { return a.Period == b.Period && a.Value.Equal(b.Value) }) {
		t.Errorf("spread: %v, want %v", got, want)
	}
	b.Plan = []finance.PlanEntry{{Period: mi(2026, 4), Expected: d(250)}}
	got = ExpectedOver(b, months(2026, 3, 4, 5))
	want = []Expected{{mi(2026, 3), d(0)}, {mi(2026, 4), d(250)}, {mi(2026, 5), d(0)}}
	if !slices.EqualFunc(got, want, func(a, b Expected) bool { return a.Period == b.Period && a.Value.Equal(b.Value) }) {
		t.Errorf("plan: %v, want %v", got, want)
	}
}
