package analytics

import (
	"math"
	"testing"

	"github.com/google/uuid"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/money"
)

// The golden realization, current month 2026-06, base USD, worked out by hand:
//
//	P  A USD monthly 24,000/yr 2026-01..12 (2,000 a month), cost_savings, actuals 01..04: 1,000 1,500 2,500 2,000
//	     expected 6 × 2,000 = 12,000; realised 7,000; latest 03 2,500, 04 2,000 (≥ 1,600): not at risk
//	   B EUR quarterly 8,000/yr 2026-01..12 (2,000 a quarter), revenue_growth, actual 01 1,800
//	     expected 2,000 × 1.10 + 2,000 × 1.20 = 4,600; realised 1,800 × 1.10 = 1,980
//	   D hours monthly 1,200/yr (100 a month) from 2026-01, productivity, actuals 05 50, 06 70:
//	     50 % and 70 % in two periods running → at risk (not in the money sums)
//	Q  C USD monthly 12,000/yr 2026-03..08, cost_savings, actuals 03 700, 04 600:
//	     expected 03..06 = 4,000; realised 1,300; 70 % and 60 % running → at risk
//	   E USD monthly 12,000/yr from 2026-01, cost_avoidance, actuals 01 500, 03 500:
//	     expected 6,000; realised 1,000; two low periods but not running → not at risk
//	Z  no benefits: 0 and 0, no percentage
//
//	P      16,600 / 8,980 → 54.0963855…%      Q 10,000 / 2,300 → 23 %
//	total  26,600 / 11,280 → 42.4060150…%
//	cost_avoidance 6,000 / 1,000 → 16.666…%; cost_savings 16,000 / 8,300 → 51.875 %;
//	revenue_growth 4,600 / 1,980 → 43.0434782…%
//	at risk, lowest latest share first: C (60 %), D (70 %)
func goldenRealization() (ids [3]uuid.UUID, bs []RealizationBenefit, realized []RealizedSum, fx func(drop string) finance.FX) {
	p, q, z := uuid.New(), uuid.New(), uuid.New()
	end, cEnd := ym("2026-12"), ym("2026-08")
	fb := func(perYear float64, f finance.Frequency, start string, end *finance.Month, cur string) finance.Benefit {
		return finance.Benefit{ExpectedValue: perYear, Frequency: f, Start: ym(start), End: end, Currency: cur}
	}
	latest := func(kv ...any) []PeriodValue {
		var out []PeriodValue
		for i := 0; i < len(kv); i += 2 {
			out = append(out, PeriodValue{Period: ym(kv[i].(string)), Value: kv[i+1].(float64)})
		}
		return out
	}
	bs = []RealizationBenefit{
		{ID: uuid.New(), InitiativeID: p, Name: "A", Category: "cost_savings", Unit: "currency", Money: true,
			Benefit: fb(24_000, finance.MeasuredMonthly, "2026-01", &end, "USD"), Latest: latest("2026-03", 2_500.0, "2026-04", 2_000.0)},
		{ID: uuid.New(), InitiativeID: p, Name: "B", Category: "revenue_growth", Unit: "currency", Money: true,
			Benefit: fb(8_000, finance.MeasuredQuarterly, "2026-01", &end, "EUR"), Latest: latest("2026-01", 1_800.0)},
		{ID: uuid.New(), InitiativeID: p, Name: "D", Category: "productivity", Unit: "hours",
			Benefit: fb(1_200, finance.MeasuredMonthly, "2026-01", nil, ""), Latest: latest("2026-05", 50.0, "2026-06", 70.0)},
		{ID: uuid.New(), InitiativeID: q, Name: "C", Category: "cost_savings", Unit: "currency", Money: true,
			Benefit: fb(12_000, finance.MeasuredMonthly, "2026-03", &cEnd, "USD"), Latest: latest("2026-03", 700.0, "2026-04", 600.0)},
		{ID: uuid.New(), InitiativeID: q, Name: "E", Category: "cost_avoidance", Unit: "currency", Money: true,
			Benefit: fb(12_000, finance.MeasuredMonthly, "2026-01", nil, "USD"), Latest: latest("2026-01", 500.0, "2026-03", 500.0)},
	}
	// Realised per initiative and category, as the rollup sums them (A; B at
	// the January rate; C; E).
	realized = []RealizedSum{
		{InitiativeID: p, Category: "cost_savings", Value: new(7_000.0)},
		{InitiativeID: p, Category: "revenue_growth", Value: new(1_980.0)},
		{InitiativeID: q, Category: "cost_savings", Value: new(1_300.0)},
		{InitiativeID: q, Category: "cost_avoidance", Value: new(1_000.0)},
	}
	fx = func(drop string) finance.FX {
		rates := money.NewRates("USD")
		for period, r := range map[string]float64{"2026-01": 1.10, "2026-04": 1.20} {
			if period != drop {
				_ = rates.Set("EUR", ym(period), r)
			}
		}
		return rates.FX()
	}
	return [3]uuid.UUID{p, q, z}, bs, realized, fx
}

