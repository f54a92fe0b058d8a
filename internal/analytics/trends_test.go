package analytics

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// The golden trend, 2026-01 .. 2026-08, current month 2026-06, base USD, by
// category, worked out by hand:
//
//	cost_savings    A USD monthly 12,000/yr from 2026-01: 1,000 a month expected;
//	                actuals 800, 900, 1,000, 1,100, 1,200, 1,300 in 01..06
//	revenue_growth  B EUR quarterly 12,000/yr from 2026-01: 3,000 a quarter at
//	                1.10 (01), 1.20 (04), 1.30 (07) = 3,300, 3,600, 3,900 expected;
//	                actuals (converted, as PostgreSQL sums them) 3,000 in 01, 3,500 in 04
//
//	month      01     02     03     04     05     06     07     08
//	expected   4,300  1,000  1,000  4,600  1,000  1,000  4,900  1,000
//	actual     3,800    900  1,000  4,600  1,200  1,300   null   null (future)
//	MA(3)      null   null   1,900  2,166.67 2,266.67 2,366.67 null null
//
// Direction: least-squares slope of the actuals over t = 0..5 (mean t 2.5,
// Σ(t − 2.5)² = 17.5): total Σ(t − 2.5)·y = −9,500 − 1,350 − 500 + 2,300 +
// 1,800 + 3,250 = −4,000 → −228.571…, under −1 % of the mean |actual|
// (2,133.33) → down; cost_savings slope 100 (> 10.5) → up; revenue_growth
// (−7,500 + 1,750) / 17.5 = −328.571… → down.
func goldenTrend(dropRate string) (h finance.Horizon, benefits []TrendBenefit, actuals []ActualSum, fx finance.FX) {
	h = finance.Horizon{Start: ym("2026-01"), End: ym("2026-08")}
	benefits = []TrendBenefit{
		{Group: "cost_savings", Benefit: finance.Benefit{ExpectedValue: dec(12_000), Frequency: finance.MeasuredMonthly, Start: ym("2026-01"), Currency: "USD"}},
		{Group: "revenue_growth", Benefit: finance.Benefit{ExpectedValue: dec(12_000), Frequency: finance.MeasuredQuarterly, Start: ym("2026-01"), Currency: "EUR"}},
	}
	for i, v := range []float64{800, 900, 1_000, 1_100, 1_200, 1_300} {
		actuals = append(actuals, ActualSum{Group: "cost_savings", Period: ym("2026-01").Add(i), Value: dec(v)})
	}
	actuals = append(actuals, ActualSum{Group: "revenue_growth", Period: ym("2026-01"), Value: dec(3_000)}, ActualSum{Group: "revenue_growth", Period: ym("2026-04"), Value: dec(3_500)})
	rates := finance.NewRates("USD")
	for period, r := range map[string]float64{"2026-01": 1.10, "2026-04": 1.20, "2026-07": 1.30} {
		if period != dropRate {
			_ = rates.Set("EUR", ym(period), dec(r))
		}
	}
	return h, benefits, actuals, rates.FX()
}

// pointsString writes a series as "expected/actual/ma ..." with 2 decimals.
func pointsString(s Series) string {
	f := func(v *decimal.Decimal) string {
		if v == nil {
			return "null"
		}
		return v.StringFixed(2)
	}
	out := ""
	for _, p := range s.Points {
		out += fmt.Sprintf("%s %s/%s/%s; ", p.Period, f(p.Expected), f(p.Actual), f(p.MovingAverage))
	}
	return out
}

