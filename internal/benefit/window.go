package benefit

import (
	"fmt"
	"slices"
	"time"

	"github.com/valuecase/valuecase/internal/finance"
)

// HistoryMonths is how far back analytics reach (spec section 8: 5 years).
const HistoryMonths = 60

// ParamError is a query parameter the variance report cannot use; the API
// answers 400 INVALID_PARAMETER with Message.
type ParamError struct {
	Param   string
	Message string
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Message }

// VarianceQuery is what GET /v1/benefits/{id}/variance asks for.
type VarianceQuery struct {
	FiscalYear   int    // 0: the fiscal year of the current month
	FYStartMonth int    // the tenant's fiscal_year_start_month, 1..12
	Through      string // YYYY-MM; "": through the last period with an actual
}

// Window is the range a variance report covers.
type Window struct {
	FiscalYear int
	// FirstMonth and LastMonth bound the fiscal year.
	FirstMonth, LastMonth finance.Month
	// Periods are the benefit's periods in the range, oldest first; empty
	// when no `through` was given and the year has no actual yet.
	Periods []finance.Month
}

// VarianceWindow works out the periods of a variance report. Fiscal year Y
// begins in month FYStartMonth of calendar year Y. The range runs from the
// year's first period through `through` (any month of the year; a quarterly
// benefit reports through that month's quarter) or, without it, through the
// last period of the year that has an actual. A quarterly period belongs to
// the fiscal year that holds its first month, the month it is stored under.
// actualPeriods are the benefit's actual periods (any order, any year).
func VarianceWindow(f Frequency, q VarianceQuery, actualPeriods []finance.Month, now time.Time) (Window, error) {
	if q.FYStartMonth < 1 || q.FYStartMonth > 12 {
		return Window{}, fmt.Errorf("fiscal year start month %d is not 1..12", q.FYStartMonth) // a bad setting, not a bad request
	}
	nowMonth := finance.MonthOfTime(now)
	year := q.FiscalYear
	if year == 0 {
		year = finance.FiscalYear(nowMonth, q.FYStartMonth)
	}
	if year < 1 || year > 9999 {
		return Window{}, &ParamError{"year", "must be a fiscal year between 1 and 9999"}
	}
	w := Window{FiscalYear: year}
	w.FirstMonth, w.LastMonth = finance.FiscalYearRange(year, q.FYStartMonth)
	if w.FirstMonth < nowMonth.Add(-HistoryMonths) {
		return Window{}, &ParamError{"year", fmt.Sprintf("fiscal year %d began more than %d months ago, beyond the 5-year analytics history", year, HistoryMonths)}
	}

	from := Normalise(f, w.FirstMonth)
	if from < w.FirstMonth { // the quarter holding the year's first month began in the previous year
		from = from.Add(3)
	}
	var to finance.Month
	switch {
	case q.Through != "":
		through, ok := parsePeriod(q.Through)
		if !ok {
			return Window{}, &ParamError{"through", "must be a month YYYY-MM"}
		}
		if through < w.FirstMonth || through > w.LastMonth {
			return Window{}, &ParamError{"through", fmt.Sprintf("must lie in fiscal year %d (%s to %s)", year, w.FirstMonth, w.LastMonth)}
		}
		to = Normalise(f, through)
	default:
		inYear := slices.DeleteFunc(slices.Clone(actualPeriods), func(p finance.Month) bool { return p < from || p > w.LastMonth })
		if len(inYear) == 0 {
			w.Periods = []finance.Month{}
			return w, nil
		}
		to = slices.Max(inYear)
	}
	w.Periods = Periods(f, from, to)
	return w, nil
}

// From drops the periods before first, the benefit's first period: nothing
// is measured before a benefit starts (no actual can be filed there), so
// those periods are not reported as missing.
func (w Window) From(first finance.Month) Window {
	w.Periods = slices.DeleteFunc(slices.Clone(w.Periods), func(p finance.Month) bool { return p < first })
	return w
}
