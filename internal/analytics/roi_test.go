package analytics

import (
	"errors"
	"math"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/finance"
)

func ym(s string) finance.Month {
	m, err := finance.ParseMonth(s)
	if err != nil {
		panic(err)
	}
	return m
}

// The golden portfolio, current month 2026-06, base USD, discount rate 10 %,
// fiscal years from January. Every figure below is worked out by hand from
// the definitions (docs/analytics.md, "ROI analysis"); NPV and IRR by LibreOffice Calc
// over the hand-made net flows (testdata/roi_golden.fods, evaluated headless
// by testdata/roi_golden.sh: NPV = CF0 + NPV((1+10 %)^(1/12) − 1; CF1..),
// IRR annual = (1 + IRR(CF0..; 0.01))^12 − 1).
//
// Initiative P
//
//	costs   12,000 USD once 2026-01; 500 USD monthly 2026-01 .. 2026-12
//	A  USD monthly 24,000/yr 2026-01 .. 2026-12 (2,000 a month)
//	   actuals 01 1,000, 02 1,500, 03 2,500, 04 2,000 (none in 05, 06)
//	B  EUR quarterly 8,000/yr 2026-01 .. 2026-12 (2,000 a quarter), actual 01 1,800
//	FX EUR 2026-01 1.10, 2026-04 1.20, 2026-07 1.20, 2026-10 1.25
//
// Horizon 2026-01 .. 2026-12; latest actual 2026-04, so B's 04 quarter (no
// actual) takes its expected value. Benefits by month:
//
//	01 1,000 + 1,800 × 1.10 = 2,980   02 1,500   03 2,500
//	04 2,000 + 2,000 × 1.20 = 4,400   05 2,000   06 2,000
//	07 2,000 + 2,000 × 1.20 = 4,400   08 2,000   09 2,000
//	10 2,000 + 2,000 × 1.25 = 4,500   11 2,000   12 2,000      total 32,280
//
// Costs 12,500 in 01, 500 in 02..12: 18,000. Net −9,520, 1,000, 2,000,
// 3,900, 1,500, 1,500, 3,900, 1,500, 1,500, 4,000, 1,500, 1,500.
//
//	ROI      = (32,280 − 18,000) / 18,000 × 100 = 79.3333…
//	payback  cumulative −9,520 −8,520 −6,520 −2,620 −1,120 +380:
//	         5 + 1,120 / 1,500 = 5.74666…
//	best     (32,280 × 1.2 − 18,000 × 0.9) / 16,200 = 22,536 / 16,200 = 139.1111…
//	worst    (32,280 × 0.8 − 18,000 × 1.1) / 19,800 = 6,024 / 19,800 = 30.4242…
//	coverage A 01..06: 4 of 6 with actuals; B 01, 04: 1 of 2 → 5/8 = 0.625, medium
//	Calc     NPV 13,172.5022854592, IRR 6.92087006599256
//
// ytd (2026-01 .. 2026-06): benefits 15,380, costs 15,000: ROI 380/15,000 =
// 2.5333…, payback 5.74666…, coverage 5/8; Calc NPV 143.433246570246, IRR
// 0.166969985603247.
//
// 2026-Q2 (04 .. 06): benefits 8,400, costs 1,500: ROI 460, payback 0 (the
// first month is already positive), IRR none (no sign change), coverage A
// 04..06 1 of 3, B 04 0 of 1 → 1/4, low.
//
// Initiative Q: 6,000 USD once 2026-03; C USD monthly 12,000/yr 2026-03 ..
// 2026-08 (1,000 a month), no actuals. Portfolio P+Q over 2026-01 .. 2026-12:
//
//	net      −9,520, 1,000, −3,000, 4,900, 2,500, 2,500, 4,900, 2,500, 1,500, 4,000, 1,500, 1,500
//	ROI      (38,280 − 24,000) / 24,000 = 59.5
//	payback  cumulative … −1,620 after 06, +3,280 after 07: 6 + 1,620 / 4,900 = 6.33061224…
//	best     (45,936 − 21,600) / 21,600 = 112.6666…;  worst (30,624 − 26,400) / 26,400 = 16
//	coverage 5 of 8 + 0 of 4 (C 03..06) = 5/12 → low
//	Calc     NPV 13,056.9312385905, IRR 4.76118978205806
func goldenPortfolio() (p, q Initiative, fx finance.FX) {
	end := ym("2026-12")
	p = Initiative{
		Benefits: []finance.Benefit{
			{ExpectedValue: dec(24_000), Frequency: finance.MeasuredMonthly, Start: ym("2026-01"), End: &end, Currency: "USD",
				Actuals: map[finance.Month]decimal.Decimal{ym("2026-01"): dec(1_000), ym("2026-02"): dec(1_500), ym("2026-03"): dec(2_500), ym("2026-04"): dec(2_000)}},
			{ExpectedValue: dec(8_000), Frequency: finance.MeasuredQuarterly, Start: ym("2026-01"), End: &end, Currency: "EUR",
				Actuals: map[finance.Month]decimal.Decimal{ym("2026-01"): dec(1_800)}},
		},
		Costs: []finance.Cost{
			{Amount: dec(12_000), Currency: "USD", Recurrence: finance.Once, Period: ym("2026-01")},
			{Amount: dec(500), Currency: "USD", Recurrence: finance.Monthly, Period: ym("2026-01"), End: &end},
		},
	}
	qEnd := ym("2026-08")
	q = Initiative{
		Benefits: []finance.Benefit{{ExpectedValue: dec(12_000), Frequency: finance.MeasuredMonthly, Start: ym("2026-03"), End: &qEnd, Currency: "USD"}},
		Costs:    []finance.Cost{{Amount: dec(6_000), Currency: "USD", Recurrence: finance.Once, Period: ym("2026-03")}},
	}
	rates := finance.NewRates("USD")
	for period, r := range map[string]float64{"2026-01": 1.10, "2026-04": 1.20, "2026-07": 1.20, "2026-10": 1.25} {
		if err := rates.Set("EUR", ym(period), dec(r)); err != nil {
			panic(err)
		}
	}
	return p, q, rates.FX()
}

