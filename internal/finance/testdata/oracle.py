#!/usr/bin/env python3
"""Independent oracle for the cash-flow figures of internal/finance.

Computes, for every case of the table below, the NPV, the payback, the IRR
(every root in the search range), the MIRR, from the definitions in
docs/numbers.md, in exact rational arithmetic (fractions) or 60-digit
decimal arithmetic (decimal), never from the Go code. The method is in
oracle.md beside this script. Prints the golden file (JSON) on stdout:

    python3 internal/finance/testdata/oracle.py > internal/finance/testdata/golden.json

Standard library only; deterministic (the random flows come from
random.Random(seed).random(), whose sequence Python guarantees across
versions, and only exact IEEE operations and round() shape them).
"""
import json
import random
import sys
from decimal import Decimal, getcontext
from fractions import Fraction

getcontext().prec = 60

# The IRR search range (monthly rates), as the Go solver's.
LOWEST = Decimal("-0.9999")
HIGHEST = Decimal(10)
SCAN_POINTS = 4000  # grid cells of the multiple-root scan (uniform in ln(1+x))

# ---------------------------------------------------------------- definitions


def monthly_rate(annual):
    """(1 + r)^(1/12) - 1."""
    return (1 + annual) ** (Decimal(1) / 12) - 1


def npv(flows, annual):
    """Spreadsheet CF0 + NPV(r_m; CF1..CFn): the first month undiscounted."""
    d = 1 + monthly_rate(annual)
    total, factor = Decimal(0), Decimal(1)
    for cf in flows:
        total += cf / factor
        factor *= d
    return total


def payback(flows):
    """Months until the cumulative flow turns >= 0 for the last time."""
    cum, cums = Fraction(0), []
    for cf in flows:
        cum += Fraction(cf)
        cums.append(cum)
    if not any(cf < 0 for cf in flows):
        return None, "no_costs"
    if cums[-1] < 0:
        return None, "never_paid_back"
    negative = [i for i, c in enumerate(cums) if c < 0]
    if not negative:
        return Fraction(0), None
    j = negative[-1]  # the month j+1 (0-based) lifts the cumulative flow to >= 0 for good
    return (j + 1) + (-cums[j] / Fraction(flows[j + 1])), None


def sign_changes(flows):
    signs = [cf > 0 for cf in flows if cf != 0]
    return sum(1 for a, b in zip(signs, signs[1:]) if a != b)


def npv_at(flows, x):
    """Sum CF_t / (1+x)^t at a monthly rate x > -1 (decimal)."""
    v = 1 / (1 + x)
    acc = Decimal(0)
    for cf in reversed(flows):
        acc = acc * v + cf
    return acc


def sign(v):
    return (v > 0) - (v < 0)


def bisect(flows, lo, hi, slo):
    """The root between lo and hi (signs differ) to 1e-45, by bisection."""
    while hi - lo > Decimal("1e-45") * max(1, abs(lo)):
        mid = (lo + hi) / 2
        s = sign(npv_at(flows, mid))
        if s == 0:
            return mid
        if s == slo:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def irr_roots(flows):
    """Every monthly root in [LOWEST, HIGHEST], ascending.

    One sign change: exactly one root with x > -1 (Descartes), found by
    bisection over the whole range when the NPV's signs at the ends differ.
    More: the NPV's sign on SCAN_POINTS+1 points uniform in ln(1+x), plus
    x = 0, and a bisection in every cell whose ends differ in sign.
    """
    if sign_changes(flows) == 1:
        grid = [LOWEST, HIGHEST]
    else:
        a, b = (1 + LOWEST).ln(), (1 + HIGHEST).ln()
        grid = sorted({(a + (b - a) * k / SCAN_POINTS).exp() - 1 for k in range(SCAN_POINTS + 1)} | {Decimal(0)})
        grid[0], grid[-1] = LOWEST, HIGHEST
    roots = []
    prev_x, prev_s = None, None
    for x in grid:
        s = sign(npv_at(flows, x))
        if s == 0:
            roots.append(x)
        elif prev_s is not None and prev_s != 0 and s != prev_s:
            roots.append(bisect(flows, prev_x, x, prev_s))
        prev_x, prev_s = x, s
    return roots


def annual(monthly):
    return (1 + monthly) ** 12 - 1


def irr(flows):
    if not any(cf < 0 for cf in flows):
        return None, "no_costs", []
    if not any(cf > 0 for cf in flows):
        return None, "no_sign_change", []
    roots = [annual(x) for x in irr_roots(flows)]
    if not roots:
        return None, "did_not_converge", []
    if len(roots) > 1:
        return None, "multiple_roots", roots
    return roots[0], None, roots


