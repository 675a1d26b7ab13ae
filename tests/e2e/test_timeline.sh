#!/bin/bash
# SPDX-License-Identifier: MIT
# --timeline and report --format chrome-trace, on a real wall-mode run of tests/fixtures/phases.py
# (CPU, sleep, CPU on the main thread while another thread burns CPU), against what the workload
# measured itself in the same run (time.monotonic() around each phase):
# - every on-CPU sample the profile counts is on the timeline (the ticks BPF sends for the
#   samples it adds up, and the whole records), none refused or lost;
# - the trace is Trace Event JSON whose slices nest per thread, with the phases in their order and
#   as long as they were (within a sampling period at each end), the sleep as a [blocked] slice
#   under phase_b, the worker on its own thread, process start and exit, and RSS counters;
# - the real speedscope app (which imports Trace Event JSON as Perfetto does) opens it: a profile
#   per thread whose total spans its slices, and the phases among the frames it shows
#   (tests/report/speedscope.js);
# - a profile recorded without --timeline gives a trace of its processes and one warning.
source "$(dirname "$0")/lib.sh"

need_python "$DEB_PY"
[ -d "$ROOT/tests/report/node_modules/speedscope" ] ||
	{ echo "FAIL: the speedscope npm package is missing (run ./setup.sh)"; exit 1; }
prof="$WORK/tl.lsprof"
LS_TRUTH="$WORK/truth.json" "$LS" -q --timeline --memory --profile "$prof" -o "$WORK/tl.html" \
	-- "$DEB_PY" "$FIX/phases.py" || { fail "linescope-bpf exited $?"; finish; }
"$LS" report "$prof" --format chrome-trace -o "$WORK/trace.json" 2>"$WORK/err" ||
	{ fail "report --format chrome-trace: $(head -1 "$WORK/err")"; finish; }
[ ! -s "$WORK/err" ] && pass "chrome-trace of a --timeline profile: no warning" ||
	fail "chrome-trace warned: $(head -1 "$WORK/err")"

"$PYQ" - "$WORK/trace.json" "$WORK/truth.json" "$prof" <<'PYEOF' | check_lines
import collections, json, sqlite3, sys
d = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2]))
db = sqlite3.connect(sys.argv[3])
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
stat = dict(db.execute("SELECT key, value FROM stats"))
hz = int(dict(db.execute("SELECT key, value FROM meta"))["frequency_hz"])
period = 1e6 / hz  # microseconds

# the timeline holds every on-CPU sample of the profile
(tl_cpu,) = db.execute("SELECT count(*) FROM timeline WHERE kind = 0").fetchone()
(samples,) = db.execute("SELECT sum(count) FROM samples WHERE kind = 0").fetchone()
say(tl_cpu == samples and tl_cpu > 0, "timeline: %d on-CPU ticks, the profile's %d samples" % (tl_cpu, samples))
say(stat.get("timeline_drops") == 0 and stat.get("timeline_lost") == 0 and stat.get("agg_added", 0) > 0,
    "timeline: none refused (%s) or lost (%s); %s samples added up in the kernel, so ticks came from BPF" % (
        stat.get("timeline_drops"), stat.get("timeline_lost"), stat.get("agg_added")))
