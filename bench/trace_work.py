# SPDX-License-Identifier: MIT
"""bench/trace workload: a tight loop (the case that costs a line tracer the most).

Prints the loop's own wall time and the main thread's CPU time in seconds, so interpreter
start-up and the tracer's attach are not counted, and CPU time shows what the loop itself cost on
a machine shared with other work. Under `kernprof -l`, `profile` is line_profiler's decorator;
otherwise a no-op.
"""
import os
import sys
import time

try:
    profile  # noqa: B018 (injected by kernprof)
except NameError:
    def profile(f):
        return f


@profile
def work(n):
    total = 0
    for i in range(n):
        total += i
    return total


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000000
    floor = os.environ.get("LS_BENCH_FLOOR")
    if floor:  # bench/trace_floor.c: hooks that do nothing
        sys.path.insert(0, floor)
        import trace_floor
        trace_floor.start()
    work(1000)  # warm up (3.11+ specialises the loop)
    t, c = time.perf_counter(), time.thread_time()
    work(n)
    print("%.6f %.6f" % (time.perf_counter() - t, time.thread_time() - c))


if __name__ == "__main__":
    main()
