# SPDX-License-Identifier: MIT
"""A target for tests/tools/pyoracle.py: threads parked at known lines, plus one busy thread.

    python3.X pytarget.py OUT.json

Runs on CPython 3.11 to 3.15. Each parked thread sleeps inside a different kind of frame chain
(deep recursion, a generator, a comprehension -- a frame of its own in 3.11, inlined from 3.12 --,
an exception handler, a Python -> C -> Python call through sorted(), and functions whose names
need 1- and 2-byte-per-character strings). When every parked thread is still, the main thread
writes what the interpreter itself says about each thread (sys._current_frames() and
traceback.extract_stack(): file, line, function, innermost first) to OUT.json, then parks too.
The oracle walks the same process from outside and must print exactly these stacks.
"""
import json
import os
import sys
import threading
import time
import traceback

PARK = 3600.0


def leaf_sleep():
    time.sleep(PARK)


def recurse(n):
    if n == 0:
        leaf_sleep()
    else:
        recurse(n - 1)


def deep():
    recurse(40)


def gen():
    yield 1
    time.sleep(PARK)
    yield 2


def in_generator():
    g = gen()
    next(g)
    next(g)


def in_comprehension():
    return [time.sleep(PARK) for _ in range(1)]


class Holder:
    def method(self):
        try:
            raise ValueError("parked in a handler")
        except ValueError:
            time.sleep(PARK)


def in_handler():
    Holder().method()


def via_c_boundary():
    return sorted([2, 1], key=lambda x: time.sleep(PARK))


def größe():
    time.sleep(PARK)


def 函数():
    größe()


def spin():
    x = 0
    while True:
        x += 1


PARKED = [deep, in_generator, in_comprehension, in_handler, via_c_boundary, 函数]


def summary(frame):
    """The interpreter's own view of a stack: innermost first, as [file, line, name]."""
    return [[f.filename, f.lineno, f.name] for f in reversed(traceback.extract_stack(frame))]


def marker_line(marker):
    with open(__file__, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith(marker) and "marker_line" not in text:
                return n
    raise SystemExit("pytarget: marker %r not found" % marker)


def main():
    out = sys.argv[1]
    threads = [threading.Thread(target=fn, name=fn.__name__, daemon=True) for fn in PARKED]
    busy = threading.Thread(target=spin, name="spin", daemon=True)
    for t in threads + [busy]:
        t.start()
    parked_ids = {t.ident for t in threads}
    # Still = two snapshots 50 ms apart agree and every parked thread is inside time.sleep
    # (its innermost Python frame no longer moves).
    last = None
    for _ in range(400):
        frames = sys._current_frames()
        snap = {i: summary(frames[i]) for i in parked_ids if i in frames}
        if len(snap) == len(parked_ids) and snap == last:
            break
        last = snap
        time.sleep(0.05)
    else:
        sys.exit("pytarget: threads never settled")
    frames = sys._current_frames()
    busy_stack = summary(frames[busy.ident])
    me = summary(sys._getframe())
    me[0][1] = marker_line("# main parks here")
    by_native = {t.ident: t.native_id for t in threads + [busy]}
    by_native[threading.main_thread().ident] = threading.get_native_id()
    result = {
        "pid": os.getpid(),
        "version": "%d.%d.%d" % sys.version_info[:3],
        "threads": {str(by_native[i]): s for i, s in snap.items()},
        "main": {"tid": threading.get_native_id(), "frames": me},
        "busy": {
            "tid": busy.native_id,
            # the loop's lines; the outer frames are exact
            "leaf_lines": [spin.__code__.co_firstlineno + k for k in (1, 2, 3)],
            "frames": busy_stack,
        },
    }
    with open(out + ".tmp", "w") as f:
        json.dump(result, f)
    os.rename(out + ".tmp", out)
    time.sleep(PARK)  # main parks here


if __name__ == "__main__":
    main()
