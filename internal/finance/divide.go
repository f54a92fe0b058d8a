package finance

import (
	"math"
	"math/big"
	"math/bits"

	"github.com/shopspring/decimal"
)

// pow10u64 is 10^n for n ≤ 19 (the powers of ten a uint64 holds).
var pow10u64 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// divSmall is compact(d.Div(n)) for a small positive n (a benefit's periods a
// year): the same decimal, digit for digit and in the same representation,
// to decimal.DivisionPrecision places rounded half away from zero, computed
// in 128-bit integers rather than by a big.Int division when |d| × 10^places
// fits 128 bits (a portfolio divides once per benefit per request, tens of
// thousands of times). Otherwise it is the library's division.
func divSmall(d decimal.Decimal, n int64) decimal.Decimal {
	prec := int32(decimal.DivisionPrecision)
	shift := d.Exponent() + prec
	if n <= 0 || d.NumDigits() > 18 || shift < 0 || shift >= int32(len(pow10u64)) {
		return compact(d.Div(decimal.NewFromInt(n)))
	}
	c := d.CoefficientInt64()
	if c == 0 {
		return decimal.Zero
	}
	mag := uint64(c)
	if c < 0 {
		mag = -mag
	}
	hi, lo := bits.Mul64(mag, pow10u64[shift]) // |d| × 10^prec as an integer (< 10^37)
	qhi, r := bits.Div64(0, hi, uint64(n))
	qlo, r := bits.Div64(r, lo, uint64(n))
	if 2*r >= uint64(n) { // half away from zero, on the magnitude (r < n, so 2r does not overflow)
		var carry uint64
		qlo, carry = bits.Add64(qlo, 1, 0)
		qhi += carry
	}
	if qhi == 0 && qlo <= math.MaxInt64 {
		v := int64(qlo)
		if c < 0 {
			v = -v
		}
		return compact(decimal.New(v, -prec))
	}
	// More than 18 digits: compact leaves the library's quotient as it is.
	q := new(big.Int).SetUint64(qhi)
	q.Lsh(q, 64).Or(q, new(big.Int).SetUint64(qlo))
	if c < 0 {
		q.Neg(q)
	}
	return decimal.NewFromBigInt(q, -prec)
}
