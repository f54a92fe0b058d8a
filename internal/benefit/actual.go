package benefit

import (
	"time"

	"github.com/valuecase/valuecase/internal/finance"

	"github.com/valuecase/valuecase/internal/validation"
)

// CheckActualPeriod checks the period an actual is filed for (YYYY-MM) and
// returns the period it is filed under: the month itself for monthly
// benefits, its quarter's first month for quarterly ones, so any month of a
// quarter may be given. It refuses, on field "period":
//   - invalid_format: not a real YYYY-MM month (2026-13);
//   - in_future: a month after the current one (UTC); the current month is
//     allowed, so a quarter in progress can be reported;
//   - too_early: a period before the one holding the benefit's expected start date.
func CheckActualPeriod(f Frequency, period string, start, now time.Time) (finance.Month, error) {
	m, ok := parsePeriod(period)
	if !ok {
		return 0, validation.New("period", validation.CodeInvalidFormat, "must be a month YYYY-MM, e.g. 2026-04")
	}
	if m > finance.MonthOfTime(now) {
		return 0, validation.New("period", validation.CodeInFuture, "%s has not begun yet", period)
	}
	p, first := Normalise(f, m), Normalise(f, finance.MonthOfTime(start))
	if p < first {
		return 0, validation.New("period", validation.CodeTooEarly, "%s is before the benefit's first period %s (expected_start_date %s)",
			period, first, start.Format(time.DateOnly))
	}
	return p, nil
}

// Filing is what recording a value for a period amounts to.
type Filing int

const (
	// FirstValue: the period had no actual; a new one is recorded.
	FirstValue Filing = iota
	// Correction: the period had a different value; the actual is updated and
	// a revision (who, when, old value, new value) keeps the old one.
	Correction
	// SameValue: the period already holds exactly this value (e.g. a retried
	// request). Nothing changes: no revision, no new event, so retries do not
	// litter the history.
	SameValue
)

// ClassifyFiling tells what filing value does to a period whose current
// actual is previous (nil when it has none).
func ClassifyFiling(previous *float64, value float64) Filing {
	switch {
	case previous == nil:
		return FirstValue
	case *previous == value:
		return SameValue
	}
	return Correction
}