def mirr(flows, finance_annual, reinvest_annual):
    """Spreadsheet MIRR(CF0:CFn; f; r) over monthly f and r, annualised:
    ((-NPV(r; gains) * (1+r)^N) / (NPV(f; costs) * (1+f)))^(1/(N-1)) - 1 with
    N the number of months, then (1+m)^12 - 1."""
    if not any(cf < 0 for cf in flows):
        return None, "no_costs"
    if not any(cf > 0 for cf in flows) or len(flows) < 2:
        return None, "no_sign_change"
    f, r = monthly_rate(finance_annual), monthly_rate(reinvest_annual)

    def sheet_npv(rate, values):  # spreadsheet NPV: the first value discounted once
        return sum(v / (1 + rate) ** (i + 1) for i, v in enumerate(values))

    n = len(flows)
    gains = [cf if cf > 0 else Decimal(0) for cf in flows]
    costs = [cf if cf < 0 else Decimal(0) for cf in flows]
    ratio = (-sheet_npv(r, gains) * (1 + r) ** n) / (sheet_npv(f, costs) * (1 + f))
    m = ratio ** (Decimal(1) / (n - 1)) - 1
    return annual(m), None


# ---------------------------------------------------------------- the table


def rng_flows(seed, n, capex, lo, hi, cents=True):
    """capex at t0, then n-1 uniform draws in [lo, hi), rounded to cents."""
    g = random.Random(seed)
    out = [-capex]
    for _ in range(n - 1):
        v = lo + (hi - lo) * g.random()
        out.append(round(v, 2) if cents else v)
    return out


def typical():
    """36 months: capex 120,000 at t0 and 20,000 at t1, opex 1,500 a month
    from t1; benefits from t3 ramping 1,000 a month up to 10,000."""
    out = []
    for t in range(36):
        cost = (120000 if t == 0 else 0) + (20000 if t == 1 else 0) + (1500 if t >= 1 else 0)
        benefit = min(10000, 1000 * (t - 2)) if t >= 3 else 0
        out.append(float(benefit - cost))
    return out


def two_sign_changes():
    """Invest 10,000, earn 1,200 a month for 23 months, 18,000 to wind down."""
    return [-10000.0] + [1200.0] * 23 + [-18000.0]


def delayed_capex():
    """The demo's USD 1.5m capex one month late: month 0 empty, then
    15,000 a month of running cost and benefits of 150,000 a month from
    month 3 for 33 months."""
    out = [0.0, -1500000.0, -15000.0]
    out += [150000.0 - 15000.0] * 33
    return out


def seasonal():
    """60 months: 250,000 up front, then 6,000 + 2,000 * u (u uniform)."""
    return rng_flows(60, 60, 250000.0, 6000, 8000)


def growth_240():
    """240 months: 1,000,000 up front, then 9,000 a month growing 0.2 %."""
    out, v = [-1e6], 9000.0
    for _ in range(239):
        out.append(round(v, 2))
        v *= 1.002
    return out


def scaled(flows, k):
    return [cf * k for cf in flows]


def invest_earn_decommission(seed, n):
    """Random: capex, n-2 months of earnings, a decommissioning cost at the
    end (two sign changes)."""
    g = random.Random(seed)
    out = [-round(50000 + 50000 * g.random(), 2)]
    out += [round(2000 + 3000 * g.random(), 2) for _ in range(n - 2)]
    out.append(-round(30000 + 60000 * g.random(), 2))
    return out


def reinvest(seed):
    """120 months, three sign changes: capex, 40 months of gains, a second
    capex, 78 months of gains."""
    g = random.Random(seed)
    out = [-200000.0]
    out += [round(4000 + 4000 * g.random(), 2) for _ in range(40)]
    out.append(-300000.0)
    out += [round(5000 + 5000 * g.random(), 2) for _ in range(78)]
    return out


