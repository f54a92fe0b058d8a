// Package finance is the pure money core of the value model: calendar-month
// arithmetic, cost and benefit schedules, monthly cash flows, and the figures
// computed from them (NPV, IRR, payback, ROI, sensitivity shocks). It knows
// nothing of the database or HTTP; the definitions it implements are the
// lead's value decisions (docs/numbers.md).
package finance

import (
	"fmt"
	"time"

	"github.com/valuecase/valuecase/internal/validation"
)

// Month is a calendar month as a single index, year*12 + (month-1), so that
// month arithmetic is integer arithmetic: 2026-01 + 13 = 2027-02.
type Month int

// MonthOf returns the Month of a calendar year and month.
func MonthOf(year int, month time.Month) Month {
	return Month(year*12 + int(month) - 1)
}

// MonthOfTime returns the calendar month t falls in, in UTC.
func MonthOfTime(t time.Time) Month {
	t = t.UTC()
	return MonthOf(t.Year(), t.Month())
}

// ParseMonth parses a period written exactly "YYYY-MM": four digits, a dash,
// two digits, month 01..12, year 0001..9999. "2026-13", "2026-1", "26-01"
// and "2026-01-01" are errors.
func ParseMonth(s string) (Month, error) {
	if len(s) != 7 || s[4] != '-' {
		return 0, fmt.Errorf("period %q: want YYYY-MM", s)
	}
	year, okYear := digits(s[0:4])
	month, okMonth := digits(s[5:7])
	if !okYear || !okMonth {
		return 0, fmt.Errorf("period %q: want YYYY-MM", s)
	}
	if year < 1 {
		return 0, fmt.Errorf("period %q: year must be 0001..9999", s)
	}
	if month < 1 || month > 12 {
		return 0, fmt.Errorf("period %q: month must be 01..12", s)
	}
	return MonthOf(year, time.Month(month)), nil
}

// digits parses s as an unsigned decimal made of ASCII digits only (no sign,
// no spaces, which strconv.Atoi would let through).
func digits(s string) (int, bool) {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Year is the calendar year of m.
func (m Month) Year() int { return floorDiv(int(m), 12) }

// MonthOfYear is the calendar month of m (January..December).
func (m Month) MonthOfYear() time.Month { return time.Month(int(m)-m.Year()*12) + 1 }

// String formats m as "YYYY-MM".
func (m Month) String() string { return fmt.Sprintf("%04d-%02d", m.Year(), int(m.MonthOfYear())) }

// Add returns the month n months after m (before it when n < 0).
func (m Month) Add(n int) Month { return m + Month(n) }

// FirstDay is midnight UTC on the first day of m.
func (m Month) FirstDay() time.Time {
	return time.Date(m.Year(), m.MonthOfYear(), 1, 0, 0, 0, 0, time.UTC)
}

// QuarterStart is the first month of m's calendar quarter (2026-05 → 2026-04).
func (m Month) QuarterStart() Month { return m - Month(int(m.MonthOfYear()-1)%3) }

// MarshalText writes m as "YYYY-MM" (for JSON).
func (m Month) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads "YYYY-MM" strictly, as ParseMonth.
func (m *Month) UnmarshalText(b []byte) error {
	v, err := ParseMonth(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// FiscalYear is the fiscal year m belongs to when fiscal years begin in
// startMonth (1..12): fiscal year Y begins in startMonth of calendar year Y,
// so with startMonth 4, 2027-03 is in FY2026. It panics when startMonth is
// outside 1..12 (the tenant setting is validated when it is written).
func FiscalYear(m Month, startMonth int) int {
	checkStartMonth(startMonth)
	if int(m.MonthOfYear()) >= startMonth {
		return m.Year()
	}
	return m.Year() - 1
}

// FiscalYearRange is the first and last month of fiscal year y when fiscal
// years begin in startMonth (FY2026, start 4 → 2026-04 .. 2027-03).
func FiscalYearRange(y, startMonth int) (first, last Month) {
	checkStartMonth(startMonth)
	first = MonthOf(y, time.Month(startMonth))
	return first, first.Add(11)
}

func checkStartMonth(startMonth int) {
	if startMonth < 1 || startMonth > 12 {
		panic(fmt.Sprintf("finance: fiscal year start month %d outside 1..12", startMonth))
	}
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// Horizon is an inclusive range of months [Start, End].
type Horizon struct {
	Start, End Month
}

// Len is the number of months in h (0 when End is before Start).
func (h Horizon) Len() int { return max(0, int(h.End-h.Start)+1) }

// Contains reports whether m lies in h.
func (h Horizon) Contains(m Month) bool { return m >= h.Start && m <= h.End }

// InputPeriods are the months a period given as input (a cost's period, an
// FX rate's month) may name: anything earlier or later is a typing error
// (0026 for 2026), not a plan.
var InputPeriods = Horizon{Start: MonthOf(2000, time.January), End: MonthOf(2099, time.December)}

// CheckInputPeriod parses a period given as input for field: strict YYYY-MM
// (ParseMonth) within InputPeriods. A failure is a *validation.Error.
func CheckInputPeriod(field, s string) (Month, error) {
	m, err := ParseMonth(s)
	switch {
	case s == "":
		return 0, validation.New(field, validation.CodeRequired, "is required")
	case err != nil:
		return 0, validation.New(field, validation.CodeInvalidFormat, "must be a period YYYY-MM such as 2026-04")
	case !InputPeriods.Contains(m):
		return 0, validation.New(field, validation.CodeOutOfRange, "must be from %s to %s", InputPeriods.Start, InputPeriods.End)
	}
	return m, nil
}

// FirstDayOf is the date a month is stored as (its first day); nil stays nil.
func FirstDayOf(m *Month) *time.Time {
	if m == nil {
		return nil
	}
	return new(m.FirstDay())
}
