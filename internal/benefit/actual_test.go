package benefit

import (
	"testing"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/validation"
)

func TestCheckActualPeriod(t *testing.T) {
	now := time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC)
	monthlyStart := date(2025, 3, 15)
	quarterlyStart := date(2025, 5, 10) // its period is the quarter 2025-04
	cases := []struct {
		name   string
		f      Frequency
		start  time.Time
		period string
		want   finance.Month // the period filed under
		code   string        // "" = accepted
	}{
		{"current month", Monthly, monthlyStart, "2026-11", mi(2026, 11), ""},
		{"next month", Monthly, monthlyStart, "2026-12", 0, validation.CodeInFuture},
		{"far future", Monthly, monthlyStart, "2031-01", 0, validation.CodeInFuture},
		{"the start month (start mid-month)", Monthly, monthlyStart, "2025-03", mi(2025, 3), ""},
		{"before the start month", Monthly, monthlyStart, "2025-02", 0, validation.CodeTooEarly},
		{"malformed month 13", Monthly, monthlyStart, "2026-13", 0, validation.CodeInvalidFormat},
		{"malformed day given", Monthly, monthlyStart, "2026-01-01", 0, validation.CodeInvalidFormat},
		{"empty", Monthly, monthlyStart, "", 0, validation.CodeInvalidFormat},
		{"quarterly, first month of start's quarter (before the start date)", Quarterly, quarterlyStart, "2025-04", mi(2025, 4), ""},
		{"quarterly, any month files under its quarter", Quarterly, quarterlyStart, "2025-06", mi(2025, 4), ""},
		{"quarterly, the quarter before start's", Quarterly, quarterlyStart, "2025-03", 0, validation.CodeTooEarly},
		{"quarterly, current month of a quarter in progress", Quarterly, quarterlyStart, "2026-11", mi(2026, 10), ""},
		{"quarterly, next month of the current quarter is still future", Quarterly, quarterlyStart, "2026-12", 0, validation.CodeInFuture},
	}
	for _, c := range cases {
		got, err := CheckActualPeriod(c.f, c.period, c.start, now)
		if c.code == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: got %s, %v; want %s", c.name, got, err, c.want)
			}
			continue
		}
		if codes := fieldCodes(t, err); codes["period"] != c.code || len(codes) != 1 {
			t.Errorf("%s: got %v, want period=%s", c.name, codes, c.code)
		}
	}
}

func TestCheckActualPeriodUsesUTC(t *testing.T) {
	// 23:30 on 30 November in New York is already 1 December in UTC: December is the current month.
	ny := time.FixedZone("EST", -5*3600)
	now := time.Date(2026, 11, 30, 23, 30, 0, 0, ny)
	if p, err := CheckActualPeriod(Monthly, "2026-12", date(2026, 1, 1), now); err != nil || p != mi(2026, 12) {
		t.Errorf("got %v, %v", p, err)
	}
}

func TestClassifyFiling(t *testing.T) {
	cases := []struct {
		previous *float64
		value    float64
		want     Filing
	}{
		{nil, 10, FirstValue},
		{nil, 0, FirstValue},
		{new(10.0), 10, SameValue},
		{new(10.0), 10.5, Correction},
		{new(0.0), 0, SameValue},
		{new(-3.0), 3, Correction},
	}
	for _, c := range cases {
		if got := ClassifyFiling(c.previous, c.value); got != c.want {
			t.Errorf("ClassifyFiling(%v, %v) = %v, want %v", c.previous, c.value, got, c.want)
		}
	}
}