CASES = [
    # name, annual discount rate, flows, note
    ("typical", "0.08", typical(), "the worked example of docs/numbers.md"),
    ("no_costs", "0", [1000.0 + 50 * t for t in range(24)], "benefits only"),
    ("all_costs", "1", [-500.0] * 24, "costs only"),
    ("zero_flows", "0.08", [0.0] * 12, "nothing at all"),
    ("seasonal_60", "0.12", seasonal(), "60 random months"),
    ("growth_240", "0.05", growth_240(), "240 months"),
    ("tiny_irr", "0.08", [-1e6] + [16667.0] * 60, "IRR of a few millionths"),
    ("huge_irr", "0.08", [-1000.0] + [1500.0] * 24, "~150 % a month"),
    ("two_sign_changes", "0.08", two_sign_changes(), "two roots"),
    ("payback_at_boundary", "0.08", [-300.0, 100.0, 100.0, 100.0], "cumulative exactly 0 at the end"),
    ("payback_never", "0.08", [-1000.0] + [100.0] * 5, "never paid back, negative IRR"),
    ("delayed_capex", "0.08", delayed_capex(), "capex one month late"),
    ("leading_zeros", "0.08", [0.0, 0.0, 0.0, -1000.0, 300.0, 300.0, 300.0, 300.0, 300.0], "three empty months first"),
    ("ends_negative", "0.08", [-100.0, 230.0, -132.0], "paid back, then negative at the end: never paid back; two roots"),
    ("dip_after_payback", "0.08", [-100.0, 150.0, -200.0, 10.0, 200.0], "the last turn to >= 0 counts"),
    ("negative_root_nearer", "0.08", [-100.0, 215.0, -114.0], "roots -5 % and +20 % a month"),
    ("positive_root_nearer", "0.08", [-100.0, 185.0, -84.0], "roots -20 % and +5 % a month"),
    ("no_real_root", "0.08", [-1.0, 3.0, -3.0], "signs change, no root"),
    ("root_above_range", "0.08", [-1.0, 1e12], "root at 1e12 - 1 a month"),
    ("root_below_range", "0.08", [-1000.0, 0.001], "root at 1e-6 - 1 a month"),
    ("one_month_doubling", "0.08", [-1.0, 2.0], "IRR 100 % a month"),
    ("random_120", "0.08", rng_flows(120, 120, 400000.0, 2000, 9000), "120 random months"),
    ("random_12", "0.1", rng_flows(12, 12, 10000.0, 500, 1500), "12 random months"),
    ("random_24", "0.06", rng_flows(24, 24, 30000.0, -500, 3000), "24 random months, some negative"),
    ("random_36", "0.15", rng_flows(36, 36, 100000.0, -2000, 8000), "36 random months, some negative"),
    ("random_48", "0.03", rng_flows(48, 48, 75000.0, 0, 4000), "48 random months"),
    ("random_84", "0.2", rng_flows(84, 84, 500000.0, 1000, 12000), "84 random months"),
    ("random_uncented", "0.08", rng_flows(7, 30, 50000.0, 1000, 3000, cents=False), "random full-precision floats"),
    ("decommission_30", "0.08", invest_earn_decommission(30, 30), "random, two sign changes"),
    ("decommission_60", "0.1", invest_earn_decommission(61, 60), "random, two sign changes"),
    ("decommission_120", "0.05", invest_earn_decommission(120, 120), "random, two sign changes, 120 months"),
    ("reinvest_120", "0.08", reinvest(121), "three sign changes, 120 months"),
    ("typical_x1e-9", "0.08", scaled(typical(), 1e-9), "typical x 1e-9"),
    ("typical_x1e12", "0.08", scaled(typical(), 1e12), "typical x 1e12"),
    ("two_sign_changes_x1e-9", "0.08", scaled(two_sign_changes(), 1e-9), "two roots x 1e-9"),
    ("growth_240_x1e12", "0.05", scaled(growth_240(), 1e12), "240 months x 1e12"),
    ("delayed_capex_x1e12", "0.08", [0.0] * 3 + scaled(delayed_capex(), 1e12), "leading zeros, delayed capex x 1e12"),
    ("loan_like", "0.08", [1000.0] + [-90.0] * 12, "gain first, costs after: ends negative"),
    ("nothing_to_pay_back", "0.08", [50.0, -10.0, -10.0], "invested, cumulative never negative: payback 0"),
    ("trailing_zeros", "0.08", [-1000.0, 600.0, 600.0, 0.0, 0.0, 0.0], "empty months last (they lengthen MIRR's n)"),
    ("paid_back_in_last_month", "0.08", [-200.0, 100.0, 100.0], "cumulative reaches exactly 0 in the last month"),
]

# ---------------------------------------------------------------- output


def num(v):
    """A JSON number with 25 significant digits (exact for the flows' repr)."""
    if isinstance(v, Fraction):
        v = Decimal(v.numerator) / Decimal(v.denominator)
    return format(v, ".25g") if v != 0 else "0"


def figure(value, reason):
    if value is None:
        return '{"value": null, "reason": "%s"}' % reason
    return '{"value": %s, "reason": null}' % num(value)


def main():
    names = [c[0] for c in CASES]
    assert len(set(names)) == len(names), "duplicate case names"
    out = ["["]
    for i, (name, rate, flows, note) in enumerate(CASES):
        d = [Decimal(cf) for cf in flows]  # exact binary values of the floats
        r = Decimal(rate)
        pb, pb_reason = payback(flows)
        irr_v, irr_reason, roots = irr(d)
        m, m_reason = mirr(d, r, r)
        out.append("  {")
        out.append('    "name": %s, "note": %s, "rate": %s,' % (json.dumps(name), json.dumps(note), rate))
        out.append('    "flows": [%s],' % ", ".join(repr(float(cf)) for cf in flows))
        out.append('    "npv": %s,' % num(npv(d, r)))
        out.append('    "payback_months": %s,' % figure(pb, pb_reason))
        out.append('    "irr": %s,' % figure(irr_v, irr_reason))
        out.append('    "irr_roots": [%s],' % ", ".join(num(x) for x in roots))
        out.append('    "mirr": %s' % figure(m, m_reason))
        out.append("  }" + ("," if i < len(CASES) - 1 else ""))
    out.append("]")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
