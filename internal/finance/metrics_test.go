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

// Payback: hand calculations. C_k is the cumulative net flow after month
// k; payback = j + (−C_j / CF_{j+1}) with j the last month whose C_j < 0,
// null (never_paid_back) when C_n < 0.
func TestPaybackMonths(t *testing.T) {
	for _, tc := range []struct {
		name   string
		net    []float64
		want   float64
		reason Reason
	}{
		// C = −300, −200, −100, 0: j = 3, 3 + 100/100 = 4 exactly.
		{"exactly at a month boundary", []float64{-300, 100, 100, 100}, 4, ""},
		// C = −250, −150, −50, +50: j = 3, 3 + 50/100 = 3.5.
		{"inside a month", []float64{-250, 100, 100, 100}, 3.5, ""},
		// C never < 0 and costs were paid: nothing left to pay back.
		{"invested, never under water", []float64{50, -10, -10}, 0, ""},
		{"zero flows", []float64{0, 0, 0}, 0, NoCosts},
		{"benefits only", []float64{10, 20}, 0, NoCosts},
		{"empty", nil, 0, NoCosts},
		// C = −1000, −900, ..., −500: never ≥ 0.
		{"never", []float64{-1000, 100, 100, 100, 100, 100}, 0, NeverPaidBack},
		{"all costs", []float64{-1, -1, -1}, 0, NeverPaidBack},
		// C = −100, +130, −2: positive in month 2, negative at the end.
		{"ends negative after a payback", []float64{-100, 230, -132}, 0, NeverPaidBack},
		// C = −100, +50, −150, −140, +60: the dip undoes the first payback;
		// j = 4, 4 + 140/200 = 4.7.
		{"the last turn counts", []float64{-100, 150, -200, 10, 200}, 4.7, ""},
		// C = 0, 0, 0, −1000, −700, −400, −100, +200: j = 7, 7 + 100/300.
		{"leading zero months", []float64{0, 0, 0, -1000, 300, 300, 300, 300, 300}, 7 + 100.0/300, ""},
		// The demo's capex one month late: C_1 = 0, C_2 = −1.5m, C_3 =
		// −1.35m, ..., C_11 = −0.15m, C_12 = 0: j = 11, 11 + 150k/150k = 12
		// (the first definition said 0).
		{"delayed capex", append([]float64{0, -1.5e6}, slices.Repeat([]float64{150000}, 12)...), 12, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PaybackMonths(goldenCashFlows(tc.net))
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

// The "typical" golden case taken whole (docs/numbers.md's worked example).
// NPV, IRR and MIRR are the oracle's (testdata/golden.json). By hand:
//   - costs: 120,000 + 20,000 + 35 × 1,500 = 192,500; benefits: 1,000 to
//     9,000 (t3..t11) = 45,000, plus 24 × 10,000 (t12..t35) = 240,000, in
//     all 285,000. ROI = 92,500 / 192,500 × 100 = 48.0519480519...% (= 3700/77).
//   - cumulative net: t0 −120,000; t1 −141,500; t2 −143,000; t3 −143,500;
//     t4..t11 add 500, 1,500, .., 7,500 (32,000) → −111,500; from t12 +8,500
//     a month: after t24 −1,000, after t25 +7,500. t25 is month k = 26, so
//     payback = 25 + 1,000/8,500 = 25.1176470588...
func TestEvaluateTypical(t *testing.T) {
	cases := loadGolden(t)
	golden := cases[slices.IndexFunc(cases, func(c goldenCase) bool { return c.Name == "typical" })]
	cf := typicalCashFlows()
	if !slices.Equal(cf.NetFloat(), golden.Flows) {
		t.Fatalf("the typical golden case is not typicalCashFlows: %v", golden.Flows)
	}
	m := Evaluate(cf, golden.Rate)
	if !m.TotalCosts.Equal(d(192500)) || !m.TotalBenefits.Equal(d(285000)) {
		t.Errorf("totals = %v benefits, %v costs; want 285000, 192500", m.TotalBenefits, m.TotalCosts)
	}
	if math.Abs(m.NPV-golden.NPV) > 1e-9*math.Abs(golden.NPV) {
		t.Errorf("NPV = %.15g, want %.15g", m.NPV, golden.NPV)
	}
	wantValue(t, "IRR", m.IRR, *golden.IRR.Value, 1e-9)
	wantValue(t, "MIRR", m.MIRR, *golden.MIRR.Value, 1e-9)
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
		wantAbsent(t, "MIRR", m.MIRR, NoCosts)
		wantAbsent(t, "ROI", m.ROIPercent, NoCosts)
		wantAbsent(t, "payback", m.PaybackMonths, NoCosts)
		// 100 discounted two months at 8 % a year: 100 / 1.08^(2/12).
		if want := 100 / math.Pow(1.08, 2.0/12); math.Abs(m.NPV-want) > 1e-9 {
			t.Errorf("NPV = %v, want %v", m.NPV, want)
		}
	})
	t.Run("zero flows", func(t *testing.T) {
		m := Evaluate(NewCashFlows(h), 0.08)
		wantAbsent(t, "IRR", m.IRR, NoCosts)
		wantAbsent(t, "ROI", m.ROIPercent, NoCosts)
		wantAbsent(t, "payback", m.PaybackMonths, NoCosts)
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
		wantAbsent(t, "MIRR", m.MIRR, NoSignChange)
		wantValue(t, "ROI", m.ROIPercent, 0, 0)
		wantValue(t, "payback", m.PaybackMonths, 0, 0) // invested, never under water
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
	annual := func(monthly ...float64) []float64 {
		out := make([]float64, len(monthly))
		for i, x := range monthly {
			out[i] = math.Pow(1+x, 12) - 1
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		net    []float64
		roots  []float64 // annual; the IRR when there is one
		reason Reason
	}{
		// −100(z−1.1)(z−1.2) = −100z² + 230z − 132: monthly 0.1 and 0.2.
		{"two positive roots", []float64{-100, 230, -132}, annual(0.1, 0.2), MultipleRoots},
		// −100(z−0.95)(z−1.2): monthly −0.05 and 0.2.
		{"a negative and a positive root", []float64{-100, 215, -114}, annual(-0.05, 0.2), MultipleRoots},
		{"leading and trailing zeros change nothing", []float64{0, 0, -100, 230, -132, 0, 0}, annual(0.1, 0.2), MultipleRoots},
		// −100(z−1.1)²: a double root touches 0 without a sign change; the
		// scan cannot see it (documented).
		{"double root", []float64{-100, 220, -121}, nil, DidNotConverge},
		// Two sign changes, one root in the range: −100(z−1.1)(z−20) has
		// its second root at 19 a month, above 10.
		{"two sign changes, one root in the range", []float64{-100, 2110, -2200}, annual(0.1), ""},
		// −z² + 3z − 3 has no real root (9 − 12 < 0) although the signs change.
		{"sign changes but no root", []float64{-1, 3, -3}, nil, DidNotConverge},
		{"no root on a long sparse series", append([]float64{-1, 3, -3}, make([]float64, 237)...), nil, DidNotConverge},
		// −1 + 1e12/(1+x) = 0 at x = 1e12 − 1, far above 10 a month.
		{"root above the range", []float64{-1, 1e12}, nil, DidNotConverge},
		// −1000 + 0.001/(1+x) = 0 at x = 1e-6 − 1, below −0.9999.
		{"root below the range", []float64{-1000, 0.001}, nil, DidNotConverge},
		{"not finite", []float64{-1, math.Inf(1)}, nil, DidNotConverge},
		{"single flow", []float64{-5}, nil, NoSignChange},
		{"empty", nil, nil, NoSignChange},
		// −1 + 2/(1+x) = 0 at x = 1: exactly representable.
		{"one month doubling", []float64{-1, 2}, annual(1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, roots := IRR(tc.net)
			if len(roots) != len(tc.roots) {
				t.Fatalf("roots = %v, want %v", roots, tc.roots)
			}
			for i := range roots {
				if math.Abs(roots[i]-tc.roots[i]) > 1e-9*max(1, math.Abs(tc.roots[i])) {
					t.Errorf("root %d = %v, want %v", i, roots[i], tc.roots[i])
				}
			}
			if tc.reason != "" {
				wantAbsent(t, "IRR", got, tc.reason)
				return
			}
			wantValue(t, "IRR", got, tc.roots[0], 1e-9*max(1, math.Abs(tc.roots[0])))
		})
	}
}

// MIRR by hand: −1000, +600, +600 at 12 % a year for both rates. Monthly
// r = 1.12^(1/12) − 1; the costs' present value is −1000 (month 0); the
// gains compounded to month 2: 600(1+r) + 600; m = (FV/1000)^(1/2) − 1;
// annual (1+m)^12 − 1 = (FV/1000)^6 − 1. The spreadsheet agrees:
// =(1+MIRR({-1000;600;600};r;r))^12-1.
func TestMIRR(t *testing.T) {
	r := math.Pow(1.12, 1.0/12) - 1
	fv := 600*(1+r) + 600
	wantValue(t, "MIRR", MIRR([]float64{-1000, 600, 600}, 0.12, 0.12), math.Pow(fv/1000, 6)-1, 1e-12)
	// Different finance and reinvestment rates: costs at month 1 discounted
	// at f, the gain at month 2 compounded nowhere (it is the last month).
	f := math.Pow(1.05, 1.0/12) - 1
	wantValue(t, "MIRR f≠r", MIRR([]float64{0, -1000, 1100}, 0.05, 0.3), math.Pow(1100/(1000/(1+f)), 6)-1, 1e-12)
	wantAbsent(t, "MIRR of gains only", MIRR([]float64{1, 2}, 0.1, 0.1), NoSignChange)
	wantAbsent(t, "MIRR of costs only", MIRR([]float64{-1, -2}, 0.1, 0.1), NoSignChange)
	wantAbsent(t, "MIRR of one month", MIRR([]float64{-1}, 0.1, 0.1), NoSignChange)
	wantAbsent(t, "MIRR not finite", MIRR([]float64{-1, math.NaN()}, 0.1, 0.1), DidNotConverge)
}

// typicalCashFlows is the "typical" golden case in parts (oracle.py's
// typical()): capex 120,000 at t0 and 20,000 at t1, opex 1,500 a month from
// t1; benefits from t3 ramping 1,000 a month up to 10,000.
func typicalCashFlows() CashFlows {
	cf := NewCashFlows(Horizon{MonthOf(2026, 1), MonthOf(2028, 12)})
	cf.Costs[0] = d(120000)
	cf.Costs[1] = d(20000)
	for t := 1; t < 36; t++ {
		cf.Costs[t] = cf.Costs[t].Add(d(1500))
	}
	for t := 3; t < 36; t++ {
		cf.Benefits[t] = d(min(10000, 1000*float64(t-2)))
	}
	return cf
}
