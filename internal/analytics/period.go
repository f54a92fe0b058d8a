// Package analytics holds the rules of the analytics endpoints
// (GET /v1/analytics/*): the periods an analysis covers, the ROI analysis of
// an initiative or a portfolio with its sensitivity scenarios and
// confidence. It is pure: the API loads the rows (internal/valuation maps
// them onto the finance core) and calls it. The definitions are
// docs/numbers.md, section "ROI analysis".
package analytics

import (
	"errors"
	"strconv"
	"strings"

	"github.com/valuecase/valuecase/internal/finance"
)

// ErrInvalidPeriod is returned (wrapped) for a `period` that is not one of
// the forms Window accepts.
var ErrInvalidPeriod = errors.New("period must be lifetime, ytd, a fiscal year YYYY or a fiscal quarter YYYY-Qn")

// Period kinds.
const (
	Lifetime = "lifetime"
	YTD      = "ytd"
)

// Window is the months an analysis covers. Lifetime has no months of its
// own: each initiative is taken over its default horizon
// (finance.DefaultHorizon) and the portfolio over their union.
type Window struct {
	Label    string // the period as asked ("lifetime", "ytd", "2026", "2026-Q2")
	Lifetime bool
	Months   finance.Horizon // when not Lifetime
}

// Contains reports whether m is inside the window (always, for Lifetime).
func (w Window) Contains(m finance.Month) bool { return w.Lifetime || w.Months.Contains(m) }

// ParseWindow reads a `period` at the current month, with fiscal years
// beginning in fyStart (1..12):
//
//   - "" or "lifetime": every month of each initiative's default horizon;
//   - "ytd": from the first month of the current fiscal year through the
//     current month;
//   - "YYYY": fiscal year YYYY (FY2026 with fyStart 4 is 2026-04 .. 2027-03);
//   - "YYYY-Qn": quarter n (1..4) of fiscal year YYYY, three months from
//     its first month + 3(n−1).
//
// Years run from 2000 to 2100.
func ParseWindow(s string, current finance.Month, fyStart int) (Window, error) {
	switch s {
	case "", Lifetime:
		return Window{Label: Lifetime, Lifetime: true}, nil
	case YTD:
		first, _ := finance.FiscalYearRange(finance.FiscalYear(current, fyStart), fyStart)
		return Window{Label: YTD, Months: finance.Horizon{Start: first, End: current}}, nil
	}
	yearPart, quarterPart, quarterly := strings.Cut(s, "-")
	year, ok := fourDigits(yearPart)
	if !ok || year < 2000 || year > 2100 {
		return Window{}, ErrInvalidPeriod // the value is not quoted: messages never carry input
	}
	first, last := finance.FiscalYearRange(year, fyStart)
	if !quarterly {
		return Window{Label: s, Months: finance.Horizon{Start: first, End: last}}, nil
	}
	if len(quarterPart) != 2 || quarterPart[0] != 'Q' || quarterPart[1] < '1' || quarterPart[1] > '4' {
		return Window{}, ErrInvalidPeriod // the value is not quoted: messages never carry input
	}
	q := int(quarterPart[1] - '1')
	start := first.Add(3 * q)
	return Window{Label: s, Months: finance.Horizon{Start: start, End: start.Add(2)}}, nil
}

func fourDigits(s string) (int, bool) {
	if len(s) != 4 || strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
