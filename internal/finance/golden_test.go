package finance

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// The golden cases and their figures come from testdata/oracle.py, an
// independent exact re-implementation of the definitions (fractions and
// 60-digit decimals; the method is in testdata/oracle.md). Its output is
// committed as testdata/golden.json; TestGoldenOracle checks the script
// still produces exactly that file.
const goldenFile = "testdata/golden.json"

// goldenFigure is a figure of the oracle: a value, or null with a reason.
type goldenFigure struct {
	Value  *float64 `json:"value"`
	Reason *string  `json:"reason"`
}

type goldenCase struct {
	Name          string       `json:"name"`
	Note          string       `json:"note"`
	Rate          float64      `json:"rate"` // annual discount rate
	Flows         []float64    `json:"flows"`
	NPV           float64      `json:"npv"`
	PaybackMonths goldenFigure `json:"payback_months"`
	IRR           goldenFigure `json:"irr"`
	IRRRoots      []float64    `json:"irr_roots"` // annual
	MIRR          goldenFigure `json:"mirr"`
}

func loadGolden(tb testing.TB) []goldenCase {
	tb.Helper()
	raw, err := os.ReadFile(goldenFile)
	if err != nil {
		tb.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		tb.Fatalf("%s: %v", goldenFile, err)
	}
	return cases
}

// goldenCashFlows splits a net series into benefits (the positive flows)
// and costs (the negative ones, as positive charges).
func goldenCashFlows(net []float64) CashFlows {
	cf := NewCashFlows(Horizon{MonthOf(2026, 1), MonthOf(2026, 1).Add(len(net) - 1)})
	for t, v := range net {
		if v < 0 {
			cf.Costs[t] = decimal.NewFromFloat(-v)
		} else {
			cf.Benefits[t] = decimal.NewFromFloat(v)
		}
	}
	return cf
}

// near is |got − want| ≤ 1e-9·|want| + abs: rates and months to nine
// significant digits, and abs for a value of 0 (the oracle's root of
// −300, +100 ×3 is 4e-45, ours exactly 0).
func near(got, want, abs float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Abs(want)+abs
}

func checkFigure(t *testing.T, what string, got Result, want goldenFigure) {
	t.Helper()
	if want.Value == nil {
		if got.Value != nil || want.Reason == nil || string(got.Reason) != *want.Reason {
			t.Errorf("%s = %v, want null (%v)", what, got, *want.Reason)
		}
		return
	}
	if v, ok := got.Get(); !ok || !near(v, *want.Value, 1e-12) {
		t.Errorf("%s = %v, want %.17g", what, got, *want.Value)
	}
}

// TestGolden compares Evaluate on each of the 41 cases with the oracle:
// NPV (relative to Σ|CF|, the scale of its rounding), payback, IRR with
// every root, MIRR at the discount rate.
func TestGolden(t *testing.T) {
	cases := loadGolden(t)
	if len(cases) != 41 {
		t.Fatalf("%s has %d cases, want 41", goldenFile, len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			m := Evaluate(goldenCashFlows(tc.Flows), tc.Rate)
			scale := 0.0
			for _, cf := range tc.Flows {
				scale += math.Abs(cf)
			}
			if math.Abs(m.NPV-tc.NPV) > 1e-12*scale {
				t.Errorf("NPV = %.17g, want %.17g", m.NPV, tc.NPV)
			}
			checkFigure(t, "payback", m.PaybackMonths, tc.PaybackMonths)
			checkFigure(t, "IRR", m.IRR, tc.IRR)
			checkFigure(t, "MIRR", m.MIRR, tc.MIRR)
			if len(m.IRRRoots) != len(tc.IRRRoots) {
				t.Fatalf("IRR roots = %v, want %v", m.IRRRoots, tc.IRRRoots)
			}
			for i := range m.IRRRoots {
				if !near(m.IRRRoots[i], tc.IRRRoots[i], 1e-12) {
					t.Errorf("IRR root %d = %.17g, want %.17g", i, m.IRRRoots[i], tc.IRRRoots[i])
				}
			}
		})
	}
}

// TestGoldenOracle runs the oracle and checks it reproduces the committed
// golden file byte for byte, so the file is what the script computes.
// Without python3 it skips, except in CI (CI=true), where it fails: CI
// has python3, and a golden file nobody can regenerate is not evidence.
func TestGoldenOracle(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 not found: CI must be able to run testdata/oracle.py")
		}
		t.Skip("python3 not found")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	got, err := exec.CommandContext(ctx, python, "testdata/oracle.py").Output()
	if err != nil {
		t.Fatalf("oracle.py: %v", err)
	}
	want, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("testdata/oracle.py does not reproduce %s: regenerate it with python3 testdata/oracle.py > %s and review the diff", goldenFile, goldenFile)
	}
}
