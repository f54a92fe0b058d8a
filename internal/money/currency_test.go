package money

import (
	"errors"
	"slices"
	"testing"

	"github.com/valuecase/valuecase/internal/validation"
)

func TestCurrencySpotChecks(t *testing.T) {
	cases := []struct {
		code   string
		valid  bool
		digits int
		hasMU  bool // has a minor unit
	}{
		{"USD", true, 2, true},
		{"EUR", true, 2, true},
		{"JPY", true, 0, true},
		{"KRW", true, 0, true},
		{"BHD", true, 3, true},
		{"KWD", true, 3, true},
		{"CLF", true, 4, true},
		{"GBP", true, 2, true},
		{"CHF", true, 2, true},
		{"XAU", true, 0, false}, // gold: a code, but no minor unit
		{"XDR", true, 0, false},
		{"XCG", true, 2, true},   // amendment 176 (2025), newer than Debian's data
		{"ZWG", true, 2, true},   // amendment 177 (2024)
		{"XAD", true, 2, true},   // amendment 179 (2025)
		{"SLE", true, 2, true},   // replaced SLL
		{"DEM", false, 0, false}, // Deutsche Mark, obsolete since 2002
		{"FRF", false, 0, false},
		{"HRK", false, 0, false}, // euro since 2023, still in Debian 12's list
		{"BGN", false, 0, false}, // euro since 2026-01-01
		{"ANG", false, 0, false}, // replaced by XCG
		{"ZWL", false, 0, false}, // replaced by ZWG
		{"SLL", false, 0, false},
		{"CUC", false, 0, false},
		{"XTS", false, 0, false}, // testing code: not a currency of account
		{"XXX", false, 0, false}, // "no currency"
		{"usd", false, 0, false}, // codes are upper case
		{"US", false, 0, false},
		{"", false, 0, false},
	}
	for _, c := range cases {
		if got := Valid(c.code); got != c.valid {
			t.Errorf("Valid(%q) = %v, want %v", c.code, got, c.valid)
		}
		d, ok := MinorUnits(c.code)
		if ok != c.hasMU || d != c.digits {
			t.Errorf("MinorUnits(%q) = %d, %v; want %d, %v", c.code, d, ok, c.digits, c.hasMU)
		}
	}
}

func TestCodesListIsTheWholeSortedTable(t *testing.T) {
	codes := Codes()
	if !slices.IsSorted(codes) {
		t.Fatal("Codes() must be sorted")
	}
	// ISO 4217 list one has about 180 entries; a table far off means the generator lost or duplicated data.
	if len(codes) < 170 || len(codes) > 185 {
		t.Fatalf("got %d codes, want about 176", len(codes))
	}
	for _, code := range codes {
		c, ok := Lookup(code)
		if !ok || c.Code != code || len(c.Numeric) != 3 || c.Name == "" {
			t.Errorf("bad entry %q: %+v", code, c)
		}
	}
}

func TestCheckCode(t *testing.T) {
	cases := []struct {
		in, code string // code "" = accepted
	}{
		{"USD", ""},
		{"", validation.CodeRequired},
		{"eur", validation.CodeInvalidValue},
		{"DEM", validation.CodeInvalidValue},
		{"EURO", validation.CodeInvalidValue},
	}
	for _, c := range cases {
		err := CheckCode("currency", c.in)
		e, isField := errors.AsType[*validation.Error](err)
		switch {
		case c.code == "" && err != nil:
			t.Errorf("CheckCode(%q) = %v, want accepted", c.in, err)
		case c.code != "" && (!isField || e.Code != c.code || e.Field != "currency"):
			t.Errorf("CheckCode(%q) = %v, want code %s on field currency", c.in, err, c.code)
		}
	}
	if err := CheckCode("currency", "eur"); err == nil || err.Error() != "currency: must be upper case: EUR" {
		t.Errorf("a lower-case code should be told its upper-case form, got %v", err)
	}
}
