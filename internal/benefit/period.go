package benefit

import (
	"time"
)

// Periods are month indices, year*12 + (month-1), as the value model defines
// them; a quarterly period is the index of its quarter's first month. Only
// the few conversions the rules need live here: schedules and formatting
// belong to internal/finance.

// monthOf is the month index of t's calendar month in UTC.
func monthOf(t time.Time) int {
	t = t.UTC()
	return t.Year()*12 + int(t.Month()) - 1
}

// parsePeriod reads a period written YYYY-MM (four-digit year, two-digit
// month), refusing anything else, e.g. 2026-13, 2026-1 or 2026-01-01.
func parsePeriod(s string) (int, bool) {
	if len(s) != 7 || s[4] != '-' {
		return 0, false
	}
	t, err := time.Parse("2006-01", s)
	if err != nil || t.Year() < 1 {
		return 0, false
	}
	return monthOf(t), true
}

// Normalise files month under its period: itself for monthly benefits, the
// first month of its calendar quarter for quarterly ones (2026-05 → 2026-04).
func Normalise(f Frequency, month int) int {
	if f == Quarterly {
		return month - month%12%3
	}
	return month
}

// OnGrid reports whether month is a period of f (any month, or a quarter's first month).
func OnGrid(f Frequency, month int) bool { return Normalise(f, month) == month }

// Periods lists the periods of f from the one containing from through the
// one containing to, in order; none when to is before from.
func Periods(f Frequency, from, to int) []int {
	out := []int{}
	if to < from {
		return out
	}
	step := 12 / f.PeriodsPerYear()
	for p := Normalise(f, from); p <= to; p += step {
		out = append(out, p)
	}
	return out
}
