#!/usr/bin/python3.11
# SPDX-License-Identifier: MIT
"""Writes report-data JSON (docs/report-data.md) for the browser tests and the report-open bench.

    make-fixture.py [-o FILE]                        the feature fixture: several processes, tricky
                                                     source text, nulls, ties, memory, GPU, Spark,
                                                     children, a notebook and symbol links
    make-fixture.py --big [--sources N --lines M]    a large synthetic profile (bench/report-open),
                  [--stacks K]                       with K distinct stacks (100,000)
    make-fixture.py --plain                          the feature fixture reduced to one sampled
                                                     process, no memory/GPU/Spark/children

Values are deterministic (seeded), so the tests can recompute expectations from the JSON itself.
"""
import argparse
import json
import random
import sys

LINE_COLS = ["proc", "src", "line", "time_s", "total_s", "samples", "samples_total", "cpu_s",
             "wait_s", "gil_wait_s", "python_s", "native_s", "kernel_s", "hits", "avg_hit_s",
             "mem_change", "peak_mem", "gpu_s", "gpu_peak_mem", "driver_s", "gpu_native_s",
             "gpu_nccl_s"]
FUNC_COLS = ["proc", "src", "name", "def_line", "end_line", "lines", "time_s", "total_s",
             "samples", "calls"]
EDGE_COLS = ["proc", "src", "line", "callee_src", "callee_line", "samples"]

LONG_LINE = ("LONG = [" + ", ".join(f'"item-{i:03d}"' for i in range(70)) + "]  # a long line")

APP_PY = '''"""LineScope-BPF fixture: a small job with tricky text.

The report must show this </script> as text, and <img src=x onerror=alert(1)> too.
"""
import json
import subprocess

from pkg.util import load_rows, parse, tail_helper
from tools.util import checksum

BANNER = "</script><script>window.__pwned = 1</script>"
SEPARATOR = "a\u2028b\u2029c"
PAYLOAD = '<img src=x onerror="window.__pwned=2">'
BROKEN = "bad bytes: \udcc0\udcaf and \udcff here"


@staticmethod
def summarize(rows):
    total = 0
    for row in rows:
        total += parse(row)
    return total


def main(n=3):
    rows = load_rows(n)
    s = summarize(rows)
    msg = f"total={s:,} rows={len(rows)} {{literal}} {json.dumps({'k': 1})}"
    print(msg, checksum(rows), tail_helper(parse(rows[0])))
    subprocess.run(["python3", "worker.py", str(n)], check=True)
    subprocess.run(["sort", "data.txt"])
    subprocess.run(["papermill", "analysis.ipynb", "out.ipynb"])
    return s + 0x1F + 1_000 + 3.5e-2


''' + LONG_LINE + '''

if __name__ == "__main__":
    main()
'''

UTIL_HEAD = '''"""Row helpers (pkg/util.py)."""
import math


def load_rows(n):
    rows = []
    for i in range(n * 1000):
        rows.append(str(i))
    return rows


def parse(row):
    value = int(row) % 7
    return value


'''

TOOLS_UTIL_PY = '''"""Another util.py (tools/util.py): same file name, different directory."""
import hashlib


def checksum(rows):
    h = hashlib.sha256()
    for r in rows:
        h.update(r.encode())
    return h.hexdigest()
'''

WORKER_PY = '''"""Child process started by app.py."""
import sys

from pkg.util import load_rows


def work(n):
    rows = load_rows(n)
    acc = 0
    for r in rows:
        acc += len(r)
    return acc


print(work(int(sys.argv[1])))
'''

NOTEBOOK_CELLS = [
    ("Cell 1", None, 'import pandas as pd\ndf = pd.DataFrame({"a": range(1000)})\ndf.head()'),
    ("Cell 2", "revision 1 of 2", 'total = df["a"].sum()\nprint(total)'),
    ("Cell 2", "revision 2 of 2", 'total = df["a"].sum()\nmean = df["a"].mean()\nprint(total, mean)'),
    ("Cell 3", None, 'def square(x):\n    return x * x\n\nresult = [square(v) for v in range(100)]\n'
                     'print(len(result))'),
    ("Cell 4", None, '%run ./helpers.ipynb\nprint(square(3))'),
]


def util_py():
    """pkg/util.py: two hot functions, then filler, then tail_helper near the end of the file."""
    parts = [UTIL_HEAD]
    for k in range(120):
        parts.append(f"def filler_{k:02d}(x):\n    y = x + {k}\n    z = y * 2\n    w = z - 1\n"
                     f"    return math.sqrt(abs(w))\n\n\n")
    parts.append("def tail_helper(x):\n    return x * 2\n")
    return "".join(parts)


class Tables:
    def __init__(self, cols):
        self.cols = cols
        self.rows = []

    def add(self, **kw):
        self.rows.append(kw)

    def to_json(self, drop_absent=True):
        out = {}
        for c in self.cols:
            vals = [r.get(c) for r in self.rows]
            # A column nobody produced is absent (null), not an array of nulls.
            out[c] = None if drop_absent and all(v is None for v in vals) else vals
        return out


def line_of(text, needle, nth=0):
    n = 0
    for i, s in enumerate(text.split("\n"), 1):
        if needle in s:
            if n == nth:
                return i
            n += 1
    raise KeyError(needle)


