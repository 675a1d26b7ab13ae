# SPDX-License-Identifier: MIT
"""Checks trace_loader output for a run of tests/fixtures/trace/loops.py (see test_trace.sh).

    trace_check.py usdt|native OUTPUT FIXTURE

Expected counts come from the LS_N_* variables the fixture ran with and from the `# @name`
markers in the fixture. Exits 1 with one line per failed expectation.
"""
import collections
import os
import re
import sys

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
    return cond


def markers(path):
    out = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"# @([a-z-]+)\s*$", line)
            if m:
                out[m.group(1)] = n
    return out


def env_int(name):
    return int(os.environ.get(name, "0"))


def parse(path):
    rows = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            rows[parts[0]].append(parts[1:])
    return rows


def check_usdt(rows, fixture, m):
    fx = os.path.realpath(fixture)
    n_main, n_calls, n_gen = env_int("LS_N_MAIN"), env_int("LS_N_CALLS"), env_int("LS_N_GEN")
    n_fork, n_child = env_int("LS_N_FORK"), env_int("LS_N_CHILD")
    threads = sorted(int(x) for x in os.environ.get("LS_N_THREADS", "").split(",") if x)
    # line rows of the fixture: (pid, tid, line) -> (hits, own, total)
    lines, calls = {}, {}
    for pid, tid, file, qual, line, hits, own, total in rows["line"]:
        check(int(total) + 1000 >= int(own), "total < own at %s:%s" % (file, line))
        if os.path.realpath(file) == fx:
            lines[(int(pid), int(tid), int(line))] = (int(hits), int(own), int(total))
        for lib in ("threading.py", "subprocess.py", "statistics.py", "linescope_usdt"):
            check(lib not in file, "library code traced: %s:%s" % (file, line))
    for pid, tid, file, qual, first, n, total in rows["call" + "s"]:
        if os.path.realpath(file) == fx:
            calls[(int(pid), int(tid), qual)] = (int(n), int(total))

    def hits(pid, tid, marker):
        return lines.get((pid, tid, m[marker]), (0, 0, 0))[0]

    # processes: the main one runs calls(); children are told apart by their loop counts
    pids = {k[0] for k in lines}
    mains = {k[0] for k in lines if k[2] == m["calls-body"]}
    if not check(len(mains) == 1, "expected one main process, got %s" % sorted(mains)):
        return
    main = mains.pop()
    body = collections.defaultdict(dict)  # pid -> tid -> loop-body hits
    for (pid, tid, line), (h, _, _) in lines.items():
        if line == m["loop-body"]:
            body[pid][tid] = h
    # main thread (which also runs loop(3) in each fail()), and each thread on its own tid
    # with exactly its count
    n_exc = env_int("LS_N_EXC")
    want = n_main + 3 * n_exc
    check(body[main].get(main) == want,
          "main thread loop-body %s, want %d" % (body[main].get(main), want))
    check(hits(main, main, "loop-for") == want + 1 + n_exc,
          "main thread loop-for %d, want %d" % (hits(main, main, "loop-for"), want + 1 + n_exc))
    check(calls.get((main, main, "loop"), (0,))[0] == 1 + n_exc, "main thread: loop() calls")
    others = sorted(h for t, h in body[main].items() if t != main)
    check(others == threads, "thread loop-body counts %s, want %s" % (others, threads))
    for t, h in body[main].items():
        if t == main:
            continue
        check(hits(main, t, "loop-for") == h + 1, "tid %d loop-for != loop-body + 1" % t)
        check(calls.get((main, t, "loop"), (0,))[0] == 1, "tid %d: loop() calls != 1" % t)
    # calls, generators
    check(hits(main, main, "calls-body") == n_calls, "calls-body %d, want %d"
          % (hits(main, main, "calls-body"), n_calls))
    check(hits(main, main, "square-body") == n_calls, "square-body hits")
    check(calls.get((main, main, "square"), (0,))[0] == n_calls,
          "square() calls %s, want %d" % (calls.get((main, main, "square")), n_calls))
    check(hits(main, main, "gen-yield") == n_gen + 4 * bool(n_exc), "gen-yield %d, want %d"
          % (hits(main, main, "gen-yield"), n_gen + 4 * bool(n_exc)))
    check(hits(main, main, "drain-for") == n_gen + 1, "drain-for hits")
    # gen() also runs once from catch(), left suspended and closed when dropped
    want_gen = 1 + bool(n_exc)
    check(calls.get((main, main, "gen"), (0,))[0] == want_gen,
          "gen() calls (starts, not resumes) %s, want %d"
          % (calls.get((main, main, "gen")), want_gen))
    # exceptions through traced frames: counted, and the shadow stack unwinds with them
    check(hits(main, main, "caught") == n_exc, "caught %d, want %d"
          % (hits(main, main, "caught"), n_exc))
    check(calls.get((main, main, "fail"), (0,))[0] == n_exc, "fail() calls")
    state_out = os.environ.get("LS_STATE_OUT")
    if state_out:
        st = eval(open(state_out).read(), {})
        check(st.get("depth") == 2, "shadow stack depth at the end of main() %s, want 2 "
              "(<module>, main)" % st.get("depth"))
    # times: the callee's time is inside the calling line's total, not its own
    cb = lines.get((main, main, m["calls-body"]))
    sq = lines.get((main, main, m["square-body"]))
    if cb and sq:
        check(cb[2] >= cb[1] + sq[1], "calls-body total does not include square()")
    check(hits(main, main, "loop-body") and lines[(main, main, m["loop-body"])][1] > 0,
          "loop-body own time is zero")
    sleep_ms = env_int("LS_SLEEP_MS")
    if sleep_ms:
        own = lines.get((main, main, m["sleep"]), (0, 0, 0))[1]
        check(sleep_ms * 1e6 <= own < sleep_ms * 1e6 + 2e9,
              "sleep line own %.3f ms, want >= %d ms" % (own / 1e6, sleep_ms))
    if env_int("LS_N_LIB"):
        h, own, total = lines.get((main, main, m["lib"]), (0, 0, 0))
        check(h == 1 and own > 0.9 * total,
              "library time not folded into the calling line: hits %d own %d total %d"
              % (h, own, total))
    # children: an os.fork() child (os._exit) and a subprocess, each counted alone
    for n, what in ((n_fork, "fork child"), (n_child, "subprocess")):
        if not n:
            continue
        match = [p for p in pids if p != main and body[p].get(p) == n]
        check(len(match) == 1, "%s: want one process with loop-body %d, got %s"
              % (what, n, {p: body[p] for p in pids if p != main}))
    check(len(pids) == 1 + bool(n_fork) + bool(n_child), "processes %s" % sorted(pids))
    # every traced process said so, and every thread's last batch arrived
    on = {int(r[0]) for r in rows["state"] if r[1] == "1"}
    check(pids <= on, "processes without a state ON message: %s" % sorted(pids - on))
    for pid, tid, batches, ended in rows["thread"]:
        check(ended == "1", "pid %s tid %s: no final batch" % (pid, tid))


