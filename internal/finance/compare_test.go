package finance

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
)

func TestExactSum(t *testing.T) {
	var s exactSum
	if !s.value().IsZero() {
		t.Fatal("empty sum")
	}
	// Ten 0.10 and 0.005: exactly 1.005 (float64 gives 1.0049999…).
	for range 10 {
		s.add(d(0.10))
	}
	s.add(d(0.005))
	if got := s.value(); got.String() != "1.005" {
		t.Errorf("sum = %s, want 1.005", got)
	}
	// Past an int64 coefficient it carries on exactly in decimal.Decimal.
	var big exactSum
	huge := decimal.RequireFromString("9000000000000000.01") // 18 digits at exponent −2
	big.add(huge)
	big.add(huge)
	big.add(d(-0.02))
	if got := big.value(); got.String() != "18000000000000000" {
		t.Errorf("spilled sum = %s", got)
	}
}

// CompareToDate against the definition written out period by period, on
// random benefits (spread or plan, monthly or quarterly, base or foreign
// currency with or without a rate, actuals inside and outside the dates).
func TestCompareToDateMatchesTheDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rates := map[Month]decimal.Decimal{}
	for m := MonthOf(2023, 1); m <= MonthOf(2026, 12); m++ {
		if rng.IntN(10) > 0 {
			rates[m] = decimal.New(int64(9000+rng.IntN(3000)), -4)
		}
	}
	fx := FX{Base: "USD", Rate: func(cur string, m Month) (decimal.Decimal, bool) { r, ok := rates[m]; return r, ok && cur == "EUR" }}
	current := MonthOf(2025, 6)
	for i := range 300 {
		b := Benefit{ExpectedValue: decimal.New(int64(rng.IntN(10_000_000)), -2), Frequency: Frequencies[rng.IntN(2)],
			Start: MonthOf(2023, 1).Add(rng.IntN(30)), Currency: []string{"USD", "EUR"}[rng.IntN(2)], Actuals: map[Month]decimal.Decimal{}}
		if rng.IntN(2) == 0 {
			b.End = new(b.Start.Add(rng.IntN(30)))
		}
		if rng.IntN(3) == 0 {
			b.Plan = []PlanEntry{}
			for range rng.IntN(6) {
				b.Plan = append(b.Plan, PlanEntry{Period: b.Frequency.PeriodOf(b.Start.Add(rng.IntN(36))), Expected: decimal.New(int64(rng.IntN(100_000)), -3)})
			}
		}
		from, spread := MonthOf(2022, 10), 50
		if rng.IntN(2) == 0 { // often only within the benefit's dates, so that a summary can stand for them
			from, spread = b.Start, 12
		}
		for range rng.IntN(40) {
			p := b.Frequency.PeriodOf(from.Add(rng.IntN(spread)))
			b.Actuals[p] = decimal.New(int64(rng.IntN(2_000_000)-500_000), -3)
		}
		got, gotMissing := b.CompareToDate(current, fx)

		// The definition, period by period.
		var want Comparison
		var wantMissing int
		first, last, open := b.periodRange()
		end := current
		if !open {
			end = min(end, last)
		}
		periods := map[Month]bool{}
		for _, p := range b.Frequency.Periods(first, end) {
			periods[p] = true
		}
		for p := range b.Actuals {
			if p <= current {
				periods[p] = true
			}
		}
		for p := range periods {
			rate, ok := decimal.NewFromInt(1), true
			if b.Currency == "EUR" {
				rate, ok = fx.Rate("EUR", p)
			}
			a, measured := b.Actuals[p]
			if !ok {
				wantMissing++
				want.MeasuredUnknown = want.MeasuredUnknown || measured
				want.UnmeasuredUnknown = want.UnmeasuredUnknown || !measured
				continue
			}
			line := PeriodComparison{Period: p, Expected: b.ExpectedFor(p).Mul(rate)}
			if measured {
				line.Actual = new(a.Mul(rate))
			}
			want.Add(line)
		}
		if !got.Expected.Equal(want.Expected) || !got.Actual.Equal(want.Actual) || !got.Unmeasured.Equal(want.Unmeasured) ||
			got.Measured != want.Measured || got.Periods != want.Periods || got.MeasuredUnknown != want.MeasuredUnknown ||
			got.UnmeasuredUnknown != want.UnmeasuredUnknown || len(gotMissing) != wantMissing {
			t.Fatalf("benefit %d %+v:\n got %+v (%d missing)\nwant %+v (%d missing)", i, b, got, len(gotMissing), want, wantMissing)
		}
	}
}

