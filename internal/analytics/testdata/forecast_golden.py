#!/usr/bin/env python3
"""Independent computation of the damped-trend Holt forecast of forecast_test.go,
written from the method in docs/numbers.md (Forecasts):
l0 = y0, b0 = y1 - y0; for t >= 1: f = l + phi*b, l' = a*y + (1-a)*f,
b' = beta*(l' - l) + (1-beta)*phi*b; forecast l + (phi + .. + phi^h) b;
sigma = sqrt(sum (y_t - f_t)^2 / (n-1)); 80 % interval +- 1.2815515655446004 sigma sqrt(h).
Usage: python3 forecast_golden.py"""
import math

a, beta, phi, z = 0.5, 0.3, 0.9, 1.2815515655446004


def holt(y, horizon):
    l, b = y[0], y[1] - y[0]
    sse = 0.0
    for t in range(1, len(y)):
        f = l + phi * b
        sse += (y[t] - f) ** 2
        nl = a * y[t] + (1 - a) * f
        b = beta * (nl - l) + (1 - beta) * phi * b
        l = nl
    sd = math.sqrt(sse / (len(y) - 1))
    print('level %.10f trend %.10f sd %.10f' % (l, b, sd))
    for h in range(1, horizon + 1):
        v = l + sum(phi ** k for k in range(1, h + 1)) * b
        w = z * sd * math.sqrt(h)
        print('h=%d %.10f [%.10f, %.10f]' % (h, v, v - w, v + w))


holt([100, 120, 130, 160, 170, 200], 3)
# the API golden portfolio (api/analytics_insights_test.go): realised 2024-01..04 =
# 1,000 + 1,800 x 1.10, 1,500, 2,500, 2,000
holt([2980, 1500, 2500, 2000], 3)
