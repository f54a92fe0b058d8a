package finance

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

func goldenFlows(b *testing.B, name string) []float64 {
	i := slices.IndexFunc(goldenCases, func(c goldenCase) bool { return c.name == name })
	if i < 0 {
		b.Fatalf("no golden case %q", name)
	}
	return goldenCases[i].flows
}

// go test -run '^$' -bench . ./internal/finance
func BenchmarkIRR(b *testing.B) {
	for _, name := range []string{"horizon_60", "typical", "tiny_irr", "huge_irr", "two_sign_changes", "horizon_240"} {
		flows := goldenFlows(b, name)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := IRR(flows).Get(); !ok {
					b.Fatal("no IRR")
				}
			}
		})
	}
}

func BenchmarkEvaluate60(b *testing.B) {
	flows := goldenFlows(b, "horizon_60")
	cf := NewCashFlows(Horizon{MonthOf(2026, 1), MonthOf(2030, 12)})
	for t, v := range flows {
		if v < 0 {
			cf.Costs[t] = decimal.NewFromFloat(-v)
		} else {
			cf.Benefits[t] = decimal.NewFromFloat(v)
		}
	}
	for b.Loop() {
		Evaluate(cf, 0.08)
	}
}