func TestComputeRealizationGolden(t *testing.T) {
	ids, bs, realized, fx := goldenRealization()
	r := ComputeRealization(ids[:], bs, realized, ym("2026-06"), fx(""))
	check := func(what string, a Amounts, expected, realized, percent float64) {
		t.Helper()
		eq := func(p *float64, v float64) bool { return p != nil && math.Abs(*p-v) < 1e-9 }
		pct := a.Percent()
		if !eq(a.Expected, expected) || !eq(a.Realized, realized) || (math.IsNaN(percent) != (pct == nil)) || (pct != nil && !eq(pct, percent)) {
			t.Errorf("%s: expected %v realised %v percent %v, want %v %v %v", what, a.Expected, a.Realized, pct, expected, realized, percent)
		}
	}
	check("total", r.Total, 26_600, 11_280, 11_280.0/266)
	check("P", r.Initiatives[ids[0]], 16_600, 8_980, 8_980.0/166)
	check("Q", r.Initiatives[ids[1]], 10_000, 2_300, 23)
	check("Z", r.Initiatives[ids[2]], 0, 0, math.NaN())
	if len(r.Categories) != 3 {
		t.Fatalf("categories %+v", r.Categories)
	}
	check("cost_avoidance", r.Categories[0].Amounts, 6_000, 1_000, 1_000.0/60)
	check("cost_savings", r.Categories[1].Amounts, 16_000, 8_300, 51.875)
	check("revenue_growth", r.Categories[2].Amounts, 4_600, 1_980, 1_980.0/46)
	if r.Categories[0].Category != "cost_avoidance" || r.Categories[1].Category != "cost_savings" || r.Categories[2].Category != "revenue_growth" {
		t.Errorf("category order %+v", r.Categories)
	}
	if len(r.AtRisk) != 2 || r.AtRisk[0].Benefit.Name != "C" || r.AtRisk[1].Benefit.Name != "D" {
		t.Fatalf("at risk %+v", r.AtRisk)
	}
	if c := r.AtRisk[0].Periods; len(c) != 2 || c[0] != (AtRiskPeriod{ym("2026-03"), 1_000, 700}) || c[1] != (AtRiskPeriod{ym("2026-04"), 1_000, 600}) {
		t.Errorf("C periods %+v", c)
	}
	if len(r.Missing) != 0 {
		t.Errorf("missing %v", r.Missing)
	}

	// Without the EUR rate of 2026-04, B's expected is unknown: P, the total and
	// revenue_growth are null, Q and the other categories are not.
	r = ComputeRealization(ids[:], bs, realized, ym("2026-06"), fx("2026-04"))
	if r.Total.Expected != nil || r.Initiatives[ids[0]].Expected != nil || r.Categories[2].Expected != nil || r.Total.Percent() != nil {
		t.Errorf("missing rate: %+v", r)
	}
	check("Q without the rate", r.Initiatives[ids[1]], 10_000, 2_300, 23)
	if len(r.Missing) != 1 || r.Missing[0] != (finance.MissingRate{Currency: "EUR", Period: ym("2026-04")}) {
		t.Errorf("missing %v", r.Missing)
	}
}

// The at-risk rule at its edges.
func TestAtRiskRule(t *testing.T) {
	monthly := finance.Benefit{ExpectedValue: 1_200, Frequency: finance.MeasuredMonthly, Start: ym("2026-01")}   // 100 a month
	quarterly := finance.Benefit{ExpectedValue: 400, Frequency: finance.MeasuredQuarterly, Start: ym("2026-01")} // 100 a quarter
	pv := func(p string, v float64) PeriodValue { return PeriodValue{Period: ym(p), Value: v} }
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