// BuildCashFlows (which enters an even spread in base currency as a run of
// months) against each benefit's Expected series added month by month.
func TestBuildCashFlowsMatchesTheBenefitsSeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		h := Horizon{Start: MonthOf(2024, 1).Add(rng.IntN(5)), End: MonthOf(2024, 1).Add(5 + rng.IntN(40))}
		var bs []Benefit
		for range 1 + rng.IntN(6) {
			b := Benefit{ExpectedValue: decimal.New(int64(rng.IntN(10_000_000)), -int32(rng.IntN(3))), Frequency: Frequencies[rng.IntN(2)],
				Start: MonthOf(2023, 6).Add(rng.IntN(40)), Currency: "USD"}
			if rng.IntN(2) == 0 {
				b.End = new(b.Start.Add(rng.IntN(30)))
			}
			if rng.IntN(4) == 0 {
				b.Plan = []PlanEntry{{Period: b.Frequency.PeriodOf(b.Start.Add(rng.IntN(12))), Expected: d(123.45)}}
			}
			bs = append(bs, b)
		}
		got, _ := BuildCashFlows(h, bs, nil, BasisExpected, FX{Base: "USD"})
		want := make([]decimal.Decimal, h.Len())
		for _, b := range bs {
			for i, v := range b.Expected(h) {
				want[i] = want[i].Add(v)
			}
		}
		for i := range want {
			if !got.Benefits[i].Equal(want[i]) {
				t.Fatalf("horizon %v, benefits %+v: month %d = %s, want %s", h, bs, i, got.Benefits[i], want[i])
			}
		}
	}
}

// ComparisonSum is Comparison.Merge to the last digit and representation.
func TestComparisonSumIsMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var want Comparison
	var got ComparisonSum
	for i := range 5_000 {
		c := Comparison{Expected: decimal.New(r.Int64N(1e12)-5e11, int32(r.IntN(20)-16)), Actual: decimal.New(r.Int64N(1e9), int32(r.IntN(6)-4)),
			Unmeasured: decimal.New(r.Int64N(1e15), -16), Measured: r.IntN(5), Periods: r.IntN(9), MeasuredUnknown: i == 4000, UnmeasuredUnknown: i == 4100}
		want.Merge(c)
		got.Merge(c)
		if i%997 == 0 || i == 4999 {
			g := got.Comparison()
			if g.Expected.String() != want.Expected.String() || g.Actual.String() != want.Actual.String() || g.Unmeasured.String() != want.Unmeasured.String() ||
				g.Expected.Exponent() != want.Expected.Exponent() || g.Measured != want.Measured || g.Periods != want.Periods ||
				g.MeasuredUnknown != want.MeasuredUnknown || g.UnmeasuredUnknown != want.UnmeasuredUnknown {
				t.Fatalf("after %d merges: %+v, Merge's %+v", i+1, g, want)
			}
		}
	}
	var empty ComparisonSum
	if g := empty.Comparison(); !g.Expected.Equal(decimal.Zero) || g.Periods != 0 {
		t.Fatalf("empty sum: %+v", g)
	}
}

// PercentOf is part × 100 / whole at the division's precision, rounded as decimal.Div rounds:
// the same digits as multiplying by 100 first, for any magnitude and scale of either side.
func TestPercentOfIsTheQuotientOfPartTimesHundred(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 26))
	hundred := decimal.NewFromInt(100)
	for range 20000 {
		part := decimal.New(rng.Int64N(1e15)-5e14, int32(rng.IntN(12))-8)
		whole := decimal.New(rng.Int64N(1e12)-5e11, int32(rng.IntN(12))-8)
		if whole.IsZero() {
			continue
		}
		want := part.Mul(hundred).Div(whole)
		got := PercentOf(part, whole)
		if got.String() != want.String() || got.Exponent() != want.Exponent() {
			t.Fatalf("PercentOf(%s, %s) = %s (exponent %d), want %s (exponent %d)", part, whole, got, got.Exponent(), want, want.Exponent())
		}
	}
	if PercentOf(decimal.NewFromInt(5), decimal.Zero) != nil {
		t.Error("PercentOf of a zero whole is a number, want nil")
	}
}
