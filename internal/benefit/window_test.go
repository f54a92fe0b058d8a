package benefit

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
)

func months(year int, ms ...int) []finance.Month {
	out := []finance.Month{}
	for _, m := range ms {
		out = append(out, mi(year, m))
	}
	return out
}

func TestVarianceWindow(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	actuals2026 := append(months(2025, 12), months(2026, 1, 2, 3, 5, 9)...)
	cases := []struct {
		name    string
		f       Frequency
		q       VarianceQuery
		actuals []finance.Month
		year    int
		periods []finance.Month
		param   string // "" = accepted; else the parameter refused (400)
	}{
		{"default year, through the last actual", Monthly, VarianceQuery{FYStartMonth: 1}, actuals2026,
			2026, months(2026, 1, 2, 3, 4, 5, 6, 7, 8, 9), ""},
		{"explicit through lists every month, with or without actual", Monthly, VarianceQuery{FiscalYear: 2026, FYStartMonth: 1, Through: "2026-04"}, actuals2026,
			2026, months(2026, 1, 2, 3, 4), ""},
		{"through beyond the last actual", Monthly, VarianceQuery{FiscalYear: 2026, FYStartMonth: 1, Through: "2026-11"}, actuals2026,
			2026, months(2026, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), ""},
		{"no actual in the year: empty", Monthly, VarianceQuery{FiscalYear: 2024, FYStartMonth: 1}, actuals2026,
			2024, []finance.Month{}, ""},
		{"no actual at all: empty", Monthly, VarianceQuery{FYStartMonth: 1}, nil, 2026, []finance.Month{}, ""},
		{"through before the year (inverted)", Monthly, VarianceQuery{FiscalYear: 2026, FYStartMonth: 1, Through: "2025-12"}, nil, 0, nil, "through"},
		{"through after the year", Monthly, VarianceQuery{FiscalYear: 2025, FYStartMonth: 1, Through: "2026-01"}, nil, 0, nil, "through"},
		{"malformed through", Monthly, VarianceQuery{FYStartMonth: 1, Through: "2026-13"}, nil, 0, nil, "through"},
		{"year too old", Monthly, VarianceQuery{FiscalYear: 2021, FYStartMonth: 1}, nil, 0, nil, "year"},
		{"oldest year allowed: begins exactly 60 months ago", Monthly, VarianceQuery{FiscalYear: 2021, FYStartMonth: 11}, months(2022, 2),
			2021, append(months(2021, 11, 12), months(2022, 1, 2)...), ""},
		{"one month older", Monthly, VarianceQuery{FiscalYear: 2021, FYStartMonth: 10}, nil, 0, nil, "year"},
		{"absurd year", Monthly, VarianceQuery{FiscalYear: 100000, FYStartMonth: 1}, nil, 0, nil, "year"},
		{"fiscal year from April: November 2026 is in FY2026", Monthly, VarianceQuery{FYStartMonth: 4}, months(2026, 3, 4, 6),
			2026, months(2026, 4, 5, 6), ""},
		{"fiscal year from April, through March next year", Monthly, VarianceQuery{FiscalYear: 2025, FYStartMonth: 4, Through: "2026-03"}, nil,
			2025, append(months(2025, 4, 5, 6, 7, 8, 9, 10, 11, 12), months(2026, 1, 2, 3)...), ""},
		{"quarterly, through the last actual quarter", Quarterly, VarianceQuery{FYStartMonth: 1}, months(2026, 1, 4, 7),
			2026, months(2026, 1, 4, 7), ""},
		{"quarterly, through any month of a quarter", Quarterly, VarianceQuery{FYStartMonth: 1, Through: "2026-08"}, nil,
			2026, months(2026, 1, 4, 7), ""},
		{"quarterly, fiscal year from February: quarters by their first month", Quarterly, VarianceQuery{FiscalYear: 2026, FYStartMonth: 2, Through: "2027-01"}, months(2026, 1),
			2026, append(months(2026, 4, 7, 10), months(2027, 1)...), ""},
	}
	for _, c := range cases {
		w, err := VarianceWindow(c.f, c.q, c.actuals, now)
		if c.param != "" {
			if pe, ok := errors.AsType[*ParamError](err); !ok || pe.Param != c.param {
				t.Errorf("%s: got %v, want a 400 on %s", c.name, err, c.param)
			}
			continue
		}
		if err != nil || w.FiscalYear != c.year || !slices.Equal(w.Periods, c.periods) || w.Periods == nil {
			t.Errorf("%s: got year %d periods %v err %v; want %d %v", c.name, w.FiscalYear, w.Periods, err, c.year, c.periods)
		}
	}
}

