package finance

import (
	"math"
	"slices"
	"testing"
)

// wantValue fails unless r has a value within tol of want.
func wantValue(t *testing.T, what string, r Result, want, tol float64) {
	t.Helper()
	if v, ok := r.Get(); !ok || r.Reason != "" || math.Abs(v-want) > tol {
		t.Errorf("%s = %v, want %.15g", what, r, want)
	}
}

// wantAbsent fails unless r is null with the given reason.
func wantAbsent(t *testing.T, what string, r Result, reason Reason) {
	t.Helper()
	if r.Value != nil || r.Reason != reason {
		t.Errorf("%s = %v, want null (%s)", what, r, reason)
	}
}

// Payback: hand calculations. C_k is the cumulative net flow after month k;
// payback = (k−1) + (−C_{k−1} / CF_k) at the first k with C_k ≥ 0.
func TestPaybackMonths(t *testing.T) {
	for _, tc := range []struct {
		name   string
		net    []float64
		want   float64
		reason Reason
	}{
		// C = −300, −200, −100, 0: k = 4, 3 + 100/100 = 4 exactly.
		{"exactly at a month boundary", []float64{-300, 100, 100, 100}, 4, ""},
		// C = −250, −150, −50, +50: k = 4, 3 + 50/100 = 3.5.
		{"inside a month", []float64{-250, 100, 100, 100}, 3.5, ""},
		// C_1 = 50 ≥ 0: nothing to pay back.
		{"nothing to pay back", []float64{50, -10, -10}, 0, ""},
		{"zero flows", []float64{0, 0, 0}, 0, ""},
		{"empty", nil, 0, ""},
		// C = −1000, −900, ..., −500: never ≥ 0.
		{"never", []float64{-1000, 100, 100, 100, 100, 100}, 0, NeverPaidBack},
		{"all costs", []float64{-1, -1, -1}, 0, NeverPaidBack},
		// C = −100, +50, −150, −140: first k = 2, 1 + 100/150; the later dip
		// does not undo it.
		{"first payback is kept", []float64{-100, 150, -200, 10}, 1 + 100.0/150, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PaybackMonths(tc.net)
			if tc.reason != "" {
				wantAbsent(t, "PaybackMonths", got, tc.reason)
				return
			}
			wantValue(t, "PaybackMonths", got, tc.want, 1e-12)
		})
	}
}

// ROI: hand calculations of (benefits − costs) / costs × 100.
func TestROIPercent(t *testing.T) {
	wantValue(t, "ROI(2500, 1000)", ROIPercent(d(2500), d(1000)), 150, 1e-12) // 1500/1000
	wantValue(t, "ROI(0, 1000)", ROIPercent(d(0), d(1000)), -100, 1e-12)      // −1000/1000
	wantValue(t, "ROI(1000, 1000)", ROIPercent(d(1000), d(1000)), 0, 0)
	wantAbsent(t, "ROI(500, 0)", ROIPercent(d(500), d(0)), NoCosts)
	wantAbsent(t, "ROI(0, 0)", ROIPercent(d(0), d(0)), NoCosts)
}

// The "typical" golden case taken whole. NPV and IRR are the Calc numbers of
// goldenCases. By hand:
//   - costs: 120,000 + 20,000 + 35 × 1,500 = 192,500; benefits: 1,000 to
//     9,000 (t3..t11) = 45,000, plus 24 × 10,000 (t12..t35) = 240,000, in
//     all 285,000. ROI = 92,500 / 192,500 × 100 = 48.0519480519...% (= 3700/77).
//   - cumulative net: t0 −120,000; t1 −141,500; t2 −143,000; t3 −143,500;
//     t4..t11 add 500, 1,500, .., 7,500 (32,000) → −111,500; from t12 +8,500
//     a month: after t24 −1,000, after t25 +7,500. t25 is month k = 26, so
//     payback = 25 + 1,000/8,500 = 25.1176470588...
func TestEvaluateTypical(t *testing.T) {
	golden := goldenCases[slices.IndexFunc(goldenCases, func(c goldenCase) bool { return c.name == "typical" })]
	m := Evaluate(typicalCashFlows(), golden.rate)
	if !m.TotalCosts.Equal(d(192500)) || !m.TotalBenefits.Equal(d(285000)) {
		t.Errorf("totals = %v benefits, %v costs; want 285000, 192500", m.TotalBenefits, m.TotalCosts)
	}
	if math.Abs(m.NPV-golden.npv) > 1e-6*math.Abs(golden.npv) {
		t.Errorf("NPV = %.15g, want %.15g", m.NPV, golden.npv)
	}
	wantValue(t, "IRR", m.IRR, golden.irr, 1e-7)
	wantValue(t, "ROI", m.ROIPercent, 3700.0/77, 1e-9)
	wantValue(t, "payback", m.PaybackMonths, 25+1000.0/8500, 1e-9)
}

