package finance

import (
	"math"
	"slices"
)

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
// roots lists every root found in the monthly range −0.9999 .. 10,
// annualised, ascending.
//
// How it is solved: by Descartes' rule of signs, a series whose flows
// change sign once (ignoring zeros) has exactly one root with x > −1; more
// changes allow several. A bracket scan walks a grid outwards from x = 0 on
// both sides (steps growing 10 % a point, from 1e-6 to the ends of the
// range) and Brent's method narrows each bracket where the NPV changes sign
// to machine precision. With one sign change the scan stops at the first
// root; otherwise it covers the whole range and collects every root. Two
// roots within one grid cell (less than ~10 % apart), or a double root
// where the NPV touches 0 without changing sign, are not seen. The NPV is
// evaluated scaled by (1+x)^n for x < 0 (same sign, same roots), so long
// horizons near x = −1 do not overflow.
//
// Absent with NoSignChange when all flows are ≥ 0 or all are ≤ 0, with
// MultipleRoots when more than one root lies in the range, and with
// DidNotConverge when none does (or a flow is not finite).
func IRR(net []float64) (irr Result, roots []float64) {
	pos, neg := false, false
	for _, cf := range net {
		if math.IsNaN(cf) || math.IsInf(cf, 0) {
			return absent(DidNotConverge), nil
		}
		pos, neg = pos || cf > 0, neg || cf < 0
	}
	if !pos || !neg {
		return absent(NoSignChange), nil
	}
	monthly, ok := irrMonthly(net, SignChanges(net) > 1)
	if !ok || len(monthly) == 0 {
		return absent(DidNotConverge), nil
	}
	for _, x := range monthly {
		roots = append(roots, AnnualRate(x))
	}
	if len(roots) > 1 {
		return absent(MultipleRoots), roots
	}
	return value(roots[0]), roots
}

// SignChanges counts the changes of sign between consecutive non-zero
// flows: Descartes' bound on the number of IRRs (roots with x > −1).
func SignChanges(net []float64) int {
	n, last := 0, 0.0
	for _, cf := range net {
		if cf == 0 {
			continue
		}
		if last != 0 && (cf > 0) != (last > 0) {
			n++
		}
		last = cf
	}
	return n
}

// irrMonthly finds the monthly roots in the range, ascending: the one
// closest to 0 only, unless all is set. ok is false when Brent's method ran
// out of iterations on a bracket.
func irrMonthly(net []float64, all bool) (roots []float64, ok bool) {
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
		roots = append(roots, 0)
		if !all {
			return roots, true
		}
	}
	// step records the root in the grid cell from the point reached before
	// (prev, fPrev) to the next one (x, fx); a grid point where the NPV is
	// exactly 0 is a root, recorded once, when the scan reaches it.
	step := func(prev, fPrev, x, fx float64) bool {
		switch {
		case fx == 0:
			roots = append(roots, x)
		case fPrev != 0 && (fx > 0) != (fPrev > 0):
			a, b, fa, fb := min(prev, x), max(prev, x), fPrev, fx
			if prev > x {
				fa, fb = fx, fPrev
			}
			r, ok := brent(f, a, b, fa, fb)
			if !ok {
				return false
			}
			roots = append(roots, r)
		}
		return true
	}
	up, fUp := 0.0, f0     // outer end of the scan above 0
	down, fDown := 0.0, f0 // outer end of the scan below 0
	for d := irrScanStep; up < irrHighest || down > irrLowest; d *= irrScanRatio {
		xUp, xDown := min(d, irrHighest), max(-d, irrLowest)
		fxUp, fxDown := scaledNPVPair(net, xUp, xDown)
		if up < irrHighest {
			if !step(up, fUp, xUp, fxUp) {
				return nil, false
			}
			up, fUp = xUp, fxUp
		}
		if down > irrLowest {
			if !step(down, fDown, xDown, fxDown) {
				return nil, false
			}
			down, fDown = xDown, fxDown
		}
		if !all && len(roots) > 0 {
			break
		}
	}
	slices.Sort(roots)
	if !all && len(roots) > 1 { // both sides changed sign at the same distance: the nearer root
		if math.Abs(roots[1]) < math.Abs(roots[0]) {
			roots = roots[1:]
		}
		roots = roots[:1]
	}
	return roots, true
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

// MIRR is the modified internal rate of return of a monthly net series,
// annualised, exactly as spreadsheet MIRR(CF0:CFn; f; r) over the months
// with f and r the monthly equivalents of the annual financeRate and
// reinvestRate: the costs (negative flows) discounted to month 0 at f, the
// gains (positive flows) compounded to the last month n at r, and
//
//	m = (FV(gains) ÷ −PV(costs))^(1/n) − 1, reported as (1+m)^12 − 1,
//
// the same annualisation as IRR. Every month of the series counts, leading
// and trailing zero months included (they lengthen n, as they do in the
// spreadsheet range). Absent with NoSignChange when there are no gains or
// no costs (the spreadsheet's #DIV/0!) or fewer than two months, and with
// DidNotConverge when a flow or a rate is not finite.
func MIRR(net []float64, financeRate, reinvestRate float64) Result {
	if len(net) < 2 {
		return absent(NoSignChange)
	}
	fm, rm := MonthlyRate(financeRate), MonthlyRate(reinvestRate)
	var pvCosts, fvGains float64
	discount, grow := 1/(1+fm), 1+rm
	for t := len(net) - 1; t >= 0; t-- { // Horner: PV at f from the end
		c := min(net[t], 0)
		pvCosts = pvCosts*discount + c
	}
	for _, cf := range net { // Horner: FV at r to the end
		fvGains = fvGains*grow + max(cf, 0)
	}
	if math.IsNaN(pvCosts+fvGains) || math.IsInf(pvCosts+fvGains, 0) {
		return absent(DidNotConverge)
	}
	if pvCosts == 0 || fvGains == 0 {
		return absent(NoSignChange)
	}
	n := float64(len(net) - 1)
	// (FV/−PV)^(12/n) − 1 through logs, so tiny rates keep their digits.
	return value(math.Expm1(12 / n * (math.Log(fvGains) - math.Log(-pvCosts))))
}
