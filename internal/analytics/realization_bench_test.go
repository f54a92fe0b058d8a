package analytics

import (
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// BenchmarkComputeRealizationPortfolio is the analytics bench's large tenant
// in memory: 1,000 initiatives × 10 monthly USD benefits × 36 actuals, each
// benefit compared from its actuals' summary as the API does.
func BenchmarkComputeRealizationPortfolio(b *testing.B) {
	start, end := ym("2023-01"), ym("2025-12")
	var bs []RealizationBenefit
	var ids []uuid.UUID
	for i := range 1000 {
		in := uuid.New()
		ids = append(ids, in)
		for j := range 10 {
			fb := finance.Benefit{ExpectedValue: decimal.NewFromInt(int64(12_000 + 120*j)), Frequency: finance.MeasuredMonthly, Start: start, End: &end,
				Currency: "USD", Actuals: map[finance.Month]decimal.Decimal{}}
			for m := start; m <= end; m++ {
				fb.Actuals[m] = decimal.NewFromFloat(950.25 + float64(i%7))
			}
			sum := &finance.ActualSummary{Count: len(fb.Actuals), Last: end}
			for _, v := range fb.Actuals {
				sum.Total = sum.Total.Add(v)
			}
			fb.Actuals = nil
			bs = append(bs, RealizationBenefit{ID: uuid.New(), InitiativeID: in, Category: "cost_savings", Unit: "currency", Money: true, Benefit: fb, Summary: sum})
		}
	}
	fx := finance.NewRates("USD").FX()
	for b.Loop() {
		ComputeRealization(ids, bs, ym("2026-06"), fx)
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