func near(t *testing.T, what string, got finance.Result, want float64, tol float64) {
	t.Helper()
	v, ok := got.Get()
	if !ok || math.Abs(v-want) > tol*max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestComputeROIGolden(t *testing.T) {
	p, q, fx := goldenPortfolio()
	current := ym("2026-06")
	window := func(s string) Window {
		w, err := ParseWindow(s, current, 1)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	type want struct {
		from, to                                string
		benefits, costs, roi, payback, npv, irr float64
		best, worst, coverage                   float64
		irrReason                               finance.Reason
		confidence                              Confidence
	}
	for _, c := range []struct {
		name   string
		ins    []Initiative
		period string
		basis  finance.Basis
		want   want
	}{
		{"P lifetime", []Initiative{p}, "lifetime", finance.BasisActual, want{"2026-01", "2026-12", 32_280, 18_000, 14_280.0 / 180, 5 + 1_120.0/1_500, 13172.5022854592, 6.92087006599256,
			22_536.0 / 162, 6_024.0 / 198, 0.625, "", Medium}},
		{"P ytd", []Initiative{p}, "ytd", finance.BasisActual, want{"2026-01", "2026-06", 15_380, 15_000, 380.0 / 150, 5 + 1_120.0/1_500, 143.433246570246, 0.166969985603247,
			(15_380*1.2 - 13_500) / 135, (15_380*0.8 - 16_500) / 165, 0.625, "", Medium}},
		{"P 2026-Q2", []Initiative{p}, "2026-Q2", finance.BasisActual, want{"2026-04", "2026-06", 8_400, 1_500, 460, 0, math.NaN(), 0,
			(8_400*1.2 - 1_350) / 13.5, (8_400*0.8 - 1_650) / 16.5, 0.25, finance.NoSignChange, Low}},
		// The plan basis ignores the actuals: USD 2,000 a month plus EUR
		// 2,000 a quarter at 1.10, 1.20, 1.20, 1.25 = 24,000 + 9,500;
		// cumulative −8,300, −6,800, −5,300, −1,400, +100: payback 4 +
		// 1,400/1,500 = 74/15. NPV and IRR by testdata/oracle.py's functions
		// of internal/finance (60-digit decimals) on these flows.
		{"P lifetime plan", []Initiative{p}, "lifetime", finance.BasisExpected, want{"2026-01", "2026-12", 33_500, 18_000, 15_500.0 / 180, 74.0 / 15, 14396.4265213278, 10.6867757383139,
			(33_500*1.2 - 16_200) / 162, (33_500*0.8 - 19_800) / 198, 0.625, "", Medium}},
		{"P+Q lifetime", []Initiative{p, q}, "", finance.BasisActual, want{"2026-01", "2026-12", 38_280, 24_000, 59.5, 6 + 1_620.0/4_900, 13056.9312385905, 4.76118978205806,
			24_336.0 / 216, 16, 5.0 / 12, "", Low}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ComputeROI(c.ins, window(c.period), current, 0.10, c.basis, fx)
			w := c.want
			if r.Basis != c.basis {
				t.Errorf("basis %v, want %v", r.Basis, c.basis)
			}
			if r.Horizon == nil || r.Horizon.Start != ym(w.from) || r.Horizon.End != ym(w.to) {
				t.Errorf("horizon %v, want %s..%s", r.Horizon, w.from, w.to)
			}
			if r.TotalBenefits.Value == nil || !r.TotalBenefits.Value.Equal(dec(w.benefits)) || r.TotalCosts.Value == nil || !r.TotalCosts.Value.Equal(dec(w.costs)) {
				t.Errorf("totals %v, %v; want %v, %v", r.TotalBenefits.Value, r.TotalCosts.Value, w.benefits, w.costs)
			}
			near(t, "roi", r.ROIPercent, w.roi, 1e-12)
			near(t, "payback", r.PaybackMonths, w.payback, 1e-12)
			near(t, "best", r.Best, w.best, 1e-12)
			near(t, "worst", r.Worst, w.worst, 1e-12)
			if !math.IsNaN(w.npv) {
				near(t, "npv", r.NPV, w.npv, 1e-9)
			}
			if w.irrReason != "" {
				if r.IRR.Reason != w.irrReason {
					t.Errorf("irr %v, want null (%s)", r.IRR, w.irrReason)
				}
			} else {
				near(t, "irr", r.IRR, w.irr, 1e-7)
			}
			if r.Coverage == nil || math.Abs(*r.Coverage-w.coverage) > 1e-12 || r.Confidence != w.confidence {
				t.Errorf("coverage %v %s, want %v %s", r.Coverage, r.Confidence, w.coverage, w.confidence)
			}
			if len(r.Missing) != 0 {
				t.Errorf("missing %v", r.Missing)
			}
		})
	}
}

// A rate missing anywhere in the series nulls every money figure and names
// the rate; a window that does not need it is unaffected.
func TestComputeROIMissingRate(t *testing.T) {
	p, _, _ := goldenPortfolio()
	rates := finance.NewRates("USD")
	for period, r := range map[string]float64{"2026-01": 1.10, "2026-04": 1.20, "2026-07": 1.20} { // no 2026-10
		_ = rates.Set("EUR", ym(period), dec(r))
	}
	current := ym("2026-06")
	r := ComputeROI([]Initiative{p}, Window{Label: Lifetime, Lifetime: true}, current, 0.10, finance.BasisActual, rates.FX())
	if len(r.Missing) != 1 || r.Missing[0] != (finance.MissingRate{Currency: "EUR", Period: ym("2026-10")}) {
		t.Errorf("missing %v", r.Missing)
	}
	for name, f := range map[string]finance.Result{"roi": r.ROIPercent, "npv": r.NPV, "irr": r.IRR, "payback": r.PaybackMonths, "best": r.Best, "worst": r.Worst} {
		if f.Value != nil || f.Reason != MissingFXRates {
			t.Errorf("%s = %v, want null (missing_fx_rates)", name, f)
		}
	}
	if r.TotalCosts.Value != nil || r.TotalCosts.Reason != MissingFXRates {
		t.Errorf("costs = %v, want null (missing_fx_rates)", r.TotalCosts)
	}
	if r.Confidence != Medium { // coverage does not need rates
		t.Errorf("confidence %s", r.Confidence)
	}
	ytd, _ := ParseWindow("ytd", current, 1)
	r = ComputeROI([]Initiative{p}, ytd, current, 0.10, finance.BasisActual, rates.FX())
	near(t, "ytd roi", r.ROIPercent, 380.0/150, 1e-12)
}

// Nothing to analyse: every figure null with no_data, confidence low.
func TestComputeROINoData(t *testing.T) {
	r := ComputeROI(nil, Window{Label: Lifetime, Lifetime: true}, ym("2026-06"), 0.1, finance.BasisActual, finance.FX{})
	if r.Horizon != nil || r.ROIPercent.Reason != NoData || r.IRR.Reason != NoData || r.Confidence != Low || r.Coverage != nil {
		t.Errorf("%+v", r)
	}
	// Benefits only, no costs: ROI, IRR, MIRR and payback (nothing was
	// invested) say no_costs; NPV exists.
	end := ym("2026-03")
	r = ComputeROI([]Initiative{{Benefits: []finance.Benefit{{ExpectedValue: dec(12), Frequency: finance.MeasuredMonthly, Start: ym("2026-01"), End: &end, Currency: "USD"}}}},
		Window{Label: Lifetime, Lifetime: true}, ym("2026-06"), 0, finance.BasisActual, finance.FX{})
	if r.ROIPercent.Reason != finance.NoCosts || r.IRR.Reason != finance.NoCosts || r.MIRR.Reason != finance.NoCosts ||
		r.PaybackMonths.Reason != finance.NoCosts || r.Best.Reason != finance.NoCosts {
		t.Errorf("no costs: %+v", r)
	}
	near(t, "npv at 0 %", r.NPV, 3, 1e-12)
}

func TestParseWindow(t *testing.T) {
	current := ym("2026-06")
	for _, c := range []struct {
		in       string
		fyStart  int
		from, to string
	}{
		{"ytd", 1, "2026-01", "2026-06"},
		{"ytd", 4, "2026-04", "2026-06"},
		{"ytd", 7, "2025-07", "2026-06"},
		{"2026", 1, "2026-01", "2026-12"},
		{"2026", 4, "2026-04", "2027-03"},
		{"2026-Q1", 1, "2026-01", "2026-03"},
		{"2026-Q4", 4, "2027-01", "2027-03"},
		{"2000-Q2", 1, "2000-04", "2000-06"},
		{"2100", 1, "2100-01", "2100-12"},
	} {
		w, err := ParseWindow(c.in, current, c.fyStart)
		if err != nil || w.Lifetime || w.Label != c.in || w.Months.Start != ym(c.from) || w.Months.End != ym(c.to) {
			t.Errorf("%s (FY from %d) = %+v %v, want %s..%s", c.in, c.fyStart, w, err, c.from, c.to)
		}
	}
	for _, in := range []string{"", "lifetime"} {
		if w, err := ParseWindow(in, current, 1); err != nil || !w.Lifetime || w.Label != Lifetime {
			t.Errorf("%q = %+v %v", in, w, err)
		}
	}
	for _, in := range []string{"LIFETIME", "YTD", "26", "1999", "2101", "2026-Q0", "2026-Q5", "2026-q1", "2026-Q", "2026-06", "2026-Q12", "+2026", "２０２６", "2026-", " 2026"} {
		if _, err := ParseWindow(in, current, 1); !errors.Is(err, ErrInvalidPeriod) {
			t.Errorf("%q: err %v", in, err)
		}
	}
}
