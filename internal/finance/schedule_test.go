package finance

import (
	"slices"
	"testing"

	"github.com/shopspring/decimal"
)

func month(t testing.TB, s string) Month {
	t.Helper()
	m, err := ParseMonth(s)
	must(t, err)
	return m
}

func horizon(t testing.TB, from, to string) Horizon {
	t.Helper()
	return Horizon{month(t, from), month(t, to)}
}

func TestCostSchedule(t *testing.T) {
	h := horizon(t, "2026-01", "2026-12")
	for _, tc := range []struct {
		name string
		cost Cost
		want []float64
	}{
		{"once inside", Cost{Amount: d(500), Recurrence: Once, Period: month(t, "2026-03")},
			[]float64{0, 0, 500, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"once ignores end", Cost{Amount: d(500), Recurrence: Once, Period: month(t, "2026-03"), End: new(month(t, "2026-12"))},
			[]float64{0, 0, 500, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"once before horizon", Cost{Amount: d(500), Recurrence: Once, Period: month(t, "2025-12")},
			make([]float64, 12)},
		{"monthly with end", Cost{Amount: d(10), Recurrence: Monthly, Period: month(t, "2026-10"), End: new(month(t, "2026-11"))},
			[]float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 10, 0}},
		{"monthly open-ended runs to the horizon end", Cost{Amount: d(10), Recurrence: Monthly, Period: month(t, "2026-10")},
			[]float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 10, 10, 10}},
		{"quarterly started before the horizon keeps its grid", Cost{Amount: d(3), Recurrence: Quarterly, Period: month(t, "2025-11")},
			[]float64{0, 3, 0, 0, 3, 0, 0, 3, 0, 0, 3, 0}},
		{"quarterly end inclusive", Cost{Amount: d(3), Recurrence: Quarterly, Period: month(t, "2026-01"), End: new(month(t, "2026-07"))},
			[]float64{3, 0, 0, 3, 0, 0, 3, 0, 0, 0, 0, 0}},
		{"annual", Cost{Amount: d(1200), Recurrence: Annual, Period: month(t, "2025-06")},
			[]float64{0, 0, 0, 0, 0, 1200, 0, 0, 0, 0, 0, 0}},
		{"ended before the horizon", Cost{Amount: d(1), Recurrence: Monthly, Period: month(t, "2025-01"), End: new(month(t, "2025-12"))},
			make([]float64, 12)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cost.Schedule(h); !decEqual(got, tc.want) {
				t.Errorf("Schedule = %v\nwant       %v", got, tc.want)
			}
		})
	}
}

func TestBenefitExpected(t *testing.T) {
	h := horizon(t, "2026-01", "2026-12")
	for _, tc := range []struct {
		name    string
		benefit Benefit
		want    []float64
	}{
		{"monthly spread /12 from start to end",
			Benefit{ExpectedValue: d(1200), Frequency: MeasuredMonthly, Start: month(t, "2026-03"), End: new(month(t, "2026-05"))},
			[]float64{0, 0, 100, 100, 100, 0, 0, 0, 0, 0, 0, 0}},
		{"monthly open-ended runs to the horizon end",
			Benefit{ExpectedValue: d(1200), Frequency: MeasuredMonthly, Start: month(t, "2026-10")},
			[]float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 100, 100}},
		{"quarterly spread /4 in the quarter's first month; start and end mid-quarter",
			Benefit{ExpectedValue: d(400), Frequency: MeasuredQuarterly, Start: month(t, "2026-05"), End: new(month(t, "2026-08"))},
			[]float64{0, 0, 0, 100, 0, 0, 100, 0, 0, 0, 0, 0}},
		{"explicit plan replaces the spread; unlisted periods expect 0",
			Benefit{ExpectedValue: d(1200), Frequency: MeasuredMonthly, Start: month(t, "2026-01"), End: new(month(t, "2026-12")),
				Plan: []PlanEntry{{month(t, "2026-02"), d(50)}, {month(t, "2026-06"), d(250)}}},
			[]float64{0, 50, 0, 0, 0, 250, 0, 0, 0, 0, 0, 0}},
		{"quarterly plan",
			Benefit{ExpectedValue: d(400), Frequency: MeasuredQuarterly, Start: month(t, "2026-01"),
				Plan: []PlanEntry{{month(t, "2026-07"), d(70)}}},
			[]float64{0, 0, 0, 0, 0, 0, 70, 0, 0, 0, 0, 0}},
		{"empty non-nil plan expects nothing",
			Benefit{ExpectedValue: d(1200), Frequency: MeasuredMonthly, Start: month(t, "2026-01"), Plan: []PlanEntry{}},
			make([]float64, 12)},
		{"plan entry outside start..end is ignored",
			Benefit{ExpectedValue: d(1200), Frequency: MeasuredMonthly, Start: month(t, "2026-03"), End: new(month(t, "2026-04")),
				Plan: []PlanEntry{{month(t, "2026-01"), d(9)}, {month(t, "2026-04"), d(4)}}},
			[]float64{0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.benefit.Expected(h); !decEqual(got, tc.want) {
				t.Errorf("Expected = %v\nwant       %v", got, tc.want)
			}
		})
	}
}

