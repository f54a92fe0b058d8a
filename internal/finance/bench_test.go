package finance

import (
	"slices"
	"testing"
)

func goldenFlows(b *testing.B, name string) []float64 {
	cases := loadGolden(b)
	i := slices.IndexFunc(cases, func(c goldenCase) bool { return c.Name == name })
	if i < 0 {
		b.Fatalf("no golden case %q", name)
	}
	return cases[i].Flows
}

// go test -run '^$' -bench . ./internal/finance
func BenchmarkIRR(b *testing.B) {
	for _, name := range []string{"seasonal_60", "typical", "tiny_irr", "huge_irr", "two_sign_changes", "growth_240", "reinvest_120"} {
		flows := goldenFlows(b, name)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, roots := IRR(flows); len(roots) == 0 {
					b.Fatal("no IRR")
				}
			}
		})
	}
}

func BenchmarkEvaluate60(b *testing.B) {
	cf := goldenCashFlows(goldenFlows(b, "seasonal_60"))
	for b.Loop() {
		Evaluate(cf, 0.08)
	}
}
