package finance

import "math"

// The IRR solver's search range (monthly rates) and its bracket scan: grid
// points 0, ±irrScanStep·irrScanRatio^k, clamped to the range, walked
// outwards from 0 on both sides at once.
const (
	irrLowest        = -0.9999
	irrHighest       = 10.0
	irrScanStep      = 1e-6
	irrScanRatio     = 1.1
	irrMaxIterations = 200
)

// IRR is the internal rate of return of a monthly net series, annualised:
// the monthly rate x with Σ net[t]/(1+x)^t = 0, reported as (1+x)^12 − 1.
//
// How it is solved: a bracket scan walks a grid outwards from x = 0 on both
// sides (steps growing 10 % a point, from 1e-6 to the ends of the range
// −0.9999 .. 10), stops at the first sign change, and Brent's method narrows
// that bracket to machine precision. So when several roots exist (flows that
// change sign more than once), the root found is the one closest to 0. Two
// roots within one grid cell (less than ~10 % apart) cancel out and are not
// seen. The NPV is evaluated scaled by (1+x)^n for x < 0 (same sign, same
// roots), so long horizons near x = −1 do not overflow.
//
// Absent with NoSignChange when all flows are ≥ 0 or all are ≤ 0, and with
// DidNotConverge when no root lies in the range (or a flow is not finite).
func IRR(net []float64) Result {
	pos, neg := false, false
	for _, cf := range net {
		if math.IsNaN(cf) || math.IsInf(cf, 0) {
			return absent(DidNotConverge)
		}
		pos, neg = pos || cf > 0, neg || cf < 0
	}
	if !pos || !neg {
		return absent(NoSignChange)
	}
	x, ok := irrMonthly(net)
	if !ok {
		return absent(DidNotConverge)
	}
	return value(AnnualRate(x))
}

// irrMonthly finds the monthly root closest to 0.
func irrMonthly(net []float64) (float64, bool) {
	// Leading zeros only scale the NPV by a positive (1+x)^−k and trailing
	// ones add nothing, so trimming them keeps the roots; trimmed, neither
	// end of the scaled sum can underflow to a false 0 on a long series.
	for len(net) > 0 && net[0] == 0 {
		net = net[1:]
	}
	for len(net) > 0 && net[len(net)-1] == 0 {
		net = net[:len(net)-1]
	}
	f := func(x float64) float64 { return scaledNPV(net, x) }
	f0 := f(0)
	if f0 == 0 {
		return 0, true
	}
	up, fUp := 0.0, f0     // outer end of the scan above 0
	down, fDown := 0.0, f0 // outer end of the scan below 0
	for step := irrScanStep; up < irrHighest || down > irrLowest; step *= irrScanRatio {
		xUp, xDown := min(step, irrHighest), max(-step, irrLowest)
		fxUp, fxDown := scaledNPVPair(net, xUp, xDown)
		var roots []float64
		if up < irrHighest {
			x, fx := xUp, fxUp
			if fx == 0 {
				roots = append(roots, x)
			} else if (fx > 0) != (fUp > 0) {
				if r, ok := brent(f, up, x, fUp, fx); ok {
					roots = append(roots, r)
				}
			}
			up, fUp = x, fx
		}
		if down > irrLowest {
			x, fx := xDown, fxDown
			if fx == 0 {
				roots = append(roots, x)
			} else if (fx > 0) != (fDown > 0) {
				if r, ok := brent(f, x, down, fx, fDown); ok {
					roots = append(roots, r)
				}
			}
			down, fDown = x, fx
		}
		switch len(roots) {
		case 1:
			return roots[0], true
		case 2: // both sides changed sign at the same distance: the nearer root
			if math.Abs(roots[1]) < math.Abs(roots[0]) {
				return roots[1], true
			}
			return roots[0], true
		}
	}
	return 0, false
}

// scaledNPV is Σ net[t]·(1+x)^−t for x ≥ 0, and that sum times (1+x)^n
// (n = len−1), i.e. Σ net[t]·(1+x)^(n−t), for x < 0: a positive factor, so
// the sign and the roots are the NPV's, and no power exceeds 1.
func scaledNPV(net []float64, x float64) float64 {
	acc := 0.0
	if x >= 0 {
		v := 1 / (1 + x)
		for t := len(net) - 1; t >= 0; t-- {
			acc = acc*v + net[t]
		}
		return acc
	}
	u := 1 + x
	for _, cf := range net {
		acc = acc*u + cf
	}
	return acc
}

// scaledNPVPair is scaledNPV at up ≥ 0 and at down < 0 in one pass: two
// independent Horner chains the CPU runs side by side, which halves the
// cost of the bracket scan.
func scaledNPVPair(net []float64, up, down float64) (fUp, fDown float64) {
	v, u := 1/(1+up), 1+down
	n := len(net)
	for i, cf := range net {
		fUp = fUp*v + net[n-1-i]
		fDown = fDown*u + cf
	}
	return fUp, fDown
}

// brent finds a root of f in [a, b], where fa = f(a) and fb = f(b) have
// opposite signs (Brent 1973, as in Numerical Recipes' zbrent): inverse
// quadratic interpolation or secant steps, falling back to bisection, so it
// always converges; ok is false only if it runs out of iterations.
func brent(f func(float64) float64, a, b, fa, fb float64) (root float64, ok bool) {
	const eps = 0x1p-52
	c, fc := b, fb
	var d, e float64
	for range irrMaxIterations {
		if (fb > 0) == (fc > 0) { // keep the root between b and c
			c, fc = a, fa
			d = b - a
			e = d
		}
		if math.Abs(fc) < math.Abs(fb) { // b is the best estimate
			a, b, c = b, c, b
			fa, fb, fc = fb, fc, fb
		}
		tol := 2*eps*math.Abs(b) + 1e-300
		half := (c - b) / 2
		if math.Abs(half) <= tol || fb == 0 {
			return b, true
		}
		if math.Abs(e) >= tol && math.Abs(fa) > math.Abs(fb) {
			s := fb / fa
			var p, q float64
			if a == c { // secant
				p = 2 * half * s
				q = 1 - s
			} else { // inverse quadratic interpolation
				q = fa / fc
				r := fb / fc
				p = s * (2*half*q*(q-r) - (b-a)*(r-1))
				q = (q - 1) * (r - 1) * (s - 1)
			}
			if p > 0 {
				q = -q
			}
			p = math.Abs(p)
			if 2*p < min(3*half*q-math.Abs(tol*q), math.Abs(e*q)) {
				e, d = d, p/q
			} else {
				d, e = half, half
			}
		} else {
			d, e = half, half
		}
		a, fa = b, fb
		if math.Abs(d) > tol {
			b += d
		} else {
			b += math.Copysign(tol, half)
		}
		fb = f(b)
	}
	return b, false
}