def feature_fixture(plain=False):
    rnd = random.Random(42)
    util = util_py()
    nb_text = "\n".join(c[2] for c in NOTEBOOK_CELLS)
    cells, first = [], 1
    for label, rev, body in NOTEBOOK_CELLS:
        n = body.count("\n") + 1
        cells.append({"label": label, "first": first, "nlines": n, "revision": rev})
        first += n

    def src(path, name, kind, text, unavailable=None, cells=None):
        return {"path": path, "name": name, "kind": kind, "text": text, "unavailable": unavailable,
                "nlines": text.count("\n") + (0 if text.endswith("\n") else 1) if text else 0,
                "cells": cells}

    sources = [
        src("/home/u/proj/app.py", "app.py", "python", APP_PY),
        src("/home/u/proj/pkg/util.py", "util.py", "python", util),
        src("/home/u/proj/tools/util.py", "util.py", "python", TOOLS_UTIL_PY),
        src("/home/u/proj/worker.py", "worker.py", "python", WORKER_PY),
        src("/home/u/proj/analysis.ipynb", "analysis.ipynb", "notebook", nb_text, cells=cells),
        src("/usr/lib/python3.11/json/decoder.py", "decoder.py", "library", None,
            unavailable="library code is not captured"),
    ]
    APP, UTIL, TOOLS, WORKER, NB, LIB = range(6)

    processes = [
        {"pid": 4242, "ppid": 4200, "nspid": None, "comm": "python3", "argv": "python3 app.py 3",
         "start_s": 0.0, "end_s": 12.4, "exit": "exit 0", "python": "3.11.2 (static, usdt)",
         "note": None, "threads": 4, "samples": 9100, "native_samples": 12, "parent": None},
        {"pid": 4300, "ppid": 4242, "nspid": None, "comm": "python3",
         "argv": "python3 worker.py 3", "start_s": 3.1, "end_s": 6.0, "exit": "exit 0",
         "python": "3.12.1 (shared)", "note": None, "threads": 1, "samples": 2900,
         "native_samples": 0,
         "parent": {"proc": 0, "src": APP, "line": line_of(APP_PY, '"worker.py"'), "wait_s": 2.9}},
        {"pid": 4310, "ppid": 4242, "nspid": None, "comm": "sort", "argv": "sort data.txt",
         "start_s": 6.1, "end_s": 6.4, "exit": "signal KILL", "python": None,
         "note": "not Python: samples counted under the command", "threads": 1, "samples": 300,
         "native_samples": 300,
         "parent": {"proc": 0, "src": APP, "line": line_of(APP_PY, '"sort"'), "wait_s": 0.3}},
        {"pid": 4320, "ppid": 4242, "nspid": 12, "comm": "python3",
         "argv": "python3 -m ipykernel_launcher -f kernel-1.json", "start_s": 6.5, "end_s": 11.9,
         "exit": "exit 1", "python": "3.11.7 (shared)", "note": None, "threads": 3,
         "samples": 1500, "native_samples": 4,
         "parent": {"proc": 0, "src": APP, "line": line_of(APP_PY, '"papermill"'), "wait_s": 5.4}},
    ]

    lines = Tables(LINE_COLS)

    def sampled(proc, s, ln, t, tot=None, mem=None, gpu=False):
        cpu = round(t * rnd.uniform(0.3, 1.0), 6)
        py = round(cpu * 0.6, 6)
        nat = round(cpu * 0.3, 6)
        row = dict(proc=proc, src=s, line=ln, time_s=t, total_s=tot if tot is not None else t,
                   samples=round(t * 1000), samples_total=round((tot or t) * 1000),
                   cpu_s=cpu, wait_s=round(t - cpu, 6), gil_wait_s=round((t - cpu) * 0.1, 6),
                   python_s=py, native_s=nat, kernel_s=round(cpu - py - nat, 6))
        if mem is not None:
            row["mem_change"], row["peak_mem"] = mem
        if gpu:
            row["gpu_s"] = round(t * 0.4, 6)
            row["gpu_peak_mem"] = rnd.randrange(100, 4000) * 1_000_000
            row["driver_s"] = round(t * 0.2, 6)
            # every other GPU line: part of it launched for it by a native thread, part NCCL
            row["gpu_native_s"] = round(t * 0.3, 6) if ln % 2 else 0.0
            row["gpu_nccl_s"] = round(t * 0.1, 6) if ln % 3 == 0 else 0.0
        lines.add(**row)

    def traced(proc, s, ln, t, hits, mem=None):
        row = dict(proc=proc, src=s, line=ln, time_s=t, total_s=t, hits=hits,
                   avg_hit_s=(t / hits if hits and t is not None else None))
        if mem is not None:
            row["mem_change"], row["peak_mem"] = mem
        lines.add(**row)

    # app.py in the main process (sampled). Lines 27/28 tie on time on purpose.
    L = lambda needle, nth=0: line_of(APP_PY, needle, nth)  # noqa: E731
    sampled(0, APP, L("import json"), 0.012, mem=(3_400_000, 31_000_000))
    sampled(0, APP, L("for row in rows"), 0.9, mem=(0, 60_000_000))
    sampled(0, APP, L("total += parse(row)"), 1.2, tot=2.4, mem=(1_200_000, 61_000_000), gpu=True)
    sampled(0, APP, L("rows = load_rows(n)"), 0.25, tot=1.6, mem=(48_000_000, 110_000_000))
    sampled(0, APP, L("s = summarize(rows)"), 0.25, tot=3.6, mem=(-2_000_000, 108_000_000),
            gpu=True)
    sampled(0, APP, L("msg = f"), 0.04, mem=(250_000, 108_500_000))
    sampled(0, APP, L("print(msg"), 0.3, tot=0.7, gpu=True)
    sampled(0, APP, L('"worker.py"'), 0.001, tot=2.9)
    sampled(0, APP, L('"sort"'), 0.0, tot=0.3)
    sampled(0, APP, L('"papermill"'), 0.002, tot=5.4)
    sampled(0, APP, L("LONG = ["), 0.003)
    # A line with only a memory reading: time unknown (null), not zero.
    lines.add(proc=0, src=APP, line=L("return s + 0x1F"), time_s=None, total_s=None,
              samples=0, samples_total=0, mem_change=120_000, peak_mem=108_600_000)
    # pkg/util.py: from the main process (sampled) and the worker (traced): rows combine.
    U = lambda needle: line_of(util, needle)  # noqa: E731
    sampled(0, UTIL, U("for i in range"), 0.4, mem=(500_000, 70_000_000))
    sampled(0, UTIL, U("rows.append"), 0.8, mem=(40_000_000, 109_000_000))
    sampled(0, UTIL, U("value = int(row)"), 0.7)
    sampled(0, UTIL, U("return value"), 0.05)
    sampled(0, UTIL, U("return x * 2"), 0.01)
    traced(1, UTIL, U("for i in range"), 0.3, 3001, mem=(100_000, 20_000_000))
    traced(1, UTIL, U("rows.append"), 0.5, 3000, mem=(9_000_000, 29_000_000))
    for k in (3, 17, 29):
        sampled(0, UTIL, U(f"def filler_{k:02d}(") + 1, 0.02)
    # tools/util.py
    T = lambda needle: line_of(TOOLS_UTIL_PY, needle)  # noqa: E731
    sampled(0, TOOLS, T("h.update"), 0.6)
    sampled(0, TOOLS, T("return h.hexdigest"), 0.6)
    # worker.py, traced
    W = lambda needle: line_of(WORKER_PY, needle)  # noqa: E731
    traced(1, WORKER, W("rows = load_rows(n)"), 0.02, 1)
    traced(1, WORKER, W("for r in rows"), 0.7, 3001, mem=(0, 29_500_000))
    traced(1, WORKER, W("acc += len(r)"), 1.1, 3000)
    traced(1, WORKER, W("print(work"), None, 1)
    # notebook (kernel process, sampled): both revisions of Cell 2 have rows
    for ln, t in ((2, 0.5), (3, 0.05), (4, 0.3), (7, 0.4), (8, 0.2), (12, 0.9), (13, 0.9),
                  (14, 0.05), (15, 0.01)):
        sampled(3, NB, ln, t)

    functions = Tables(FUNC_COLS)

    def fn(proc, s, name, text, needle, end_needle, calls=None):
        d, e = line_of(text, needle), line_of(text, end_needle)
        rows = [r for r in lines.rows if r["proc"] == proc and r["src"] == s and d <= r["line"] <= e]
        t = sum(r["time_s"] or 0 for r in rows)
        tot = sum(r["total_s"] or 0 for r in rows)
        smp = None if calls is not None else sum(r.get("samples") or 0 for r in rows)
        functions.add(proc=proc, src=s, name=name, def_line=d, end_line=e, lines=e - d + 1,
                      time_s=round(t, 6), total_s=round(tot, 6), samples=smp, calls=calls)

    fn(0, APP, "summarize", APP_PY, "def summarize", "return total")
    fn(0, APP, "main", APP_PY, "def main", "return s + 0x1F")
    fn(0, APP, "<module>", APP_PY, '"""LineScope-BPF fixture', "    main()")
    fn(0, UTIL, "load_rows", util, "def load_rows", "return rows")
    fn(0, UTIL, "parse", util, "def parse", "return value")
    fn(0, UTIL, "tail_helper", util, "def tail_helper", "return x * 2")
    fn(1, UTIL, "load_rows", util, "def load_rows", "return rows", calls=1)
    fn(0, TOOLS, "checksum", TOOLS_UTIL_PY, "def checksum", "return h.hexdigest")
    fn(1, WORKER, "work", WORKER_PY, "def work", "return acc", calls=1)
    fn(1, WORKER, "<module>", WORKER_PY, '"""Child', "print(work", calls=1)
    fn(3, NB, "square", nb_text, "def square", "return x * x")
    # a function whose line count is unknown
    functions.add(proc=0, src=LIB, name="JSONDecoder.decode", def_line=332, end_line=None,
                  lines=None, time_s=0.0, total_s=0.02, samples=0, calls=None)

    # Edges: a caller line and the function it called (callee_line = that function's def line).
    edges = Tables(EDGE_COLS)
    Ud = lambda name: line_of(util, f"def {name}(")  # noqa: E731
    edges.add(proc=0, src=APP, line=L("total += parse(row)"), callee_src=UTIL,
              callee_line=Ud("parse"), samples=750)
    edges.add(proc=0, src=APP, line=L("rows = load_rows(n)"), callee_src=UTIL,
              callee_line=Ud("load_rows"), samples=1200)
    edges.add(proc=0, src=APP, line=L("s = summarize(rows)"), callee_src=APP,
              callee_line=L("def summarize"), samples=2100)
    edges.add(proc=0, src=APP, line=L("print(msg"), callee_src=TOOLS,
              callee_line=line_of(TOOLS_UTIL_PY, "def checksum"), samples=1200)
    edges.add(proc=0, src=APP, line=L("print(msg"), callee_src=UTIL,
              callee_line=Ud("tail_helper"), samples=10)
    edges.add(proc=0, src=APP, line=L("print(msg"), callee_src=UTIL,
              callee_line=Ud("parse"), samples=5)
    edges.add(proc=1, src=WORKER, line=W("rows = load_rows(n)"), callee_src=UTIL,
              callee_line=Ud("load_rows"), samples=800)

    # Symbol links: every call of a project function, each call its own span.
    def links_for(text, calls):
        out = []
        for ln, s in enumerate(text.split("\n"), 1):
            for name, (tsrc, tline) in calls.items():
                start = 0
                while True:
                    pos = s.find(name + "(", start)
                    if pos < 0:
                        break
                    before = s[pos - 1] if pos else " "
                    if (before.isalnum() or before in "_.") or s.lstrip().startswith("def "):
                        start = pos + 1
                        continue
                    col = len(s[:pos].encode("utf-16-le")) // 2
                    out.append([ln, col, col + len(name), tsrc, tline])
                    start = pos + 1
        out.sort()
        return out

    def defs_for(text):
        out = []
        for ln, s in enumerate(text.split("\n"), 1):
            st = s.lstrip()
            for kw in ("def ", "class "):
                if st.startswith(kw):
                    out.append([ln, st[len(kw):].split("(")[0].split(":")[0]])
        return out

    util_defs = {n: l for l, n in defs_for(util)}
    app_defs = {n: l for l, n in defs_for(APP_PY)}
    app_calls = {"load_rows": (UTIL, util_defs["load_rows"]), "parse": (UTIL, util_defs["parse"]),
                 "tail_helper": (UTIL, util_defs["tail_helper"]),
                 "checksum": (TOOLS, line_of(TOOLS_UTIL_PY, "def checksum")),
                 "summarize": (APP, app_defs["summarize"]), "main": (APP, app_defs["main"])}
    symbols = [
        {"links": links_for(APP_PY, app_calls), "defs": defs_for(APP_PY)},
        {"links": [], "defs": defs_for(util)},
        {"links": [], "defs": defs_for(TOOLS_UTIL_PY)},
        {"links": links_for(WORKER_PY, {"load_rows": (UTIL, util_defs["load_rows"]),
                                        "work": (WORKER, line_of(WORKER_PY, "def work"))}),
         "defs": defs_for(WORKER_PY)},
        {"links": links_for(nb_text, {"square": (NB, line_of(nb_text, "def square"))}),
         "defs": defs_for(nb_text)},
        {"links": [], "defs": []},
    ]

    children = [
        {"proc": 1, "parent_proc": 0, "src": APP, "line": L('"worker.py"'), "pid": 4300,
         "cmd": "python3 worker.py 3", "kind": "process", "status": "Success",
         "wait_s": 2.9, "duration_s": 2.9, "exit": "exit 0", "source": None},
        {"proc": 2, "parent_proc": 0, "src": APP, "line": L('"sort"'), "pid": 4310,
         "cmd": "sort data.txt", "kind": "process", "status": "Failed",
         "wait_s": 0.3, "duration_s": 0.3, "exit": "signal KILL", "source": None},
        {"proc": 3, "parent_proc": 0, "src": APP, "line": L('"papermill"'), "pid": 4320,
         "cmd": "papermill analysis.ipynb out.ipynb", "kind": "notebook", "status": "Failed",
         "wait_s": 5.4, "duration_s": None, "exit": "exit 1", "source": NB},
        # an inline notebook run (%run) inside the kernel: same process, a Reference entry
        {"proc": 3, "parent_proc": 3, "src": NB, "line": line_of(nb_text, "%run"), "pid": 4320,
         "cmd": "%run ./helpers.ipynb", "kind": "notebook", "status": "Reference",
         "wait_s": 0.05, "duration_s": 0.05, "exit": None, "source": None},
    ]

    def timeline(proc, n, t0, t1, base, grow_line, merged):
        t, rss, s, ln = [], [], [], []
        for i in range(n):
            tt = t0 + (t1 - t0) * i / (n - 1)
            t.append(round(tt, 4))
            if 40 <= i < 44:
                rss.append(None)          # a gap: readings missing
                s.append(None)
                ln.append(None)
                continue
            rss.append(int(base + (i * 1_000_000 if i > n // 3 else 0) + rnd.randrange(0, 200_000)))
            if i < 3 or i >= n - 2:       # start/end of profiling: no project line active
                s.append(None)
                ln.append(None)
            else:
                s.append(grow_line[0])
                ln.append(grow_line[1])
        peak = max(v for v in rss if v is not None)
        return {"proc": proc, "peak": peak, "merged": merged, "readings": n * (40 if merged else 1),
                "t": t, "rss": rss, "src": s, "line": ln}

    memory = {"interval_s": 0.01, "procs": [
        timeline(0, 120, 0.0, 12.4, 30_000_000, (UTIL, U("rows.append")), True),
        timeline(1, 60, 3.1, 6.0, 18_000_000, (WORKER, W("for r in rows")), False),
    ]}

    def gpu_timeline(index, t0, t1, causes):
        n = 200
        busy = [round(0.25 + 0.7 * ((k // 10) % 2), 3) for k in range(n)]
        act = t1 - t0
        busy_s = round(sum(busy) * act / n, 6)
        idle = act - busy_s
        return {"index": index, "uuid": "GPU-fixture", "start_s": t0, "end_s": t1,
                "busy_s": busy_s, "idle_s": round(idle, 6), "utilization": busy_s / act,
                "kernel_s": busy_s, "copy_s": 0.2, "set_s": 0.0, "nccl_s": 0.3, "spans": 5000,
                "gaps": 4999, "longest_gap_s": 0.05, "launching_threads": 2,
                "idle_explained_s": round(sum(c[3] for c in causes), 6),
                "streams": [{"proc": 0, "stream": 7, "busy_s": busy_s, "spans": 5000}],
                "busy_series": {"start_s": t0, "step_s": act / n, "values": busy,
                                "kernels": busy, "copies": [round(b / 5, 3) for b in busy],
                                "streams": [{"proc": 0, "stream": 7, "values": busy},
                                            {"proc": 1, "stream": 9, "values": [0.5] * n}]},
                "idle_lines": [{"proc": p, "src": s, "line": ln, "idle_s": t, "idle_share": t / idle,
                                "cpu_s": c, "blocked_s": b} for p, s, ln, t, c, b in causes],
                "longest_gaps": [{"start_s": t0 + 0.5 * k, "idle_s": 0.05 - 0.004 * k,
                                  "lines": [{"proc": p, "src": s, "line": ln, "idle_s": 0.04 - 0.004 * k}
                                            for p, s, ln, _, _, _ in causes[k % 2:k % 2 + 2]]}
                                 for k in range(4)]}

    gpu = {
        "devices": [
            {"index": 0, "name": "NVIDIA H200", "memory_total": 150_000_000_000,
             "driver": "580.65.06", "cuda": "13.0", "peak_mem": 3_900_000_000,
             "memory_note": None},
            {"index": 1, "name": "NVIDIA RTX A4000", "memory_total": None, "driver": None,
             "cuda": None, "peak_mem": None,
             "memory_note": "device memory is not reported by this driver model"},
        ],
        "notes": ["GPU time is sampled device work attributed to the launching line; it can "
                  "overlap driver time and is not part of elapsed wall time."],
        # --timeline: device 0 busy in bursts; its idle time on a line of each process
        "timeline": [gpu_timeline(0, 0.5, 10.5, [
            (0, APP, L("total += parse(row)"), 2.1, 2.0, 0.0),
            (0, APP, L("print(msg"), 0.9, 0.1, 0.8),
            (1, WORKER, W("for r in rows"), 0.4, 0.4, 0.0)])],
    }

    spark = spark_fixture(APP, WORKER, L, W)

    flame = flame_fixture(processes, [
        # (process, [(function, src, line) root first], samples, wait_s, gil_wait_s, runq_s)
        (0, [("<module>", APP, L("    main()")), ("main", APP, L("s = summarize(rows)")),
             ("summarize", APP, L("total += parse(row)")), ("parse", UTIL, U("value = int(row)"))],
         2000, 0.0, 0.3, 0.0),
        # parse below parse: a search for it counts these samples once
        (0, [("<module>", APP, L("    main()")), ("main", APP, L("s = summarize(rows)")),
             ("summarize", APP, L("total += parse(row)")), ("parse", UTIL, U("value = int(row)")),
             ("parse", UTIL, U("return value"))], 300, 0.0, 0.0, 0.0),
        (0, [("<module>", APP, L("    main()")), ("main", APP, L("s = summarize(rows)")),
             ("summarize", APP, L("for row in rows"))], 900, 0.0, 0.0, 0.05),
        (0, [("<module>", APP, L("    main()")), ("main", APP, L("rows = load_rows(n)")),
             ("load_rows", UTIL, U("rows.append"))], 1200, 0.4, 0.0, 0.0),
        (0, [("<module>", APP, L("    main()")), ("main", APP, L("print(msg")),
             ("checksum", TOOLS, T("h.update"))], 600, 0.0, 0.0, 0.0),
        (0, [("<module>", APP, L("    main()")), ("main", APP, L("print(msg")),
             ("tail_helper", UTIL, U("return x * 2")), ("parse", UTIL, U("return value"))],
         10, 0.0, 0.0, 0.0),
        (0, [("<module>", APP, L("    main()")), ("main", APP, L('"worker.py"'))],
         1, 2.9, 0.0, 0.0),
        (1, [("<module>", WORKER, W("print(work")), ("work", WORKER, W("acc += len(r)"))],
         1500, 0.0, 0.0, 0.0),
        (1, [("<module>", WORKER, W("print(work")), ("work", WORKER, W("rows = load_rows(n)")),
             ("load_rows", UTIL, U("rows.append"))], 1000, 0.0, 0.0, 0.0),
        (3, [("<module>", NB, 12), ("square", NB, line_of(nb_text, "return x * x"))], 900,
         0.0, 0.0, 0.0),
        (3, [("<module>", NB, 2)], 600, 0.2, 0.0, 0.0),
    ], {"<module>": 1, "main": L("def main"), "summarize": L("def summarize"),
        "parse": Ud("parse"), "load_rows": Ud("load_rows"), "tail_helper": Ud("tail_helper"),
        "checksum": line_of(TOOLS_UTIL_PY, "def checksum"), "work": W("def work"),
        "square": line_of(nb_text, "def square")})

    total_samples = sum(p["samples"] for p in processes)
    run = {
        "tool": "linescope-bpf 0.1.0", "status": "Success", "status_detail": None,
        "method": "Mixed collection", "collector": "bpf-sampling+usdt-tracing", "mode": "wall",
        "scope": {"kind": "command", "text": "python3 app.py 3"},
        "started_at": "2026-11-29T18:00:00Z", "elapsed_s": 12.5, "frequency_hz": 999,
        "samples": total_samples, "samples_per_s": round(9100 / 12.5, 1),
        "lost": {"total": 7, "ringbuf": 3, "read_errors": 1, "truncated_stacks": 2,
                 "unresolved": 1},
        "cost": {"bpf_time_s": 0.0125, "bpf_runs": 25000, "bpf_ns_per_run": 500.0,
                 "programs": [{"name": "handle_sample", "runs": 20000, "time_s": 0.01,
                               "ns_per_run": 500.0}],
                 "collector_cpu_s": 0.25, "collector_share": 0.02,
                 "collector_setup_cpu_s": 0.1},
        "processes": len(processes), "threads": sum(p["threads"] for p in processes),
        "capabilities": {"samples": True, "hits": True, "calls": True, "cpu_split": True,
                         "wait": True, "memory": True, "gpu": True, "spark": True},
        "notes": ["3 of 4 processes ran Python; sort was sampled as native code."],
    }
    doc = {"version": 1, "run": run, "processes": processes, "sources": sources,
           "lines": lines.to_json(), "functions": functions.to_json(), "edges": edges.to_json(),
           "symbols": symbols, "children": children, "memory": memory, "gpu": gpu,
           "flame": flame, "spark": spark}
    if plain:
        doc = plain_fixture(doc)
    return doc


PLAN_EVIL = "</script><img src=x onerror=window.__pwned=3>"


def spark_stage(sid, attempt, name, status, tasks, failed=0, wall=None, ex=None, cpu=None,
                gc=None, inp=0, out=0, sr=0, sw=0, spill=0, mspill=0, peak=0, p50=None,
                p95=None, pmax=None):
    return {"id": sid, "attempt": attempt, "name": name, "status": status, "tasks": tasks,
            "failed_tasks": failed, "wall_s": wall, "executor_s": ex, "cpu_s": cpu, "gc_s": gc,
            "input_bytes": inp, "output_bytes": out, "shuffle_read_bytes": sr,
            "shuffle_write_bytes": sw, "spill_bytes": spill, "memory_spill_bytes": mspill,
            "peak_mem": peak, "task_p50_s": p50, "task_p95_s": p95, "task_max_s": pmax}


def spark_step(label, detail, frm, rows, time_s, peak=None, from_input=False, pipeline=None,
               pipeline_time_s=None):
    return {"label": label, "detail": detail, "from": frm, "rows": rows,
            "rows_from_input": from_input, "time_s": time_s, "peak_mem": peak,
            "pipeline": pipeline, "pipeline_time_s": pipeline_time_s}


def spark_action(name, app, proc, src, line, match, **kw):
    # "stage_details" lists the action's stages, skipped ones too; "stages" counts those that ran
    a = {"name": name, "app": app, "proc": proc, "src": src, "line": line, "match": match,
         "call_site": None, "execution": None, "description": None, "status": "succeeded",
         "error": None, "jobs": 1, "job_ids": [0], "skipped_stages": 0, "tasks": 1,
         "failed_tasks": 0, "start_s": 0.0, "wall_s": None, "driver_s": None,
         "driver_wait_s": None, "executor_s": None, "executor_cpu_s": None, "max_op_s": None,
         "peak_mem": None, "spill": None, "steps": [], "stage_details": [],
         "plans": {"physical": None, "final": None}, "how": []}
    a.update(kw)
    a["stages"] = sum(1 for st in a["stage_details"] if st["status"] != "skipped")
    return a


def spark_fixture(APP, WORKER, L, W):
    """Two applications (one named by a hostile log), actions matched by call site, by time and
    not at all, a failed and a running one; steps in WholeStageCodegen pipelines, rows carried
    from the input, stages with a skipped one and failed tasks, and plans with markup."""
    how = ["Wall time: the SQL execution's start and end events in the event log.",
           "Driver line: samples of the trigger line inside the action's window.",
           "Executor time: the sum of the task run times of the stages that ran inside the window; "
           "it overlaps wall time and is never added to driver time."]
    apps = [
        {"name": "FixtureJob", "id": "app-20261129180000-0001", "spark_version": "3.5.3",
         "start_s": -1.5, "end_s": 11.8, "status": "succeeded",
         "log": "/tmp/spark-events/app-20261129180000-0001", "codec": "plain"},
        {"name": "<script>alert('XSS')</script>", "id": "local-1764439200000",
         "spark_version": "3.4.1", "start_s": 0.5, "end_s": None, "status": "running",
         "log": "/tmp/spark-events/local-1764439200000.lz4.inprogress", "codec": "lz4"},
    ]
    collect = spark_action(
        "collect", 0, 0, APP, L("s = summarize(rows)"), "call site",
        call_site="collect at /home/u/proj/app.py:" + str(L("s = summarize(rows)")),
        execution=3, description="collect at app.py", jobs=2, job_ids=[4, 5], skipped_stages=1,
        tasks=12, failed_tasks=1, start_s=1.2, wall_s=2.1, driver_s=2.0,
        driver_wait_s=1.9, executor_s=5.3, executor_cpu_s=4.1, max_op_s=1.1,
        peak_mem=512_000_000, spill=64_000_000,
        steps=[
            spark_step("Read data", "FileScan parquet [a,b]", [], 1_000_000, 0.8),
            spark_step("Keep matching rows", "Filter (a > 3)", [1], 250_000, None, pipeline=1,
                       pipeline_time_s=0.35),
            spark_step("Calculate columns", "Project [a, b * 2 AS c]", [2], 250_000, None,
                       from_input=True, pipeline=1, pipeline_time_s=0.35),
            spark_step("Group and summarize", "HashAggregate(keys=[b])", [3], 12, 1.1,
                       peak=512_000_000, pipeline=2, pipeline_time_s=1.3),
            spark_step("Move data between workers", "Exchange hashpartitioning(b, 200)", [4],
                       12, 0.05),
        ],
        stage_details=[
            spark_stage(6, 0, "collect at app.py:55", "succeeded", 8, wall=0.9, ex=3.0, cpu=2.5,
                        gc=0.1, inp=120_000_000, sw=4_500_000, peak=512_000_000, p50=0.35,
                        p95=0.6, pmax=0.61),
            spark_stage(7, 0, "collect at app.py:55", "skipped", 8),
            spark_stage(8, 1, "collect at app.py:55 " + PLAN_EVIL, "succeeded", 4, failed=1,
                        wall=1.0, ex=2.3, cpu=1.6, gc=0.05, out=2_000, sr=4_500_000,
                        spill=64_000_000, mspill=180_000_000, peak=96_000_000, p50=0.5,
                        p95=0.9, pmax=0.95),
        ],
        plans={"physical": "== Physical Plan ==\nAdaptiveSparkPlan isFinalPlan=false\n"
                           "+- HashAggregate(keys=[b])\n   +- Filter (a > 3)\n"
                           "      +- FileScan parquet [a,b] " + PLAN_EVIL + "\n",
               "final": "== Physical Plan ==\nAdaptiveSparkPlan isFinalPlan=true\n"
                        "+- *(2) HashAggregate(keys=[b])\n   +- AQEShuffleRead coalesced\n"
                        "      +- *(1) Filter (a > 3) <!-- " + PLAN_EVIL + "\n"},
        how=how)
    count = spark_action(
        "count", 0, 0, APP, L("print(msg"), "time", execution=4, jobs=1, job_ids=[6],
        skipped_stages=0, tasks=9, start_s=4.0, wall_s=0.4, driver_s=0.3, driver_wait_s=0.28,
        executor_s=None, executor_cpu_s=None, max_op_s=0.12, peak_mem=None, spill=0,
        steps=[spark_step("Read data", "Range (0, 1000, step=1, splits=8)", [], 1000, 0.12)],
        stage_details=[
            spark_stage(9, 0, "count at NativeMethodAccessorImpl.java:0", "succeeded", 8,
                        wall=0.2, ex=0.5, cpu=0.4, gc=0.0, sw=480, p50=0.06, p95=0.07,
                        pmax=0.07),
            spark_stage(10, 0, "count at NativeMethodAccessorImpl.java:0", "succeeded", 1,
                        wall=0.05, ex=0.01, cpu=0.01, gc=0.0, sr=480, p50=0.01, p95=0.01,
                        pmax=0.01)],
        plans={"physical": "== Physical Plan ==\n*(1) Range (0, 1000, step=1, splits=8)\n",
               "final": None},
        how=how + ["Matched by time: the log names no call site in this script; the action's "
                   "window overlaps the samples of this line."])
    reduce_ = spark_action(
        "reduce", 1, None, None, None, None, call_site="reduce at <stdin>:1", jobs=1,
        job_ids=[0], tasks=2, start_s=2.5, wall_s=0.9, executor_s=1.4,
        executor_cpu_s=1.2, max_op_s=None, peak_mem=0, spill=0,
        stage_details=[spark_stage(0, 0, "reduce at <stdin>:1", "succeeded", 2, wall=0.8, ex=1.4,
                            cpu=1.2, gc=0.02, p50=0.7, p95=0.7, pmax=0.7)],
        plans=None, how=["No driver line matched: the log's call site is not a profiled file "
                         "and no sampled line overlaps the window."])
    save = spark_action(
        "save", 0, 0, APP, L("rows = load_rows(n)"), "call site",
        call_site="save at /home/u/proj/app.py:" + str(L("rows = load_rows(n)")),
        execution=5, description="save to /tmp/out.parquet", status="failed",
        error="org.apache.spark.SparkException: Job aborted due to stage failure: Task 1 in "
              "stage 11.0 failed 4 times " + PLAN_EVIL,
        jobs=1, job_ids=[7], tasks=4, failed_tasks=4, start_s=6.2, wall_s=3.4,
        driver_s=3.3, driver_wait_s=3.25, executor_s=2.2, executor_cpu_s=0.9, max_op_s=2.0,
        peak_mem=256_000_000, spill=0,
        steps=[spark_step("Read data", "FileScan csv [x]", [], 40_000, 0.3),
               spark_step("Write result", "InsertIntoHadoopFsRelationCommand", [1], None, 2.0)],
        stage_details=[spark_stage(11, 0, "save at app.py:54", "failed", 4, failed=4, wall=3.0,
                            ex=2.2, cpu=0.9, gc=0.3, inp=4_000_000, peak=256_000_000,
                            p50=0.5, p95=0.6, pmax=0.62)],
        plans={"physical": "== Physical Plan ==\nExecute InsertIntoHadoopFsRelationCommand\n",
               "final": None}, how=how)
    worker = spark_action(
        "take", 0, 1, WORKER, W("acc += len(r)"), "call site",
        call_site="take at /home/u/proj/worker.py:" + str(W("acc += len(r)")), status="running",
        jobs=1, job_ids=[8], tasks=1, start_s=5.5, wall_s=None, driver_s=0.2,
        executor_s=None, peak_mem=None, spill=None,
        stage_details=[spark_stage(12, 0, "take at worker.py", "running", 1)], how=how)
    actions = [collect, count, reduce_, save, worker]
    return {"applications": apps, "actions": actions,
            "notes": ["Executor metrics can overlap driver wall time; they are not added together.",
                      "1 event log was refused: /tmp/spark-events/broken.zstd (truncated frame)."]}


FLAME_COLS = ["parent", "func", "proc", "line", "samples", "cpu_s", "wait_s", "gil_wait_s",
              "runq_s"]
CPU_PER_SAMPLE = 0.001001001


def flame_fixture(processes, paths, def_lines, wall=True):
    """The "flame" object (docs/report-data.md): paths merged into one tree per process, the
    samples a process has beyond its paths under its [native] node."""
    funcs = {"name": [], "src": [], "def_line": []}
    fidx, nodes, kids = {}, {c: [] for c in FLAME_COLS}, {}

    def node(parent, func, proc, line):
        key = (parent, func, proc, line)
        if key not in kids:
            kids[key] = len(nodes["parent"])
            for c, v in zip(FLAME_COLS, (parent, func, proc, line, 0, 0.0, 0.0, 0.0, 0.0)):
                nodes[c].append(v)
        return kids[key]

    def add(i, samples, wait, gil, runq):
        nodes["samples"][i] += samples
        nodes["cpu_s"][i] = round(nodes["cpu_s"][i] + samples * CPU_PER_SAMPLE, 9)
        for c, v in (("wait_s", wait), ("gil_wait_s", gil), ("runq_s", runq)):
            nodes[c][i] = round(nodes[c][i] + v, 9)

    for p in range(len(processes)):
        mine = [x for x in paths if x[0] == p]
        root = node(-1, -1, p, 0)
        rest = processes[p]["samples"] - sum(x[2] for x in mine)
        if rest:
            add(node(root, -2, p, 0), rest, 0.0, 0.0, 0.0)
        for _, frames, samples, wait, gil, runq in mine:
            cur = root
            for name, src, line in frames:
                if (name, src) not in fidx:
                    fidx[(name, src)] = len(funcs["name"])
                    funcs["name"].append(name)
                    funcs["src"].append(src)
                    funcs["def_line"].append(def_lines[name])
                cur = node(cur, fidx[(name, src)], p, line)
            add(cur, samples, wait, gil, runq)
    if not wall:
        for c in ("wait_s", "gil_wait_s", "runq_s"):
            nodes[c] = None
    return {"max_nodes": 200000, "folded": 0, "funcs": funcs, "nodes": nodes}


def plain_fixture(doc):
    """One sampled process in CPU mode: only the columns a plain bpf-sampling run has."""
    keep = {0}
    lines = doc["lines"]
    idx = [i for i, p in enumerate(lines["proc"]) if p in keep]
    cols = {}
    for c in LINE_COLS:
        if c in ("time_s", "total_s", "samples", "samples_total", "proc", "src", "line"):
            cols[c] = [lines[c][i] for i in idx]
        else:
            cols[c] = None
    doc["lines"] = cols
    f = doc["functions"]
    fidx = [i for i, p in enumerate(f["proc"]) if p in keep]
    doc["functions"] = {c: (None if f[c] is None or c == "calls" else [f[c][i] for i in fidx])
                        for c in FUNC_COLS}
    e = doc["edges"]
    eidx = [i for i, p in enumerate(e["proc"]) if p in keep]
    doc["edges"] = {c: [e[c][i] for i in eidx] for c in EDGE_COLS}
    doc["processes"] = doc["processes"][:1]
    doc["children"] = []
    doc["memory"] = doc["gpu"] = doc["spark"] = None
    fl = doc["flame"]["nodes"]
    fidx = [i for i, p in enumerate(fl["proc"]) if p in keep]
    doc["flame"]["nodes"] = {c: (None if c in ("wait_s", "gil_wait_s", "runq_s") else
                                 [fl[c][i] for i in fidx]) for c in FLAME_COLS}
    r = doc["run"]
    r.update(method="Sampling", collector="bpf-sampling", mode="cpu", processes=1,
             threads=doc["processes"][0]["threads"], samples=doc["processes"][0]["samples"])
    r["capabilities"] = {"samples": True, "hits": False, "calls": False, "cpu_split": False,
                         "wait": False, "memory": False, "gpu": False, "spark": False}
    r["notes"] = []
    r["lost"] = {"total": 0, "ringbuf": 0, "read_errors": 0, "truncated_stacks": 0,
                 "unresolved": 0}
    return doc


WORDS = ["rows", "value", "total", "item", "count", "index", "buf", "key", "cache", "data",
         "result", "node", "frame", "entry", "chunk", "offset", "size", "limit", "name", "path"]


def synth_source(rnd, k, nlines):
    """Plausible Python text of exactly nlines lines, and the names/lines of its functions."""
    out, funcs = [f'"""Synthetic module {k}."""', "import os", ""], []
    while len(out) < nlines - 1:
        name = f"{rnd.choice(WORDS)}_{rnd.choice(WORDS)}_{len(funcs)}"
        d = len(out) + 1
        out.append(f"def {name}({rnd.choice(WORDS)}, {rnd.choice(WORDS)}=None):")
        body = rnd.randrange(4, 30)
        for _ in range(body):
            a, b, c = rnd.choice(WORDS), rnd.choice(WORDS), rnd.choice(WORDS)
            form = rnd.randrange(6)
            if form == 0:
                out.append(f"    for {a} in range(len({b})):")
            elif form == 1:
                out.append(f'    {a} = f"{{{b}}}-{{{c}!r}}"  # note about {c}')
            elif form == 2:
                out.append(f"    if {a} > {rnd.randrange(1000)}:")
            elif form == 3:
                out.append(f"        {a} += {b}[{rnd.randrange(64)}] * 0x{rnd.randrange(4096):x}")
            elif form == 4:
                out.append(f"    {a} = os.path.join({b}, '{c}')")
            else:
                out.append(f"    {a}.append({b}.get('{c}', {rnd.random():.3f}))")
        out.append(f"    return {rnd.choice(WORDS)}")
        out.append("")
        funcs.append((name, d, len(out) - 1))
    out = out[:nlines]
    while len(out) < nlines:
        out.append("")
    return "\n".join(out) + "\n", funcs


def big_flame(rnd, allf, nstacks):
    """nstacks distinct stacks, a tree of fan-out 10 below <module> (each new frame a random line of
    a random function), split between two processes: about 1.1 nodes per stack."""
    frames, paths = {}, []
    for i in range(nstacks):
        digits = f"{i:0{len(str(max(1, nstacks - 1)))}d}"
        proc = 1 if i % 5 == 0 else 0
        path = [("<module>", 0, 1)]
        for k in range(1, len(digits) + 1):
            key = (proc, digits[:k])
            if key not in frames:
                name, src, d, e = rnd.choice(allf)
                frames[key] = (name, src, rnd.randrange(d + 1, e + 1))
            path.append(frames[key])
        paths.append((proc, path, 1 + int(rnd.expovariate(0.5)), 0.0, 0.0, 0.0))
    defs = {name: d for name, _, d, _ in allf}
    defs["<module>"] = 1
    procs = [{"samples": sum(x[2] for x in paths if x[0] == p)} for p in (0, 1)]
    return flame_fixture(procs, paths, defs, wall=False), procs


def big_fixture(nsources, nlines_total, big_file, nstacks):
    rnd = random.Random(7)
    allf = []
    per = max(10, (nlines_total - big_file) // max(1, nsources - 1))
    sources, symbols = [], []
    lines = {c: [] for c in LINE_COLS}
    functions = {c: [] for c in FUNC_COLS}
    for k in range(nsources):
        n = big_file if k == 0 else per
        text, funcs = synth_source(rnd, k, n)
        d = f"/srv/app/pkg{k % 50:02d}"
        sources.append({"path": f"{d}/mod_{k:04d}.py", "name": f"mod_{k:04d}.py", "kind": "python",
                        "text": text, "unavailable": None, "nlines": n, "cells": None})
        symbols.append({"links": [], "defs": [[d0, nm] for nm, d0, _ in funcs]})
        allf.extend((nm, k, d0, e) for nm, d0, e in funcs)
        for ln, s in enumerate(text.split("\n")[:n], 1):
            if not s.strip() or s.startswith('"""'):
                continue
            proc = 0 if rnd.random() < 0.8 else 1
            t = round(rnd.expovariate(2000.0), 6)
            smp = max(0, round(t * 999))
            lines["proc"].append(proc)
            lines["src"].append(k)
            lines["line"].append(ln)
            lines["time_s"].append(t)
            lines["total_s"].append(round(t * rnd.uniform(1, 3), 6))
            lines["samples"].append(smp)
            lines["samples_total"].append(smp * 2)
        for nm, d0, e in funcs:
            functions["proc"].append(0)
            functions["src"].append(k)
            functions["name"].append(nm)
            functions["def_line"].append(d0)
            functions["end_line"].append(e)
            functions["lines"].append(e - d0 + 1)
            functions["time_s"].append(round(rnd.expovariate(100.0), 6))
            functions["total_s"].append(round(rnd.expovariate(50.0), 6))
            functions["samples"].append(rnd.randrange(0, 500))
    for c in LINE_COLS:
        if not lines[c]:
            lines[c] = None
    functions["calls"] = None
    nrows = len(lines["proc"])
    flame, fprocs = big_flame(rnd, allf, nstacks)
    processes = [
        {"pid": 100, "ppid": 1, "nspid": None, "comm": "python3", "argv": "python3 -m app",
         "start_s": 0.0, "end_s": 60.0, "exit": "exit 0", "python": "3.11.2 (static, usdt)",
         "note": None, "threads": 8, "samples": 50000, "native_samples": 100, "parent": None},
        {"pid": 101, "ppid": 100, "nspid": None, "comm": "python3", "argv": "python3 -m app.worker",
         "start_s": 1.0, "end_s": 59.0, "exit": "exit 0", "python": "3.11.2 (static, usdt)",
         "note": None, "threads": 2, "samples": 12000, "native_samples": 0, "parent": None},
    ]
    for p, f in zip(processes, fprocs):
        p["samples"] = f["samples"]
    run = {"tool": "linescope-bpf 0.1.0", "status": "Success", "status_detail": None,
           "method": "Sampling", "collector": "bpf-sampling", "mode": "cpu",
           "scope": {"kind": "cgroup", "text": "system.slice/app.service"},
           "started_at": "2026-11-29T18:00:00Z", "elapsed_s": 60.0, "frequency_hz": 999,
           "samples": sum(p["samples"] for p in processes), "samples_per_s": 833.3,
           "lost": {"total": 0, "ringbuf": 0, "read_errors": 0, "truncated_stacks": 0,
                    "unresolved": 0},
           "processes": 2, "threads": 10,
           "capabilities": {"samples": True, "hits": False, "calls": False, "cpu_split": False,
                            "wait": False, "memory": False, "gpu": False, "spark": False},
           "notes": [f"synthetic: {nsources} sources, {nlines_total} lines, {nrows} line rows, "
                     f"{nstacks} stacks"]}
    return {"version": 1, "run": run, "processes": processes, "sources": sources,
            "lines": lines, "functions": functions,
            "edges": {c: [] for c in EDGE_COLS}, "symbols": symbols, "children": [],
            "memory": None, "gpu": None, "flame": flame, "spark": None}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--output", default="-")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--sources", type=int, default=2000)
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--big-file", type=int, default=20_000,
                    help="lines of the first (largest) source in --big mode")
    ap.add_argument("--stacks", type=int, default=100_000,
                    help="distinct stacks of the flame graph in --big mode")
    a = ap.parse_args()
    if a.big:
        doc = big_fixture(a.sources, a.lines, a.big_file, a.stacks)
    else:
        doc = feature_fixture(plain=a.plain)
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    if a.output == "-":
        sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape"))
    else:
        # surrogateescape: the fixture's deliberately invalid bytes (\udcXX) go out raw, as a
        # profile of a file with broken encoding would reach ls_html__write()
        with open(a.output, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(text)


if __name__ == "__main__":
    main()
