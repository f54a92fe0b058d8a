package finance

import (
	"math"

	"github.com/shopspring/decimal"

	"github.com/valuecase/valuecase/internal/money"
	"github.com/valuecase/valuecase/internal/validation"
)

// MaxRate bounds a stored FX rate: anything larger is a typing error.
const MaxRate = 1e12

var maxRate = decimal.NewFromInt(MaxRate)

// Rates is a tenant's FX table: for each (currency, month) the number of
// base-currency units that one unit of the currency is worth, exact as
// stored (numeric). It is the one loaded form of the table; conversions go
// through FX, which leaves out and reports every amount whose rate is missing.
type Rates struct {
	base  string
	rates map[rateKey]decimal.Decimal
}

type rateKey struct {
	currency string
	month    Month
}

// NewRates starts an empty table for a tenant whose figures are in base.
func NewRates(base string) *Rates {
	return &Rates{base: base, rates: map[rateKey]decimal.Decimal{}}
}

// Base is the currency every conversion lands in.
func (r *Rates) Base() string { return r.base }

// Set records the rate of currency in month. The base currency has no rate
// (it is always 1), so setting one is an error, as is a rate that is not
// greater than 0 and at most MaxRate.
func (r *Rates) Set(currency string, month Month, rate decimal.Decimal) error {
	if err := CheckRateCurrency("currency", currency, r.base); err != nil {
		return err
	}
	if rate.Sign() <= 0 || rate.GreaterThan(maxRate) {
		return rateOutOfRange("rate")
	}
	r.rates[rateKey{currency, month}] = rate
	return nil
}

// Rate is the rate of currency in month; ok is false when the table has none
// (a rate of another month is never used instead). It has the shape of
// FX.Rate.
func (r *Rates) Rate(currency string, month Month) (rate decimal.Decimal, ok bool) {
	rate, ok = r.rates[rateKey{currency, month}]
	return rate, ok
}

// FX is the converter over this table.
func (r *Rates) FX() FX { return FX{Base: r.base, Rate: r.Rate} }

// CheckRate reports what is wrong with an FX rate as submitted (a JSON
// number) for field (a *validation.Error).
func CheckRate(field string, rate float64) error {
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= 0 || rate > MaxRate {
		return rateOutOfRange(field)
	}
	return nil
}

func rateOutOfRange(field string) error {
	return validation.New(field, validation.CodeOutOfRange, "must be a number greater than 0 and at most %g", float64(MaxRate))
}

// CheckRateCurrency reports what is wrong with the currency of an FX rate:
// it must be active and not the base currency, whose rate is 1 by definition.
func CheckRateCurrency(field, currency, base string) error {
	if err := money.CheckCode(field, currency); err != nil {
		return err
	}
	if currency == base {
		return validation.New(field, validation.CodeNotAllowed, "%s is the base currency; its rate is always 1", currency)
	}
	return nil
}
