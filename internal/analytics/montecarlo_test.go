package analytics

import (
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

// The Monte Carlo golden values come from testdata/montecarlo_golden.py, an
// independent Python implementation of the documented method (docs/numbers.md,
// ROI analysis); its output is recorded in
// testdata/montecarlo_golden.out:
//
//	P: seed b92687b82d650b9c p10 45.1422533533 p50 75.1970120798 p90 104.7344732387 min 24.445804 max 135.089047
//	symmetric: seed 110ac8a58bd6f633 p10 -17.3235329704 p50 0.5464054806 p90 17.5907567380 min -25.212589 max 30.190264
func decs(vs ...float64) []decimal.Decimal {
	out := make([]decimal.Decimal, len(vs))
	for i, v := range vs {
		out[i] = dec(v)
	}
	return out
}

func TestSimulateROIGolden(t *testing.T) {
	for _, c := range []struct {
		name          string
		cf            finance.CashFlows
		seed          string
		p10, p50, p90 float64
	}{
		{"P", finance.CashFlows{Start: ym("2026-01"), Benefits: decs(2980, 1500, 2500, 4400, 2000, 2000, 4400, 2000, 2000, 4500, 2000, 2000),
			Costs: decs(12500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500, 500)}, "b92687b82d650b9c", 45.1422533533, 75.1970120798, 104.7344732387},
		{"symmetric", finance.CashFlows{Start: ym("2024-01"), Benefits: decs(0, 1000, 1000, 1000, 0), Costs: decs(3000, 0, 0, 0, 0)},
			"110ac8a58bd6f633", -17.3235329704, 0.5464054806, 17.5907567380},
	} {
		t.Run(c.name, func(t *testing.T) {
			mc, r := SimulateROI(c.cf, MonteCarloRuns)
			if r.Value == nil || mc.Runs != 1000 || SeedText(mc.Seed) != c.seed {
				t.Fatalf("%+v %v", mc, r)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"p10", mc.P10, c.p10}, {"p50", mc.P50, c.p50}, {"p90", mc.P90, c.p90}} {
				if math.Abs(f.got-f.want) > 1e-8 {
					t.Errorf("%s = %.10f, want %.10f", f.name, f.got, f.want)
				}
			}
			// Ordered, and inside the extremes: all benefits −20 % and a month late with
			// costs +10 %, against benefits +20 % on time with costs −10 %.
			lo := c.cf.Shocked(finance.Shock{BenefitFactor: 0.8, CostFactor: 1.1, BenefitDelayMonths: 1})
			hi := c.cf.Shocked(BestCase)
			minROI, _ := finance.ROIPercent(lo.TotalBenefits(), lo.TotalCosts()).Get()
			maxROI, _ := finance.ROIPercent(hi.TotalBenefits(), hi.TotalCosts()).Get()
			if !(minROI <= mc.P10 && mc.P10 <= mc.P50 && mc.P50 <= mc.P90 && mc.P90 <= maxROI) {
				t.Errorf("not %v ≤ %v ≤ %v ≤ %v ≤ %v", minROI, mc.P10, mc.P50, mc.P90, maxROI)
			}
			// Deterministic: the same series, the same figures.
			if again, _ := SimulateROI(c.cf, MonteCarloRuns); again != mc {
				t.Errorf("second run %+v, first %+v", again, mc)
			}
		})
	}
	// Symmetric case (benefits = costs, the delay loses nothing): ROI = fb/fc − 1 with fb
	// and fc symmetric around 1, whose median is exactly 0; 1,000 runs land close.
	mc, _ := SimulateROI(finance.CashFlows{Start: ym("2024-01"), Benefits: decs(0, 1000, 1000, 1000, 0), Costs: decs(3000, 0, 0, 0, 0)}, MonteCarloRuns)
	if math.Abs(mc.P50) > 2 {
		t.Errorf("symmetric p50 %v, want within 2 points of 0", mc.P50)
	}
	// Other data, another seed.
	other := finance.CashFlows{Start: ym("2024-01"), Benefits: decs(0, 1000, 1000, 1000.01, 0), Costs: decs(3000, 0, 0, 0, 0)}
	if SeedOf(other) == mc.Seed {
		t.Error("a changed series kept its seed")
	}
	// No costs: no ROI, no simulation.
	if _, r := SimulateROI(finance.CashFlows{Start: ym("2024-01"), Benefits: decs(1), Costs: decs(0)}, MonteCarloRuns); r.Reason != finance.NoCosts {
		t.Errorf("no costs: %v", r)
	}
}

// The delay scenario and the Monte Carlo inside ComputeROI (golden portfolio
// of roi_test.go): P's benefits one month later lose December's 2,000:
// (30,280 − 18,000) / 18,000 = 68.2222 %; P+Q lose 2,000 too: (36,280 −
// 24,000) / 24,000 = 51.1666 %.
func TestComputeROIDelayAndMonteCarlo(t *testing.T) {
	p, q, fx := goldenPortfolio()
	r := ComputeROI([]Initiative{p}, Window{Label: Lifetime, Lifetime: true}, ym("2026-06"), 0.10, finance.BasisActual, fx)
	near(t, "P delayed", r.Delayed, 12_280.0/180, 1e-12)
	if r.MonteCarlo == nil || r.MonteCarlo.Runs != MonteCarloRuns {
		t.Fatalf("monte carlo %+v (%s)", r.MonteCarlo, r.MonteCarloReason)
	}
	// The series carries 1,800 × 1.10 in floating point, so its seed is its own; the
	// order and the bounds hold whatever the draws: at worst (30,280 × 0.8 − 19,800) /
	// 19,800 = 22.34 %, at best the best case 139.11 %.
	if mc := r.MonteCarlo; !(mc.P10 <= mc.P50 && mc.P50 <= mc.P90) || mc.P10 < 4_424.0/198 || mc.P90 > 22_536.0/162 {
		t.Errorf("monte carlo %+v", mc)
	}
	r = ComputeROI([]Initiative{p, q}, Window{Label: Lifetime, Lifetime: true}, ym("2026-06"), 0.10, finance.BasisActual, fx)
	near(t, "P+Q delayed", r.Delayed, 12_280.0/240, 1e-12)
	// No data: every scenario absent, no simulation.
	r = ComputeROI(nil, Window{Label: Lifetime, Lifetime: true}, ym("2026-06"), 0.1, finance.BasisActual, finance.FX{})
	if r.Delayed.Reason != NoData || r.MonteCarlo != nil || r.MonteCarloReason != NoData {
		t.Errorf("no data: %+v", r)
	}
}

// Confidence: coverage first, then one level lower when the forecast WAPE is
// above 25 %.
func TestDowngrade(t *testing.T) {
	for _, c := range []struct {
		in   Confidence
		wape *float64
		want Confidence
	}{
		{High, nil, High}, {High, new(0.25), High}, {High, new(0.2501), Medium}, {Medium, new(0.4), Low}, {Low, new(0.9), Low}, {Medium, new(0.1), Medium},
	} {
		r := ROI{Confidence: c.in}
		r.ApplyAccuracy(c.wape)
		if r.Confidence != c.want || r.ForecastWAPE != c.wape {
			t.Errorf("%s with %v → %s, want %s", c.in, c.wape, r.Confidence, c.want)
		}
	}
}
