#!/usr/bin/env python3
"""A hand-checkable stage profile for the pfo end-to-end tests.

2 stages; forward and backward alike; five clocks 1410, 1300, 1200, 1100, 1000 MHz taking q = 10..14
units of 1 ms (plus 0.1 us, so that time // unit is q); effective energy exactly
e'(q) = 100 exp(-0.3 (q - 10)) + 50 J, blocking power 10 W, so energy e = e' + 10 t.

  pfo_tiny_profile.py            prints the CSV
  pfo_tiny_profile.py --expect   prints, for 2 stages x 1 microbatch (four instructions in one
                                 chain), every iteration time T from 56 units (every instruction
                                 at 1000 MHz: T_max) down to 40 with its least energy, computed by
                                 hand: `time,energy` (balanced durations are optimal for a convex
                                 e').
"""
import math
import sys

BLOCKING_W = 10.0
CLOCKS = {10: 1410, 11: 1300, 12: 1200, 13: 1100, 14: 1000}


def effective(q):
    return 100 * math.exp(-0.3 * (q - 10)) + 50


if '--expect' in sys.argv:
    for units in range(56, 39, -1):
        base, extra = divmod(units, 4)
        durations = [base + 1] * extra + [base] * (4 - extra)
        energy = sum(effective(q) for q in durations) + 2 * units * 0.001 * BLOCKING_W
        print(f'{units * 0.001:.3f},{energy:.6f}')
    sys.exit()
print('stage,instruction,frequency,time,energy')
for stage in (0, 1):
    for instruction in ('forward', 'backward'):
        for q, mhz in CLOCKS.items():
            t = q * 0.001 + 1e-7
            print(f'{stage},{instruction},{mhz},{t:.7f},{effective(q) + BLOCKING_W * t:.9f}')
