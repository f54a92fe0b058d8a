package benefit

import (
	"fmt"
	"slices"
	"time"
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
	// FirstMonth and LastMonth bound the fiscal year (month indices).
	FirstMonth, LastMonth int
	// Periods are the benefit's periods in the range, oldest first; empty
	// when no `through` was given and the year has no actual yet.
	Periods []int
}

// VarianceWindow works out the periods of a variance report. Fiscal year Y
// begins in month FYStartMonth of calendar year Y. The range runs from the
// year's first period through `through` (any month of the year; a quarterly
// benefit reports through that month's quarter) or, without it, through the
// last period of the year that has an actual. A quarterly period belongs to
// the fiscal year that holds its first month, the month it is stored under.
// actualPeriods are the benefit's actual periods (any order, any year).
func VarianceWindow(f Frequency, q VarianceQuery, actualPeriods []int, now time.Time) (Window, error) {
	if q.FYStartMonth < 1 || q.FYStartMonth > 12 {
		return Window{}, fmt.Errorf("fiscal year start month %d is not 1..12", q.FYStartMonth) // a bad setting, not a bad request
	}
	nowMonth := monthOf(now)
	year := q.FiscalYear
	if year == 0 {
		year = nowMonth / 12
		if nowMonth%12+1 < q.FYStartMonth {
			year--
		}
	}
	if year < 1 || year > 9999 {
		return Window{}, &ParamError{"year", "must be a fiscal year between 1 and 9999"}
	}
	w := Window{FiscalYear: year, FirstMonth: year*12 + q.FYStartMonth - 1}
	w.LastMonth = w.FirstMonth + 11
	if w.FirstMonth < nowMonth-HistoryMonths {
		return Window{}, &ParamError{"year", fmt.Sprintf("fiscal year %d began more than %d months ago, beyond the 5-year analytics history", year, HistoryMonths)}
	}

	from := Normalise(f, w.FirstMonth)
	if from < w.FirstMonth { // the quarter holding the year's first month began in the previous year
		from += 3
	}
	var to int
	switch {
	case q.Through != "":
		through, ok := parsePeriod(q.Through)
		if !ok {
			return Window{}, &ParamError{"through", "must be a month YYYY-MM"}
		}
		if through < w.FirstMonth || through > w.LastMonth {
			return Window{}, &ParamError{"through", fmt.Sprintf("must lie in fiscal year %d (%s to %s)", year, formatPeriod(w.FirstMonth), formatPeriod(w.LastMonth))}
		}
		to = Normalise(f, through)
	default:
		inYear := slices.DeleteFunc(slices.Clone(actualPeriods), func(p int) bool { return p < from || p > w.LastMonth })
		if len(inYear) == 0 {
			w.Periods = []int{}
			return w, nil
		}
		to = slices.Max(inYear)
	}
	w.Periods = Periods(f, from, to)
	return w, nil
}
