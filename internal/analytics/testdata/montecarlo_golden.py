#!/usr/bin/env python3
"""Independent computation of the Monte Carlo ROI of montecarlo_test.go.

Written from the method in docs/numbers.md (ROI
analysis, Monte Carlo), not from the Go code: seed = FNV-1a 64 over the
little-endian bytes of the first month (year*12 + month-1 as int64), then per
month benefit and cost as float64; SplitMix64 from the seed; per run three
uniforms u = (x >> 11) / 2**53: benefits * (0.8 + 0.4 u1), costs * (0.9 +
0.2 u2), a one-month delay of every benefit when u3 >= 0.5 (the last
month's benefit falls out); ROI % = (B - C) / C * 100; p10/p50/p90 by linear
interpolation between order statistics. Usage: python3 montecarlo_golden.py
"""
import struct

M64 = (1 << 64) - 1


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & M64
    return h


def seed_of(start, benefits, costs):
    data = struct.pack('<q', start)
    for b, c in zip(benefits, costs):
        data += struct.pack('<d', b) + struct.pack('<d', c)
    return fnv1a64(data)


def splitmix(seed):
    state = seed
    while True:
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def pct(xs, p):
    h = (len(xs) - 1) * p
    lo = int(h)
    if lo + 1 >= len(xs):
        return xs[-1]
    return xs[lo] + (h - lo) * (xs[lo + 1] - xs[lo])


def simulate(name, start, benefits, costs, runs=1000):
    seed = seed_of(start, benefits, costs)
    rng = splitmix(seed)
    u = lambda: (next(rng) >> 11) / 2.0**53
    rois = []
    for _ in range(runs):
        fb = 0.8 + 0.4 * u()
        fc = 0.9 + 0.2 * u()
        delay = 1 if u() >= 0.5 else 0
        b = sum(benefits[:len(benefits) - delay]) * fb
        c = sum(costs) * fc
        rois.append((b - c) / c * 100)
    rois.sort()
    print('%s: seed %016x p10 %.10f p50 %.10f p90 %.10f min %.6f max %.6f' % (
        name, seed, pct(rois, .1), pct(rois, .5), pct(rois, .9), rois[0], rois[-1]))


# golden P of roi_test.go over its lifetime, 2026-01 .. 2026-12
simulate('P', 2026 * 12, [2980, 1500, 2500, 4400, 2000, 2000, 4400, 2000, 2000, 4500, 2000, 2000], [12500] + [500] * 11)
# symmetric: benefits = costs, nothing in the last month (a delay loses nothing): median ROI 0
simulate('symmetric', 2024 * 12, [0, 1000, 1000, 1000, 0], [3000, 0, 0, 0, 0])