def check_native(rows, fixture, m):
    fx = os.path.realpath(fixture)
    n_main, n_calls, n_gen = env_int("LS_N_MAIN"), env_int("LS_N_CALLS"), env_int("LS_N_GEN")
    threads = sorted(int(x) for x in os.environ.get("LS_N_THREADS", "").split(",") if x)
    lines, entries = {}, {}
    for pid, tid, file, func, line, kind, hits, own in rows["native"]:
        if os.path.realpath(file) != fx:
            continue
        key = (int(pid), int(tid), int(line))
        if kind == "line":
            lines[key] = (int(hits), int(own))
        else:
            entries[(int(pid), int(tid), func, int(line))] = int(hits)
    pids = {k[0] for k in lines}
    if not check(len(pids) == 1, "native: expected one process, got %s" % sorted(pids)):
        return
    main = pids.pop()
    n_exc = env_int("LS_N_EXC")
    body = {k[1]: v[0] for k, v in lines.items() if k[2] == m["loop-body"]}
    want = n_main + 3 * n_exc
    check(body.get(main) == want, "native main loop-body %s, want %d" % (body.get(main), want))
    check(lines.get((main, main, m["loop-for"]), (0,))[0] == want + 1 + n_exc,
          "native main loop-for")
    others = sorted(h for t, h in body.items() if t != main)
    check(others == threads, "native thread loop-body %s, want %s" % (others, threads))
    for t, h in body.items():
        if t != main:
            check(lines.get((main, t, m["loop-for"]), (0,))[0] == h + 1,
                  "native loop-for, tid %d" % t)
    check(lines.get((main, main, m["square-body"]), (0,))[0] == n_calls, "native square-body")
    check(entries.get((main, main, "square", m["square-def"])) == n_calls,
          "native square() entries %s, want %d"
          % (entries.get((main, main, "square", m["square-def"])), n_calls))
    # function__entry also fires at each resumption, with the line it resumes at: drain()
    # resumes gen() n_gen times; catch()'s generator 3 times and once more to close it
    check(entries.get((main, main, "gen", m["gen-def"])) == 1 + bool(n_exc), "native gen() starts")
    check(entries.get((main, main, "gen", m["gen-yield"])) == n_gen + 4 * bool(n_exc),
          "native gen() resumes %s" % entries.get((main, main, "gen", m["gen-yield"])))
    check(lines.get((main, main, m["caught"]), (0,))[0] == n_exc, "native caught")
    check(entries.get((main, main, "fail", m["fail-def"])) == n_exc, "native fail() entries")
    check(lines.get((main, main, m["loop-body"]), (0, 0))[1] > 0, "native loop-body own time")


def main():
    mode, out, fixture = sys.argv[1:4]
    rows = parse(out)
    m = markers(fixture)
    stats = {r[0]: int(r[1]) for r in rows["stat"]}
    for s in ("bad_size", "read_fail", "ringbuf_drops", "bad_msgs", "seq_gaps", "native_full"):
        check(stats.get(s) == 0, "stat %s = %s" % (s, stats.get(s)))
    if mode == "usdt":
        check_usdt(rows, fixture, m)
    else:
        check(stats.get("native_events", 0) > 0, "no native events")
        check_native(rows, fixture, m)
    for f in FAILS:
        print("FAIL: %s" % f)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
