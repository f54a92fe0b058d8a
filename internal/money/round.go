package money

import (
	"math"

	"github.com/shopspring/decimal"
)

// DefaultMinorUnits is the decimals of a figure whose currency has no minor
// unit in ISO 4217 (XAU, XDR, ...) or is unknown, and of percentages.
const DefaultMinorUnits = 2

// Places is the number of decimals an amount in currency is shown with: its
// ISO 4217 minor units (JPY 0, USD 2, BHD 3), DefaultMinorUnits otherwise.
func Places(currency string) int32 {
	if d, ok := MinorUnits(currency); ok {
		return int32(d)
	}
	return DefaultMinorUnits
}

// Round is the one rounding rule of the service: v to places decimals, half
// away from zero (1.005 → 1.01, 2.675 → 2.68, −2.345 → −2.35; as
// PostgreSQL's round(numeric) and spreadsheets do). It is applied once, at
// the edge (JSON responses, documents, frozen snapshots), to exact values:
// sums and conversions are never rounded on the way.
func Round(v decimal.Decimal, places int32) decimal.Decimal {
	if v.Exponent() >= -places {
		return v // no digit past places: nothing to round (the library would rescale, a big integer multiply)
	}
	return v.Round(places)
}

// Amount is an amount in currency as shown: rounded by Round to the
// currency's minor units, as the JSON number of a response. The float64
// holds the rounded decimal's shortest representation, so encoding/json
// writes exactly its digits (up to 15 significant digits, i.e. amounts
// below 10^13 at two decimals; stored amounts are at most 10^12).
func Amount(v decimal.Decimal, currency string) float64 {
	return Round(v, Places(currency)).InexactFloat64() + 0 // + 0: never "-0"
}

// AmountPtr is Amount of an optional amount (nil stays nil).
func AmountPtr(v *decimal.Decimal, currency string) *float64 {
	if v == nil {
		return nil
	}
	return new(Amount(*v, currency))
}

// RoundFloat is Round of a figure computed in float64 (NPV, IRR, a
// document's abbreviated headline), taken by its shortest decimal
// representation; NaN and infinities are returned as they are.
func RoundFloat(v float64, places int32) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	return Round(decimal.NewFromFloat(v), places).InexactFloat64() + 0
}

// Percent is a percentage (or any ratio shown with two decimals) rounded by
// Round for the edge. Ratios computed in float64 (NPV, IRR, Monte Carlo)
// enter by their shortest decimal representation.
func Percent(v float64) float64 { return RoundFloat(v, DefaultMinorUnits) }

// PercentOf is Percent of a ratio computed exactly (variance %, realisation %).
func PercentOf(v decimal.Decimal) float64 {
	return Round(v, DefaultMinorUnits).InexactFloat64() + 0
}

// PercentPtr is Percent of an optional figure (nil stays nil).
func PercentPtr(v *float64) *float64 {
	if v == nil {
		return nil
	}
	return new(Percent(*v))
}

// FromInput is an amount as a client submitted it in a JSON number (decoded
// as float64 and checked): its shortest decimal representation, which is
// the literal written for up to 15 significant digits (1.005 stays 1.005).
func FromInput(v float64) decimal.Decimal { return decimal.NewFromFloat(v) }

// Stored is a stored amount or value as the JSON number of a response: its
// exact digits, not rounded (it is what was recorded, in the record's own
// unit; rounding is for computed figures).
func Stored(v decimal.Decimal) float64 { return v.InexactFloat64() }

// PercentOfPtr is PercentOf of an optional exact ratio (nil stays nil).
func PercentOfPtr(v *decimal.Decimal) *float64 {
	if v == nil {
		return nil
	}
	return new(PercentOf(*v))
}
