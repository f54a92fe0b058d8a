package analytics

import (
	"math"
	"testing"

	"github.com/valuecase/valuecase/internal/finance"
)

// Golden values of testdata/forecast_golden.py (an independent Python
// implementation of the documented method), recorded in
// testdata/forecast_golden.out:
//
//	level 191.1153596994 trend 15.9634961139 sd 10.2756969111
//	h=1 205.4825062019 [192.3136707385, 218.6513416653]
//	h=2 218.4129380542 [199.7893923412, 237.0364837672]
//	h=3 230.0503267213 [207.2412346221, 252.8594188204]
func TestDampedHoltGolden(t *testing.T) {
	f, reason := DampedHolt(ym("2025-01"), []float64{100, 120, 130, 160, 170, 200}, 3)
	if reason != "" || len(f.Points) != 3 {
		t.Fatalf("%+v %s", f, reason)
	}
	close := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-8 {
			t.Errorf("%s = %.10f, want %.10f", what, got, want)
		}
	}
	close("level", f.Level, 191.1153596994)
	close("trend", f.Trend, 15.9634961139)
	close("sd", f.ResidualSD, 10.2756969111)
	for i, w := range [][3]float64{{205.4825062019, 192.3136707385, 218.6513416653}, {218.4129380542, 199.7893923412, 237.0364837672},
		{230.0503267213, 207.2412346221, 252.8594188204}} {
		p := f.Points[i]
		if p.Period != ym("2025-06").Add(i+1) {
			t.Errorf("point %d in %s", i, p.Period)
		}
		close("value", p.Value, w[0])
		close("lower", p.Lower, w[1])
		close("upper", p.Upper, w[2])
	}
	// A flat series forecasts itself with no spread.
	f, _ = DampedHolt(ym("2025-01"), []float64{50, 50, 50, 50}, 2)
	if f.Points[1].Value != 50 || f.Points[1].Lower != 50 || f.ResidualSD != 0 {
		t.Errorf("flat: %+v", f)
	}
	if _, reason := DampedHolt(ym("2025-01"), []float64{1, 2}, 6); reason != InsufficientHistory {
		t.Errorf("two months: %s", reason)
	}
}

func TestMonthlySeries(t *testing.T) {
	start, y, ok := MonthlySeries(map[finance.Month]float64{ym("2025-03"): 5, ym("2025-01"): 1})
	if !ok || start != ym("2025-01") || len(y) != 3 || y[0] != 1 || y[1] != 0 || y[2] != 5 {
		t.Errorf("%s %v %v", start, y, ok)
	}
	if _, _, ok := MonthlySeries(nil); ok {
		t.Error("empty")
	}
}

// Accuracy from the sums: two pairs (e 100, a 80) and (e 200, a 260):
// MAPE (0.2 + 0.3) / 2 = 0.25, WAPE (20 + 60) / 300 = 0.2667, bias 40 / 300.
func TestAccuracyOf(t *testing.T) {
	a := AccuracyOf(AccuracySums{Periods: 2, MAPEPeriods: 2, MAPE: 0.25, AbsError: 80, AbsExpected: 300, Expected: 300, Actual: 340})
	if a.Periods != 2 || *a.MAPE != 0.25 || math.Abs(*a.WAPE-80.0/300) > 1e-15 || math.Abs(*a.Bias-40.0/300) > 1e-15 || *a.Expected != 300 || *a.Actual != 340 {
		t.Errorf("%+v", a)
	}
	a = AccuracyOf(AccuracySums{Periods: 1, Missing: 1, MAPEPeriods: 1, MAPE: 0.5})
	if !a.MissingRates || a.WAPE != nil || a.Bias != nil || a.Expected != nil || *a.MAPE != 0.5 {
		t.Errorf("missing rate: %+v", a)
	}
	a = AccuracyOf(AccuracySums{Periods: 1, Actual: 10})
	if a.MAPE != nil || a.WAPE != nil || a.Bias != nil {
		t.Errorf("nothing expected: %+v", a)
	}
}
