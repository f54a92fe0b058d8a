package analytics

import (
	"math"
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// The golden realization, current month 2026-06, base USD, worked out by hand,
// like for like (expected of the periods with an actual against the actuals;
// the periods without one apart):
//
//	P  A USD monthly 24,000/yr 2026-01..12 (2,000 a month), cost_savings, actuals 01..04: 1,000 1,500 2,500 2,000
//	     measured 4 × 2,000 = 8,000, actual 7,000; unmeasured 05, 06 = 4,000; latest 03 2,500, 04 2,000 (≥ 1,600): not at risk
//	   B EUR quarterly 8,000/yr 2026-01..12 (2,000 a quarter), revenue_growth, actual Q1 1,800
//	     measured 2,000 × 1.10 = 2,200, actual 1,800 × 1.10 = 1,980; unmeasured Q2 2,000 × 1.20 = 2,400
//	   D hours monthly 1,200/yr (100 a month) from 2026-01, productivity, actuals 05 50, 06 70:
//	     50 % and 70 % in two periods running → at risk (not in the money sums)
//	Q  C USD monthly 12,000/yr 2026-03..08, cost_savings, actuals 03 700, 04 600:
//	     measured 2,000, actual 1,300; unmeasured 05, 06 = 2,000; 70 % and 60 % running → at risk
//	   E USD monthly 12,000/yr from 2026-01, cost_avoidance, actuals 01 500, 03 500:
//	     measured 2,000, actual 1,000; unmeasured 02, 04..06 = 4,000; two low periods but not running → not at risk
//	Z  no benefits: 0 and 0, no percentage
//
//	P      measured 10,200 actual 8,980 unmeasured 6,400 → 88.0392156…%    Q 4,000 / 2,300 / 6,000 → 57.5 %
//	total  14,200 / 11,280 / 12,400 → 79.4366197…%
//	cost_avoidance 2,000 / 1,000 / 4,000 → 50 %; cost_savings 10,000 / 8,300 / 6,000 → 83 %;
//	revenue_growth 2,200 / 1,980 / 2,400 → 90 %
//	at risk, lowest latest share first: C (60 %), D (70 %)
func goldenRealization() (ids [3]uuid.UUID, bs []RealizationBenefit, fx func(drop string) finance.FX) {
	p, q, z := uuid.New(), uuid.New(), uuid.New()
	end, cEnd := ym("2026-12"), ym("2026-08")
	fb := func(perYear float64, f finance.Frequency, start string, end *finance.Month, cur string, actuals ...any) finance.Benefit {
		b := finance.Benefit{ExpectedValue: dec(perYear), Frequency: f, Start: ym(start), End: end, Currency: cur, Actuals: map[finance.Month]decimal.Decimal{}}
		for i := 0; i < len(actuals); i += 2 {
			b.Actuals[ym(actuals[i].(string))] = dec(actuals[i+1].(float64))
		}
		return b
	}
	latest := func(kv ...any) []PeriodValue {
		var out []PeriodValue
		for i := 0; i < len(kv); i += 2 {
			out = append(out, PeriodValue{Period: ym(kv[i].(string)), Value: dec(kv[i+1].(float64))})
		}
		return out
	}
	bs = []RealizationBenefit{
		{ID: uuid.New(), InitiativeID: p, Name: "A", Category: "cost_savings", Unit: "currency", Money: true,
			Benefit: fb(24_000, finance.MeasuredMonthly, "2026-01", &end, "USD", "2026-01", 1_000.0, "2026-02", 1_500.0, "2026-03", 2_500.0, "2026-04", 2_000.0),
			Latest:  latest("2026-03", 2_500.0, "2026-04", 2_000.0)},
		{ID: uuid.New(), InitiativeID: p, Name: "B", Category: "revenue_growth", Unit: "currency", Money: true,
			Benefit: fb(8_000, finance.MeasuredQuarterly, "2026-01", &end, "EUR", "2026-01", 1_800.0), Latest: latest("2026-01", 1_800.0)},
		{ID: uuid.New(), InitiativeID: p, Name: "D", Category: "productivity", Unit: "hours",
			Benefit: fb(1_200, finance.MeasuredMonthly, "2026-01", nil, "", "2026-05", 50.0, "2026-06", 70.0), Latest: latest("2026-05", 50.0, "2026-06", 70.0)},
		{ID: uuid.New(), InitiativeID: q, Name: "C", Category: "cost_savings", Unit: "currency", Money: true,
			Benefit: fb(12_000, finance.MeasuredMonthly, "2026-03", &cEnd, "USD", "2026-03", 700.0, "2026-04", 600.0), Latest: latest("2026-03", 700.0, "2026-04", 600.0)},
		{ID: uuid.New(), InitiativeID: q, Name: "E", Category: "cost_avoidance", Unit: "currency", Money: true,
			Benefit: fb(12_000, finance.MeasuredMonthly, "2026-01", nil, "USD", "2026-01", 500.0, "2026-03", 500.0), Latest: latest("2026-01", 500.0, "2026-03", 500.0)},
	}
	fx = func(drop string) finance.FX {
		rates := finance.NewRates("USD")
		for period, r := range map[string]float64{"2026-01": 1.10, "2026-04": 1.20} {
			if period != drop {
				_ = rates.Set("EUR", ym(period), dec(r))
			}
		}
		return rates.FX()
	}
	return [3]uuid.UUID{p, q, z}, bs, fx
}

func dec(v float64) decimal.Decimal { return decimal.NewFromFloat(v) }

func TestComputeRealizationGolden(t *testing.T) {
	ids, bs, fx := goldenRealization()
	r := ComputeRealization(ids[:], nil, bs, ym("2026-06"), fx(""))
	check := func(what string, a Amounts, measured, actual, unmeasured, percent float64) {
		t.Helper()
		pct := a.RealizationPercent()
		eqPct := (math.IsNaN(percent) && pct == nil) || (pct != nil && math.Abs(pct.InexactFloat64()-percent) < 1e-9)
		if a.MeasuredUnknown || a.UnmeasuredUnknown || !a.Expected.Equal(dec(measured)) || !a.Actual.Equal(dec(actual)) || !a.Unmeasured.Equal(dec(unmeasured)) || !eqPct ||
			!a.Variance().Equal(dec(actual-measured)) || !a.PlanToDate().Equal(dec(measured+unmeasured)) {
			t.Errorf("%s: measured %v actual %v unmeasured %v percent %v, want %v %v %v %v", what, a.Expected, a.Actual, a.Unmeasured, pct, measured, actual, unmeasured, percent)
		}
	}
	check("total", r.Total, 14_200, 11_280, 12_400, 11_280.0/142)
	check("P", r.Initiatives[ids[0]], 10_200, 8_980, 6_400, 8_980.0/102)
	check("Q", r.Initiatives[ids[1]], 4_000, 2_300, 6_000, 57.5)
	check("Z", r.Initiatives[ids[2]], 0, 0, 0, math.NaN())
	if len(r.Categories) != 3 {
		t.Fatalf("categories %+v", r.Categories)
	}
	check("cost_avoidance", r.Categories[0].Amounts, 2_000, 1_000, 4_000, 50)
	check("cost_savings", r.Categories[1].Amounts, 10_000, 8_300, 6_000, 83)
	check("revenue_growth", r.Categories[2].Amounts, 2_200, 1_980, 2_400, 90)
	if r.Categories[0].Category != "cost_avoidance" || r.Categories[1].Category != "cost_savings" || r.Categories[2].Category != "revenue_growth" {
		t.Errorf("category order %+v", r.Categories)
	}
	if len(r.AtRisk) != 2 || r.AtRisk[0].Benefit.Name != "C" || r.AtRisk[1].Benefit.Name != "D" {
		t.Fatalf("at risk %+v", r.AtRisk)
	}
	period := func(p AtRiskPeriod, m string, expected, actual float64) bool {
		return p.Period == ym(m) && p.Expected.Equal(dec(expected)) && p.Actual.Equal(dec(actual))
	}
	if c := r.AtRisk[0].Periods; len(c) != 2 || !period(c[0], "2026-03", 1_000, 700) || !period(c[1], "2026-04", 1_000, 600) {
		t.Errorf("C periods %+v", c)
	}
	if len(r.Missing) != 0 {
		t.Errorf("missing %v", r.Missing)
	}

	// Without the EUR rate of 2026-04, B's unmeasured Q2 is unknown: the
	// unmeasured part of P, the total and revenue_growth is unknown, their
	// measured part (Q1's rate) is not; Q and the other categories are whole.
	r = ComputeRealization(ids[:], nil, bs, ym("2026-06"), fx("2026-04"))
	for _, a := range []Amounts{r.Total, r.Initiatives[ids[0]], r.Categories[2].Amounts} {
		if !a.UnmeasuredUnknown || a.MeasuredUnknown {
			t.Errorf("missing rate: %+v", a)
		}
	}
	if !r.Initiatives[ids[0]].Expected.Equal(dec(10_200)) || !r.Initiatives[ids[0]].Actual.Equal(dec(8_980)) {
		t.Errorf("P's measured part without the unmeasured rate: %+v", r.Initiatives[ids[0]])
	}
	check("Q without the rate", r.Initiatives[ids[1]], 4_000, 2_300, 6_000, 57.5)
	if len(r.Missing) != 1 || r.Missing[0] != (finance.MissingRate{Currency: "EUR", Period: ym("2026-04")}) {
		t.Errorf("missing %v", r.Missing)
	}
	// Without the 2026-01 rate, B's measured Q1 is unknown instead.
	r = ComputeRealization(ids[:], nil, bs, ym("2026-06"), fx("2026-01"))
	if !r.Total.MeasuredUnknown || r.Total.UnmeasuredUnknown {
		t.Errorf("missing measured rate: %+v", r.Total)
	}
}

// The at-risk rule at its edges.
func TestAtRiskRule(t *testing.T) {
	monthly := finance.Benefit{ExpectedValue: dec(1_200), Frequency: finance.MeasuredMonthly, Start: ym("2026-01")}   // 100 a month
	quarterly := finance.Benefit{ExpectedValue: dec(400), Frequency: finance.MeasuredQuarterly, Start: ym("2026-01")} // 100 a quarter
	pv := func(p string, v float64) PeriodValue { return PeriodValue{Period: ym(p), Value: dec(v)} }
	for _, c := range []struct {
		name   string
		b      finance.Benefit
		latest []PeriodValue
		want   bool
	}{
		{"two under 80 % running", monthly, []PeriodValue{pv("2026-02", 79.99), pv("2026-03", 0)}, true},
		{"exactly 80 % is not under", monthly, []PeriodValue{pv("2026-02", 80), pv("2026-03", 10)}, false},
		{"only one period", monthly, []PeriodValue{pv("2026-03", 10)}, false},
		{"a gap", monthly, []PeriodValue{pv("2026-01", 10), pv("2026-03", 10)}, false},
		{"quarters running", quarterly, []PeriodValue{pv("2026-01", 10), pv("2026-04", 10)}, true},
		{"before the start: nothing expected", monthly, []PeriodValue{pv("2025-11", 0), pv("2025-12", 0)}, false},
	} {
		_, got := atRisk(RealizationBenefit{Benefit: c.b, Latest: c.latest})
		if got != c.want {
			t.Errorf("%s: at risk %v, want %v", c.name, got, c.want)
		}
	}
}
