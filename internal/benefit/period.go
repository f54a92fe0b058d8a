package benefit

import (
	"github.com/valuecase/valuecase/internal/finance"
)

// Periods are finance.Month values (the one way the value model says "a
// month"); a quarterly period is its quarter's first month. Only the few
// conversions the rules need live here: schedules and formatting belong to
// internal/finance.

// finance is f in the finance core's terms (the same names).
func (f Frequency) finance() finance.Frequency { return finance.Frequency(f) }

// parsePeriod reads a period written YYYY-MM (four-digit year, two-digit
// month), refusing anything else, e.g. 2026-13, 2026-1 or 2026-01-01.
func parsePeriod(s string) (finance.Month, bool) {
	m, err := finance.ParseMonth(s)
	return m, err == nil
}

// Normalise files month under its period: itself for monthly benefits, the
// first month of its calendar quarter for quarterly ones (2026-05 → 2026-04).
func Normalise(f Frequency, month finance.Month) finance.Month { return f.finance().PeriodOf(month) }

// OnGrid reports whether month is a period of f (any month, or a quarter's first month).
func OnGrid(f Frequency, month finance.Month) bool { return Normalise(f, month) == month }

// Periods lists the periods of f from the one containing from through the
// one containing to, in order; none when to is before from.
func Periods(f Frequency, from, to finance.Month) []finance.Month {
	out := []finance.Month{}
	if to < from {
		return out
	}
	step := 12 / f.PeriodsPerYear()
	for p := Normalise(f, from); p <= to; p = p.Add(step) {
		out = append(out, p)
	}
	return out
}
