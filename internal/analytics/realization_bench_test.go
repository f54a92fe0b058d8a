package analytics

import (
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// BenchmarkComputeRealizationPortfolio is the analytics bench's large tenant
// in memory: 1,000 initiatives × 3 categories summed in SQL (the 10,000
// monthly USD benefits' group sums, as the API reads them), none at risk.
func BenchmarkComputeRealizationPortfolio(b *testing.B) {
	var sums []GroupSum
	var ids []uuid.UUID
	for i := range 1000 {
		in := uuid.New()
		ids = append(ids, in)
		for _, category := range []string{"cost_savings", "productivity", "revenue_growth"} {
			c := finance.Comparison{Expected: decimal.NewFromInt(36_000 * 3), Actual: decimal.NewFromFloat(34_209.25 + float64(i%7)),
				Unmeasured: decimal.Zero, Measured: 108, Periods: 108}
			sums = append(sums, GroupSum{InitiativeID: in, Category: category, Comparison: c})
		}
	}
	fx := finance.NewRates("USD").FX()
	for b.Loop() {
		ComputeRealization(ids, sums, nil, ym("2026-06"), fx)
	}
}

// BenchmarkComputeTrendsPortfolio: the bench's 36 months by category over
// the same tenant (5 categories).
func BenchmarkComputeTrendsPortfolio(b *testing.B) {
	start, end := ym("2023-01"), ym("2025-12")
	var bs []TrendBenefit
	for i := range 10_000 {
		fb := finance.Benefit{ExpectedValue: decimal.NewFromInt(int64(12_000 + 120*(i%10))), Frequency: finance.MeasuredMonthly, Start: start, End: &end, Currency: "USD"}
		bs = append(bs, TrendBenefit{Group: []string{"a", "b", "c", "d", "e"}[i%5], Benefit: fb})
	}
	fx := finance.NewRates("USD").FX()
	h := finance.Horizon{Start: start, End: end}
	for b.Loop() {
		ComputeTrends(h, ym("2026-06"), []string{"a", "b", "c", "d", "e"}, bs, nil, fx)
	}
}