func TestEvaluateWithoutValues(t *testing.T) {
	h := Horizon{MonthOf(2026, 1), MonthOf(2026, 12)}
	t.Run("benefits only", func(t *testing.T) {
		cf := NewCashFlows(h)
		cf.Benefits[2] = d(100)
		m := Evaluate(cf, 0.08)
		wantAbsent(t, "IRR", m.IRR, NoCosts)
		wantAbsent(t, "ROI", m.ROIPercent, NoCosts)
		wantValue(t, "payback", m.PaybackMonths, 0, 0)
		// 100 discounted two months at 8 % a year: 100 / 1.08^(2/12).
		if want := 100 / math.Pow(1.08, 2.0/12); math.Abs(m.NPV-want) > 1e-9 {
			t.Errorf("NPV = %v, want %v", m.NPV, want)
		}
	})
	t.Run("zero flows", func(t *testing.T) {
		m := Evaluate(NewCashFlows(h), 0.08)
		wantAbsent(t, "IRR", m.IRR, NoCosts)
		wantAbsent(t, "ROI", m.ROIPercent, NoCosts)
		wantValue(t, "payback", m.PaybackMonths, 0, 0)
		if m.NPV != 0 {
			t.Errorf("NPV = %v", m.NPV)
		}
	})
	t.Run("costs offset month by month", func(t *testing.T) {
		cf := NewCashFlows(h)
		for i := range cf.Costs {
			cf.Costs[i], cf.Benefits[i] = d(100), d(100)
		}
		m := Evaluate(cf, 0.08)
		wantAbsent(t, "IRR", m.IRR, NoSignChange)
		wantValue(t, "ROI", m.ROIPercent, 0, 0)
	})
	t.Run("all costs", func(t *testing.T) {
		cf := NewCashFlows(h)
		cf.Costs[0] = d(1000)
		m := Evaluate(cf, 0.08)
		wantAbsent(t, "IRR", m.IRR, NoSignChange)
		wantAbsent(t, "payback", m.PaybackMonths, NeverPaidBack)
		wantValue(t, "ROI", m.ROIPercent, -100, 0)
	})
}

func TestNPVRates(t *testing.T) {
	// By hand: at 0 % the NPV is the plain sum; the first month is never
	// discounted; twelve months at r are worth 1/(1+r) exactly.
	if got := NPV([]float64{-100, 30, 30, 50}, 0); got != 10 {
		t.Errorf("NPV at 0 = %v, want 10", got)
	}
	if got := NPV([]float64{-100}, 0.5); got != -100 {
		t.Errorf("NPV of one month = %v, want -100", got)
	}
	year := make([]float64, 13)
	year[12] = 110
	if got := NPV(year, 0.1); math.Abs(got-100) > 1e-9 {
		t.Errorf("110 in month 12 at 10 %% = %v, want 100", got)
	}
	if got := NPV(nil, 0.08); got != 0 {
		t.Errorf("NPV of nothing = %v", got)
	}
	if got := MonthlyRate(AnnualRate(0.01)); math.Abs(got-0.01) > 1e-15 {
		t.Errorf("MonthlyRate(AnnualRate(0.01)) = %v", got)
	}
}

// IRR behaviour beyond the golden table. Flows built from known roots: with
// z = 1+x, CF0·z² + CF1·z + CF2 = 0 has the roots of the factors below.
func TestIRRRoots(t *testing.T) {
	for _, tc := range []struct {
		name   string
		net    []float64
		want   float64 // annual
		reason Reason
	}{
		// −100(z−1.1)(z−1.2) = −100z² + 230z − 132: monthly 0.1 and 0.2;
		// the nearer to 0 is 0.1.
		{"two positive roots: the nearer", []float64{-100, 230, -132}, math.Pow(1.1, 12) - 1, ""},
		// −100(z−0.95)(z−1.2): monthly −0.05 and 0.2: −0.05 is nearer.
		{"a negative root nearer than the positive one", []float64{-100, 215, -114}, math.Pow(0.95, 12) - 1, ""},
		// −100(z−0.8)(z−1.05): monthly −0.2 and 0.05: 0.05 is nearer.
		{"a positive root nearer than the negative one", []float64{-100, 185, -84}, math.Pow(1.05, 12) - 1, ""},
		{"leading and trailing zeros change nothing", []float64{0, 0, -100, 230, -132, 0, 0}, math.Pow(1.1, 12) - 1, ""},
		// −z² + 3z − 3 has no real root (9 − 12 < 0) although the signs change.
		{"sign changes but no root", []float64{-1, 3, -3}, 0, DidNotConverge},
		{"no root on a long sparse series", append([]float64{-1, 3, -3}, make([]float64, 237)...), 0, DidNotConverge},
		// −1 + 1e12/(1+x) = 0 at x = 1e12 − 1, far above 10 a month.
		{"root above the range", []float64{-1, 1e12}, 0, DidNotConverge},
		// −1000 + 0.001/(1+x) = 0 at x = 1e-6 − 1, below −0.9999.
		{"root below the range", []float64{-1000, 0.001}, 0, DidNotConverge},
		{"not finite", []float64{-1, math.Inf(1)}, 0, DidNotConverge},
		{"single flow", []float64{-5}, 0, NoSignChange},
		{"empty", nil, 0, NoSignChange},
		// −1 + 2/(1+x) = 0 at x = 1: exactly representable.
		{"one month doubling", []float64{-1, 2}, math.Pow(2, 12) - 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := IRR(tc.net)
			if tc.reason != "" {
				wantAbsent(t, "IRR", got, tc.reason)
				return
			}
			wantValue(t, "IRR", got, tc.want, 1e-7*max(1, math.Abs(tc.want)))
		})
	}
}
