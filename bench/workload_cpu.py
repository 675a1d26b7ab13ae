# SPDX-License-Identifier: MIT
"""CPU-bound benchmark workload: calls at a realistic stack depth; prints its own run time (s).
BENCH_PIN=CPU: it binds itself to that CPU (a profiler that launches it can run elsewhere) and
also prints "cpu SECONDS", its thread's CPU time: time a hypervisor took from the CPU is not in
it, so it varies less than the run time on a shared host."""
import os
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


if os.environ.get("BENCH_PIN"):
    os.sched_setaffinity(0, {int(os.environ["BENCH_PIN"])})
start, cpu = time.perf_counter(), time.thread_time()
main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
print("%.6f" % (time.perf_counter() - start))
if os.environ.get("BENCH_PIN"):
    print("cpu %.6f" % (time.thread_time() - cpu))