func TestComputeTrendsGolden(t *testing.T) {
	h, benefits, actuals, fx := goldenTrend("")
	total, groups, missing := ComputeTrends(h, ym("2026-06"), []string{"cost_savings", "revenue_growth"}, benefits, actuals, fx)
	want := "2026-01 4300.00/3800.00/null; 2026-02 1000.00/900.00/null; 2026-03 1000.00/1000.00/1900.00; 2026-04 4600.00/4600.00/2166.67; " +
		"2026-05 1000.00/1200.00/2266.67; 2026-06 1000.00/1300.00/2366.67; 2026-07 4900.00/null/null; 2026-08 1000.00/null/null; "
	if got := pointsString(total); got != want {
		t.Errorf("total\n got %s\nwant %s", got, want)
	}
	slope := func(s Series, want float64, d Direction) {
		t.Helper()
		if s.Slope == nil || math.Abs(*s.Slope-want) > 1e-9 || s.Direction == nil || *s.Direction != d {
			t.Errorf("%q: slope %v direction %v, want %v %s", s.Group, s.Slope, s.Direction, want, d)
		}
	}
	slope(total, -4_000.0/17.5, Down)
	if len(groups) != 2 || groups[0].Group != "cost_savings" || groups[1].Group != "revenue_growth" {
		t.Fatalf("groups %+v", groups)
	}
	slope(groups[0], 100, Up)
	slope(groups[1], -5_750.0/17.5, Down)
	if got := pointsString(groups[0]); got[:len("2026-01 1000.00/800.00/null; 2026-02 1000.00/900.00/null; 2026-03 1000.00/1000.00/900.00")] != "2026-01 1000.00/800.00/null; 2026-02 1000.00/900.00/null; 2026-03 1000.00/1000.00/900.00" {
		t.Errorf("cost_savings %s", got)
	}
	if len(missing) != 0 {
		t.Errorf("missing %v", missing)
	}

	// Without the July EUR rate: July's expected is unknown in the total and
	// revenue_growth, not in cost_savings. An actual without a rate makes its
	// month's actual unknown, the moving averages over it and the direction too.
	h, benefits, actuals, fx = goldenTrend("2026-07")
	actuals[len(actuals)-1].Missing = true // revenue_growth 2026-04
	total, groups, missing = ComputeTrends(h, ym("2026-06"), []string{"cost_savings", "revenue_growth"}, benefits, actuals, fx)
	want = "2026-01 4300.00/3800.00/null; 2026-02 1000.00/900.00/null; 2026-03 1000.00/1000.00/1900.00; 2026-04 4600.00/null/null; " +
		"2026-05 1000.00/1200.00/null; 2026-06 1000.00/1300.00/null; 2026-07 null/null/null; 2026-08 1000.00/null/null; "
	if got := pointsString(total); got != want {
		t.Errorf("total with missing rates\n got %s\nwant %s", got, want)
	}
	if total.Direction != nil || groups[1].Direction != nil || groups[0].Direction == nil || !groups[0].Points[6].Expected.Equal(dec(1_000)) {
		t.Errorf("directions %v %v %v", total.Direction, groups[0].Direction, groups[1].Direction)
	}
	if len(missing) != 1 || missing[0] != (finance.MissingRate{Currency: "EUR", Period: ym("2026-07")}) {
		t.Errorf("missing %v", missing)
	}
}

func TestDirectionEdges(t *testing.T) {
	pts := func(ys ...float64) []Point {
		out := make([]Point, len(ys))
		for i, y := range ys {
			out[i] = Point{Period: ym("2026-01").Add(i), Actual: new(dec(y))}
		}
		return out
	}
	for _, c := range []struct {
		ys   []float64
		want string
	}{
		{[]float64{100, 100}, "<nil>"},        // two months: too few
		{[]float64{100, 100, 100}, "flat"},    // slope 0
		{[]float64{100, 101, 102}, "flat"},    // slope 1 < 1 % of 101
		{[]float64{100, 102, 104}, "up"},      // slope 2 > 1.02
		{[]float64{0, 0, 0}, "flat"},          // nothing at all
		{[]float64{-100, -150, -200}, "down"}, // negative actuals
	} {
		_, d := direction(pts(c.ys...), ym("2030-01"))
		got := "<nil>"
		if d != nil {
			got = string(*d)
		}
		if got != c.want {
			t.Errorf("%v: %s, want %s", c.ys, got, c.want)
		}
	}
}

func TestParseTrendRange(t *testing.T) {
	current := ym("2026-06")
	for _, c := range []struct{ from, to, wantFrom, wantTo string }{
		{"", "", "2025-07", "2026-06"},
		{"2026-01", "", "2026-01", "2026-06"},
		{"", "2024-12", "2024-01", "2024-12"},
		{"2021-07", "2026-06", "2021-07", "2026-06"}, // 60 months
		{"2026-06", "2026-06", "2026-06", "2026-06"},
		{"2027-01", "2027-03", "2027-01", "2027-03"}, // the future: expected only
	} {
		h, err := ParseTrendRange(c.from, c.to, current)
		if err != nil || h.Start != ym(c.wantFrom) || h.End != ym(c.wantTo) {
			t.Errorf("%q..%q = %v %v, want %s..%s", c.from, c.to, h, err, c.wantFrom, c.wantTo)
		}
	}
	for _, c := range []struct{ from, to string }{
		{"2021-06", "2026-06"}, // 61 months
		{"2026-07", "2026-06"}, // inverted
		{"2026-13", ""}, {"2026-1", ""}, {"", "26-01"}, {"2026-01-01", ""}, {"", "2026-00"},
		{"2027-01", ""}, // from after the default to
	} {
		if _, err := ParseTrendRange(c.from, c.to, current); !errors.Is(err, ErrInvalidRange) {
			t.Errorf("%q..%q: err %v", c.from, c.to, err)
		}
	}
}
