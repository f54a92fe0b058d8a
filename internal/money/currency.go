// Package money knows which currencies exist (ISO 4217 list one, embedded so
// validation never depends on the machine, with their minor units) and holds
// the one rounding rule of amounts shown (Round, Amount): half away from zero
// to the currency's minor units, applied once at the edge. It depends on no
// other package of the service; FX rates and conversions are finance's.
package money

import (
	"slices"
	"strings"

	"github.com/valuecase/valuecase/internal/validation"
)

//go:generate go test -run ^TestCurrencyTable$ . -args -update

// Currency is one entry of ISO 4217 list one (current currencies and funds).
type Currency struct {
	Code    string // alphabetic code, upper case
	Numeric string // three-digit numeric code
	Name    string // English name
	// MinorUnits is the number of decimals of the minor unit (USD 2, JPY 0,
	// BHD 3); -1 where ISO gives none (precious metals, units of account).
	MinorUnits int
}

// Lookup returns the active currency with this alphabetic code. Codes are
// case-sensitive: the API stores and compares them upper case.
func Lookup(code string) (Currency, bool) {
	c, ok := currencies[code]
	return c, ok
}

// Valid reports whether code is an active ISO 4217 code. Withdrawn codes
// (DEM, HRK, BGN, ...) are refused: new figures must not be recorded in them.
func Valid(code string) bool {
	_, ok := currencies[code]
	return ok
}

// MinorUnits returns the decimals of code's minor unit; ok is false for an
// unknown code and for codes that have no minor unit (XAU, XDR, ...).
func MinorUnits(code string) (digits int, ok bool) {
	c, found := currencies[code]
	if !found || c.MinorUnits < 0 {
		return 0, false
	}
	return c.MinorUnits, true
}

// Codes lists every active code in alphabetical order (for OpenAPI enums and docs).
func Codes() []string {
	out := make([]string, 0, len(currencies))
	for code := range currencies {
		out = append(out, code)
	}
	slices.Sort(out)
	return out
}

// CheckCode reports what is wrong with a currency code given for field (a
// *validation.Error); nil when it is active.
func CheckCode(field, code string) error {
	switch {
	case code == "":
		return validation.New(field, validation.CodeRequired, "is required")
	case Valid(code):
		return nil
	case Valid(strings.ToUpper(code)):
		// Said plainly rather than silently upper-cased: the stored code must equal what the client sent.
		return validation.New(field, validation.CodeInvalidValue, "must be upper case: %s", strings.ToUpper(code))
	}
	return validation.New(field, validation.CodeInvalidValue, "is not an active ISO 4217 currency code")
}
