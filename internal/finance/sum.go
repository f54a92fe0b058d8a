package finance

import (
	"math/big"

	"github.com/shopspring/decimal"
)

// exactSum adds decimals exactly, as decimal.Decimal.Add does, but into one
// big.Int in place: no allocation per term (a portfolio adds hundreds of
// thousands of amounts), terms of another exponent rescaled to the finer one.
type exactSum struct {
	acc     big.Int // the sum's coefficient at exp
	tmp     big.Int
	exp     int32
	started bool
}

var bigTen = big.NewInt(10)

// pow10 is 10^n (n ≥ 0), from a small table.
func pow10(n int32) *big.Int {
	if int(n) < len(pow10Table) {
		return pow10Table[n]
	}
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

var pow10Table = func() []*big.Int {
	t := make([]*big.Int, 40)
	t[0] = big.NewInt(1)
	for i := 1; i < len(t); i++ {
		t[i] = new(big.Int).Mul(t[i-1], bigTen)
	}
	return t
}()

func (s *exactSum) add(d decimal.Decimal) {
	if d.NumDigits() <= 18 {
		s.tmp.SetInt64(d.CoefficientInt64())
	} else {
		s.tmp.Set(d.Coefficient())
	}
	e := d.Exponent()
	switch {
	case !s.started:
		s.acc.Set(&s.tmp)
		s.exp, s.started = e, true
		return
	case e < s.exp:
		s.acc.Mul(&s.acc, pow10(s.exp-e))
		s.exp = e
	case e > s.exp:
		s.tmp.Mul(&s.tmp, pow10(e-s.exp))
	}
	s.acc.Add(&s.acc, &s.tmp)
}

// value is the sum so far.
func (s *exactSum) value() decimal.Decimal {
	if !s.started {
		return decimal.Zero
	}
	return decimal.NewFromBigInt(new(big.Int).Set(&s.acc), s.exp)
}