func TestBenefitExpectedForAMonthInsideAQuarter(t *testing.T) {
	b := Benefit{ExpectedValue: d(400), Frequency: MeasuredQuarterly, Start: month(t, "2026-01")}
	if got := b.ExpectedFor(month(t, "2026-05")); !got.Equal(d(100)) {
		t.Errorf("ExpectedFor(2026-05) = %v, want the quarter's 100", got)
	}
	if got := b.ExpectedFor(month(t, "2025-12")); !got.IsZero() {
		t.Errorf("ExpectedFor before start = %v, want 0", got)
	}
}

func TestFrequencyPeriods(t *testing.T) {
	got := MeasuredQuarterly.Periods(month(t, "2026-02"), month(t, "2026-10"))
	want := []Month{month(t, "2026-04"), month(t, "2026-07"), month(t, "2026-10")}
	if !slices.Equal(got, want) {
		t.Errorf("quarterly periods = %v, want %v", got, want)
	}
	if got := MeasuredMonthly.Periods(month(t, "2026-02"), month(t, "2026-04")); len(got) != 3 || got[0] != month(t, "2026-02") {
		t.Errorf("monthly periods = %v", got)
	}
	if got := MeasuredMonthly.Periods(month(t, "2026-04"), month(t, "2026-02")); len(got) != 0 {
		t.Errorf("inverted range periods = %v", got)
	}
	if MeasuredQuarterly.PeriodOf(month(t, "2026-06")) != month(t, "2026-04") || MeasuredMonthly.PeriodOf(month(t, "2026-06")) != month(t, "2026-06") {
		t.Error("PeriodOf")
	}
	if !Quarterly.Valid() || Recurrence("weekly").Valid() || !MeasuredMonthly.Valid() || Frequency("daily").Valid() {
		t.Error("Valid")
	}
}

func TestBenefitRealised(t *testing.T) {
	h := horizon(t, "2026-01", "2026-06")
	b := Benefit{ExpectedValue: d(1200), Frequency: MeasuredMonthly, Start: month(t, "2026-01"),
		Actuals: map[Month]decimal.Decimal{month(t, "2026-01"): d(80), month(t, "2026-03"): d(130), month(t, "2026-05"): d(90)}}
	// Through 2026-03: actuals in 01 and 03, expected in 02 and after 03.
	want := []float64{80, 100, 130, 100, 100, 100}
	if got := b.Realised(h, month(t, "2026-03")); !decEqual(got, want) {
		t.Errorf("Realised through 2026-03 = %v, want %v", got, want)
	}
	last, ok := LastActual([]Benefit{b, {Frequency: MeasuredMonthly}})
	if !ok || last != month(t, "2026-05") {
		t.Errorf("LastActual = %v, %v", last, ok)
	}
	if _, ok := LastActual([]Benefit{{Frequency: MeasuredMonthly}}); ok {
		t.Error("LastActual without actuals reports one")
	}
}

func TestDefaultHorizon(t *testing.T) {
	for _, tc := range []struct {
		name     string
		benefits []Benefit
		costs    []Cost
		from, to string
	}{
		{"earliest first through latest last",
			[]Benefit{{Frequency: MeasuredMonthly, Start: month(t, "2026-04"), End: new(month(t, "2027-03"))}},
			[]Cost{{Amount: d(1), Recurrence: Once, Period: month(t, "2026-01")}, {Amount: d(1), Recurrence: Monthly, Period: month(t, "2026-02"), End: new(month(t, "2026-09"))}},
			"2026-01", "2027-03"},
		{"open-ended benefit runs 36 months from the horizon start",
			[]Benefit{{Frequency: MeasuredMonthly, Start: month(t, "2026-04")}},
			[]Cost{{Amount: d(1), Recurrence: Once, Period: month(t, "2026-01")}},
			"2026-01", "2028-12"},
		{"open-ended recurring cost",
			nil,
			[]Cost{{Amount: d(1), Recurrence: Annual, Period: month(t, "2026-01")}},
			"2026-01", "2028-12"},
		{"capped at 60 months",
			[]Benefit{{Frequency: MeasuredQuarterly, Start: month(t, "2026-01"), End: new(month(t, "2035-12"))}},
			nil,
			"2026-01", "2030-12"},
		{"a fixed end beyond 36 months outlasts an open-ended item",
			[]Benefit{{Frequency: MeasuredMonthly, Start: month(t, "2026-01")}, {Frequency: MeasuredMonthly, Start: month(t, "2026-01"), End: new(month(t, "2029-06"))}},
			nil,
			"2026-01", "2029-06"},
		{"quarterly end mid-quarter ends at its period",
			[]Benefit{{Frequency: MeasuredQuarterly, Start: month(t, "2026-02"), End: new(month(t, "2026-08"))}},
			nil,
			"2026-01", "2026-07"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, ok := DefaultHorizon(tc.benefits, tc.costs)
			if !ok || h != horizon(t, tc.from, tc.to) {
				t.Errorf("DefaultHorizon = %v..%v (%v), want %s..%s", h.Start, h.End, ok, tc.from, tc.to)
			}
		})
	}
	if _, ok := DefaultHorizon(nil, nil); ok {
		t.Error("DefaultHorizon of nothing is ok")
	}
}