func TestDefaultFiscalYearBeforeTheStartMonth(t *testing.T) {
	// February 2026 with a fiscal year starting in April belongs to FY2025 (2025-04 .. 2026-03).
	w, err := VarianceWindow(Monthly, VarianceQuery{FYStartMonth: 4}, nil, time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC))
	if err != nil || w.FiscalYear != 2025 || w.FirstMonth != mi(2025, 4) || w.LastMonth != mi(2026, 3) {
		t.Errorf("got %+v, %v", w, err)
	}
}

func TestBadFiscalYearSettingIsNotABadRequest(t *testing.T) {
	_, err := VarianceWindow(Monthly, VarianceQuery{FYStartMonth: 13}, nil, time.Now())
	if _, ok := errors.AsType[*ParamError](err); ok || err == nil {
		t.Errorf("a broken tenant setting must be an internal error, got %v", err)
	}
}

// End to end as the handler will run it: a quarterly benefit expecting 1000 a
// year (250 a quarter), actuals for Q1 and Q3 2026, no `through`.
// Range Q1..Q3; like for like over Q1 and Q3: expected_ytd 500; actual_ytd
// 240 + 270 = 510; variance +10; percent 10 / 500 × 100 = +2; Q2 missing,
// its 250 expected_unmeasured (counting it as 0 actual would show −240, −32 %).
func TestWindowThenVariance(t *testing.T) {
	actuals := actuals(map[finance.Month]float64{mi(2026, 1): 240, mi(2026, 7): 270})
	w, err := VarianceWindow(Quarterly, VarianceQuery{FYStartMonth: 1}, []finance.Month{mi(2026, 1), mi(2026, 7)}, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var expected []Expected
	for _, p := range w.Periods {
		expected = append(expected, Expected{p, d(1000).Div(d(float64(Quarterly.PeriodsPerYear())))})
	}
	v := ComputeVariance(expected, actuals)
	if !near(v.ExpectedYTD, 500) || !near(v.ActualYTD, 510) || !near(v.Variance, 10) || !nearPtr(v.VariancePercent, new(2.0)) || !near(v.ExpectedUnmeasured, 250) ||
		!slices.Equal(v.MissingPeriods, months(2026, 4)) {
		t.Errorf("got %+v", v)
	}
}

func TestWindowFromTheBenefitsStart(t *testing.T) {
	w := Window{Periods: months(2026, 1, 2, 3, 4)}
	if got := w.From(mi(2026, 3)).Periods; !slices.Equal(got, months(2026, 3, 4)) {
		t.Errorf("got %v", got)
	}
	if got := w.From(mi(2027, 1)).Periods; got == nil || len(got) != 0 {
		t.Errorf("all before the start: got %#v, want []", got)
	}
	if len(w.Periods) != 4 {
		t.Error("From must not change the window it is called on")
	}
}

// The actuals ReadVariance reads before it knows the benefit and the settings
// (VarianceActualsBound) hold every period the year's window can cover, for every
// frequency, fiscal year start, asked year and month of the year; the bound
// is no wider than 25 months.
func TestActualsBoundHoldsEveryWindow(t *testing.T) {
	for _, now := range []time.Time{
		time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC),
	} {
		for _, year := range []int{0, 2022, 2025, 2026, 2027} {
			q := VarianceQuery{FiscalYear: year}
			from, to, ok := VarianceActualsBound(q, now)
			if !ok {
				t.Fatalf("now %s, year %d: not bounded", now, year)
			}
			if n := int(to-from) + 1; n > 25 {
				t.Errorf("now %s, year %d: bound %s..%s is %d months", now, year, from, to, n)
			}
			for start := 1; start <= 12; start++ {
				q.FYStartMonth = start
				for _, f := range Frequencies {
					w, err := VarianceWindow(f, q, nil, now)
					if err != nil {
						continue // a year beyond the history: the report refuses it
					}
					if first := Normalise(f, w.FirstMonth); first < from || w.LastMonth > to {
						t.Errorf("now %s, year %d, start %d, %s: window %s..%s outside the bound %s..%s", now, year, start, f, first, w.LastMonth, from, to)
					}
				}
			}
		}
	}
	if _, _, ok := VarianceActualsBound(VarianceQuery{FiscalYear: 10000}, time.Now()); ok {
		t.Error("year 10000 bounded")
	}
}