(short,) = db.execute("SELECT count(*) FROM timeline WHERE kind != 0 AND dur_ns <= ?", (10**9 // hz,)).fetchone()
say(short == 0, "timeline: no off-CPU interval of a period or less (%d)" % short)

ev = d["traceEvents"]
od = d["otherData"]
say(od["timeline"] is True and od["ticks"] > 0 and od["ticks_refused"] == 0,
    "otherData: timeline %s, %d ticks, %d refused" % (od["timeline"], od["ticks"], od["ticks_refused"]))
ok_ph = all(e["ph"] in "XMiC" and isinstance(e["pid"], int) and isinstance(e["tid"], int) for e in ev)
say(ok_ph, "%d events, every one X, M, i or C with integer pid and tid" % len(ev))
xs = [e for e in ev if e["ph"] == "X"]
say(all(e["dur"] > 0 and e["ts"] >= 0 for e in xs), "%d slices, each with ts >= 0 and dur > 0" % len(xs))

# slices of a thread nest: two either do not overlap or one holds the other (1 us of rounding)
bad = 0
by_thread = collections.defaultdict(list)
for e in xs:
    by_thread[(e["pid"], e["tid"])].append(e)
for k, l in by_thread.items():
    l.sort(key=lambda e: (e["ts"], -e["dur"]))
    stack = []
    for e in l:
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + 0.001:
            stack.pop()
        if stack and e["ts"] + e["dur"] > stack[-1]["ts"] + stack[-1]["dur"] + 0.002:
            bad += 1
        stack.append(e)
say(bad == 0, "slices nest on each of %d threads (%d overlaps)" % (len(by_thread), bad))

pid = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name" and "phases.py" in e["args"]["name"]]
say(len(pid) == 1, "one process named after phases.py")
pid = pid[0]["pid"] if pid else -1
names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}
# 3.11 names its threads for itself only (the kernel's comm stays the process's): the other one
worker_tid = [t for (p, t) in by_thread if p == pid and t != pid]
say(len(worker_tid) == 1 and pid in names and worker_tid[0] in names,
    "threads %s named %s" % (sorted(names), sorted(names.values())))

def extent(tid, fn):
    l = [e for e in by_thread[(pid, tid)] if e["name"].startswith(fn + " (")]
    return (min(e["ts"] for e in l), max(e["ts"] + e["dur"] for e in l)) if l else None

# each phase as long as it was, in its order; a slice may start a period early or end a period
# late (its first and last ticks stand for the period before them), plus 2 ms of call overhead
tol = 2 * period + 2000
got = {n: extent(pid, n) for n in ("phase_a", "phase_b", "phase_c")}
got["worker"] = extent(worker_tid[0], "burn") if worker_tid else None
for n, g in got.items():
    t0, t1 = truth[n]
    want = (t1 - t0) * 1e6
    say(g is not None and abs((g[1] - g[0]) - want) <= tol,
        "%s: %s us on the timeline, measured %.0f us (+-%.0f)" % (n, g and round(g[1] - g[0]), want, tol))
if all(got.values()):
    for a, b in (("phase_a", "phase_b"), ("phase_b", "phase_c")):
        gap, want = got[b][0] - got[a][0], (truth[b][0] - truth[a][0]) * 1e6
        say(abs(gap - want) <= tol, "%s starts %.0f us after %s, measured %.0f us" % (b, gap, a, want))
blocked = [e for e in by_thread[(pid, pid)] if e["name"] == "[blocked]" and got["phase_b"]
           and e["ts"] >= got["phase_b"][0] - 1 and e["ts"] + e["dur"] <= got["phase_b"][1] + 1]
want = (truth["phase_b"][1] - truth["phase_b"][0]) * 1e6
say(blocked and abs(sum(e["dur"] for e in blocked) - want) <= tol,
    "the sleep: %.0f us of [blocked] under phase_b, measured %.0f us" % (sum(e["dur"] for e in blocked), want))

inst = [e for e in ev if e["ph"] == "i" and e["pid"] == pid]
say([e["name"] for e in inst] == ["process start", "process exit"] and inst[1]["args"]["status"] == 0
    and inst[0]["ts"] <= got["phase_a"][0] and inst[1]["ts"] >= got["phase_c"][1] - 1,
    "process start and exit (status 0) around its slices")
rss = [e for e in ev if e["ph"] == "C" and e["pid"] == pid and e["name"] == "RSS"]
say(rss and all(e["args"]["MiB"] >= 0 for e in rss) and max(e["args"]["MiB"] for e in rss) > 1,
    "%d RSS counter readings (--memory), up to %.1f MiB" % (len(rss), max([e["args"]["MiB"] for e in rss] or [0])))
PYEOF

if node "$ROOT/tests/report/speedscope.js" "$WORK/trace.json" "[blocked]" >"$WORK/speedscope.log" 2>&1 &&
	grep -q "^speedscope: 2 profiles" "$WORK/speedscope.log"; then
	pass "speedscope app opens the trace: $(tail -1 "$WORK/speedscope.log")"
else
	fail "speedscope app: $(grep -v '^  ok' "$WORK/speedscope.log" | head -5)"
fi

# without --timeline: the processes, and a warning that says why there are no slices
p2="$WORK/plain.lsprof"
"$LS" -q --mode cpu --profile "$p2" -o "$WORK/plain.html" -- "$DEB_PY" -c 'sum(range(3000000))' ||
	fail "linescope-bpf (no --timeline) exited $?"
"$LS" report "$p2" --format chrome-trace -o "$WORK/plain.json" 2>"$WORK/err"
rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$WORK/err")" = 1 ] && grep -q -- "--timeline" "$WORK/err" &&
	pass "no timeline: exit 0, '$(cat "$WORK/err")'" || fail "no timeline: exit $rc, $(head -2 "$WORK/err")"
"$PYQ" - "$WORK/plain.json" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
ok = d["otherData"]["timeline"] is False and not [e for e in ev if e["ph"] == "X"]
print(("ok " if ok else "FAIL ") + "no timeline: no slices, otherData.timeline false")
ok = any(e["ph"] == "M" and e["name"] == "process_name" for e in ev)
print(("ok " if ok else "FAIL ") + "no timeline: the process is named")
PYEOF
finish
