# SPDX-License-Identifier: MIT
"""CPU-bound benchmark workload: calls at a realistic stack depth; prints its own run time (s)."""
import sys
import time


def leaf(n):
    t = 0
    for i in range(n):
        t += (i * i) % 7
    return t


def nest(depth, n):
    if depth == 0:
        return leaf(n)
    return nest(depth - 1, n)


def main(rounds):
    s = 0
    for _ in range(rounds):
        s += nest(30, 20_000)
        s += sum(x % 3 for x in range(20_000))
    return s


start = time.perf_counter()
main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
print("%.6f" % (time.perf_counter() - start))
