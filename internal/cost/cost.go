// Package cost holds the rules of an initiative's costs, the investment side
// of every ROI figure (issue 9 and the lead's value-model decisions): the
// allowed values, the limits, and what makes a cost line acceptable; and the
// operations every path writes through (SaveCosts: the routes and the costs
// import; DeleteCost).
// The schedule a cost line expands to is finance.Cost's. Callers map
// validation.Errors to 422, ErrNotFound and ErrInitiativeNotFound to 404, and
// ErrLimitReached and ErrInitiativeArchived to 409.
package cost

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/valuecase/valuecase/internal/finance"
	"github.com/valuecase/valuecase/internal/initiative"
	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
)

// Category is the accounting kind of a cost.
type Category string

const (
	Capex Category = "capex"
	Opex  Category = "opex"
)

// Categories lists every category.
var Categories = []Category{Capex, Opex}

// Valid reports whether c names a category.
func (c Category) Valid() bool { return slices.Contains(Categories, c) }

// Limits.
const (
	MaxPerInitiative = 500  // cost lines per initiative
	MaxAmount        = 1e12 // largest amount of one charge
)

// Errors the API answers with 409: the request is well formed, but the state
// of the initiative does not allow it.
var (
	ErrLimitReached       = errors.New("the initiative already has the maximum of 500 costs")
	ErrInitiativeArchived = fmt.Errorf("%w: its costs too", initiative.ErrArchived)
)

// CheckCanAdd reports whether an initiative that has count costs may get another.
func CheckCanAdd(count int) error {
	if count >= MaxPerInitiative {
		return ErrLimitReached
	}
	return nil
}

// CheckWritable reports whether the costs of an initiative in this status may
// change. Archived is final, so its figures are frozen.
func CheckWritable(initiativeStatus initiative.Status) error {
	if initiative.CheckWritable(initiativeStatus) != nil {
		return ErrInitiativeArchived
	}
	return nil
}

// Definition is a cost line as the client gave it (after the handler merged
// a PATCH into the stored record).
type Definition struct {
	Category   Category
	Amount     float64
	Currency   string
	Period     string // YYYY-MM of the first charge
	Recurrence finance.Recurrence
	EndPeriod  *string // YYYY-MM of the last possible charge; nil = open-ended (or once)
}

// Checked is the schedule of an accepted definition.
type Checked struct {
	Period finance.Month
	End    *finance.Month
}

// CheckDefinition reports every rule d breaks, as validation.Errors, and
// returns its periods parsed. The rules:
//   - category capex or opex; recurrence once, monthly, quarterly or annual;
//   - amount finite, greater than 0 and at most 1e12 (a cost is a charge; a
//     refund or saving is a benefit);
//   - currency an active ISO 4217 code, upper case;
//   - period and end_period strict YYYY-MM within 2000-01..2099-12;
//   - a once cost has no end_period; a recurring one may have one, not
//     before period, and need not fall on its grid (it bounds the charges:
//     quarterly from 2026-01 through 2026-05 charges 01 and 04).
func CheckDefinition(d Definition) (Checked, error) {
	var errs validation.Errors
	var out Checked
	if !d.Category.Valid() {
		errs.Add("category", codeFor(string(d.Category)), "must be one of %s", names(Categories))
	}
	if !d.Recurrence.Valid() {
		errs.Add("recurrence", codeFor(string(d.Recurrence)), "must be one of %s", names(finance.Recurrences))
	}
	if math.IsNaN(d.Amount) || math.IsInf(d.Amount, 0) || d.Amount <= 0 || d.Amount > MaxAmount {
		errs.Add("amount", validation.CodeOutOfRange, "must be greater than 0 and at most %g", float64(MaxAmount))
	}
	errs.Append(money.CheckCode("currency", d.Currency))
	period, periodErr := finance.CheckInputPeriod("period", d.Period)
	errs.Append(periodErr)
	out.Period = period
	if d.EndPeriod != nil {
		switch end, err := finance.CheckInputPeriod("end_period", *d.EndPeriod); {
		case d.Recurrence == finance.Once:
			errs.Add("end_period", validation.CodeNotAllowed, "a cost charged once has no end_period")
		case err != nil:
			errs.Append(err)
		case periodErr == nil && end < period:
			errs.Add("end_period", validation.CodeInvalidRange, "%s is before period %s", end, period)
		default:
			out.End = &end
		}
	}
	if err := errs.Err(); err != nil {
		return Checked{}, err
	}
	return out, nil
}

// codeFor is required for an empty value and invalid_value otherwise.
func codeFor(s string) string {
	if s == "" {
		return validation.CodeRequired
	}
	return validation.CodeInvalidValue
}

func names[T ~string](values []T) string { return strings.Join(validation.Names(values), ", ") }
