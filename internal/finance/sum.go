package finance

import (
	"math"

	"github.com/shopspring/decimal"
)

// exactSum adds decimals exactly, as decimal.Decimal.Add does, without an
// allocation per term while the terms share an exponent and the total fits
// an int64 coefficient (a portfolio adds hundreds of thousands of actuals);
// it carries on in decimal.Decimal from the first term that does not.
type exactSum struct {
	small   int64 // coefficient at exp while !spilled
	exp     int32
	started bool
	spilled bool
	big     decimal.Decimal
}

func (s *exactSum) add(d decimal.Decimal) {
	if !s.spilled && d.NumDigits() <= 18 {
		c, e := d.CoefficientInt64(), d.Exponent()
		if !s.started {
			s.small, s.exp, s.started = c, e, true
			return
		}
		if e == s.exp {
			if r, ok := addInt64(s.small, c); ok {
				s.small = r
				return
			}
		}
	}
	if !s.spilled {
		s.big, s.spilled = s.value(), true
	}
	s.big = s.big.Add(d)
}

// value is the sum so far.
func (s *exactSum) value() decimal.Decimal {
	switch {
	case s.spilled:
		return s.big
	case !s.started:
		return decimal.Zero
	}
	return decimal.New(s.small, s.exp)
}

// addInt64 is a + b, ok false on overflow.
func addInt64(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}
