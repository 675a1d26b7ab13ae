#!/bin/bash
# SPDX-License-Identifier: MIT
# Why the GPU was idle, through the real CLI on the fake CUDA driver: tests/gpu/gpu_idle.py runs
# a training loop whose device is busy with a kernel (a copy and an NCCL kernel overlapping it on
# other streams) while the loop waits for it, then idle while the loop preprocesses on the CPU and
# while it sleeps for data; a bystander thread that never launches sleeps all along. Recorded with
# --gpu --timeline, the report's GPU timeline must give the device's busy time (the union of its
# work, not the sum), each kind's and stream's, its idle time within what the loop measured of its
# own launches, and the idle time's lines: the preprocessing line on a CPU and the data line
# blocked, each within what the loop measured of itself, the bystander's line none.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
fake="$ROOT/.output/tests/gpu/fake"
[ -e "$fake/libcupti.so.13" ] || { echo "FAIL: fake CUDA not built (make test builds it)"; exit 1; }
export FAKECUDA_LIB="$fake/libcupti.so.13"
export LD_LIBRARY_PATH="$fake"

prof="$WORK/idle.lsprof"
"$LS" -q --gpu --timeline --profile "$prof" -o "$WORK/idle.html" -- "$DEB_PY" \
	"$ROOT/tests/gpu/gpu_idle.py" "$WORK/truth.json" || fail "exit $?"
j=$(json_of "$prof") || { fail "report"; finish; }
out=$("$PYQ" - "$j" "$WORK/truth.json" "$WORK/idle.html" <<'PYEOF'

import json, math, re, sys
d = json.load(open(sys.argv[1]))
T = json.load(open(sys.argv[2]))
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
period = 1 / d["run"]["frequency_hz"]
n = T["steps"]
tl = (d.get("gpu") or {}).get("timeline") or []
say(len(tl) == 1, "one device on the GPU timeline (%d)" % len(tl))
if not tl:
    sys.exit(0)
g = tl[0]
def near(got, want, tol, what):
    say(abs(got - want) <= tol, "%s %.4f s (want %.4f +- %.4f)" % (what, got, want, tol))
# the device's work as the fake driver stamped it: exact, and a union where it overlaps
near(g["busy_s"], n * T["kernel_ns"] / 1e9, 1e-4 * n, "busy (kernels with a copy and NCCL inside)")
near(g["kernel_s"], n * T["kernel_ns"] / 1e9, 1e-4 * n, "kernel time")
near(g["copy_s"], n * T["copy_ns"] / 1e9, 1e-4 * n, "copy time")
near(g["nccl_s"], n * T["nccl_ns"] / 1e9, 1e-4 * n, "NCCL (communication) time")
st = {s["stream"]: s for s in g["streams"] if s["pid"] == T["pid"]}
say(sorted(st) == [3, 5, 7] and all(s["spans"] == n for s in st.values()),
    "streams 3 (kernels), 5 (NCCL), 7 (copies), %d spans each: %s" % (n, sorted(st)))
if sorted(st) == [3, 5, 7]:
    near(st[3]["busy_s"], n * T["kernel_ns"] / 1e9, 1e-4 * n, "stream 3 busy")
    near(st[5]["busy_s"], n * T["nccl_ns"] / 1e9, 1e-4 * n, "stream 5 busy")
# idle inside the window: each gap's ends are known to within the launch calls that made them
lo, hi = T["idle_lo_ns"] / 1e9 - 1e-4 * n, T["idle_hi_ns"] / 1e9 + 1e-4 * n
say(lo <= g["idle_s"] <= hi, "idle %.4f s within the loop's own [%.4f, %.4f]" % (g["idle_s"], lo, hi))
say(g["gaps"] == n - 1, "%d gaps between %d steps" % (g["gaps"], n))
act = g["end_s"] - g["start_s"]
near(g["utilization"], g["busy_s"] / act, 1e-6, "utilisation = busy / active window")
ser = g["busy_series"]["values"]
say(all(0 <= v <= 1 for v in ser), "busy series within [0, 1] (%d values)" % len(ser))
bs = g["busy_series"]
near(sum(bs["kernels"]) * bs["step_s"], g["kernel_s"], 0.002 * act, "kernel series' area")
near(sum(bs["copies"]) * bs["step_s"], g["copy_s"] + g["set_s"], 0.002 * act, "copy series' area")
lanes = {l["stream"]: l for l in bs["streams"]}
say(sorted(lanes) == [3, 5, 7], "a lane per stream: %s" % sorted(lanes))
if 5 in lanes:
    near(sum(lanes[5]["values"]) * bs["step_s"], n * T["nccl_ns"] / 1e9, 0.002 * act, "stream 5's lane area")
near(sum(ser) * g["busy_series"]["step_s"], g["busy_s"], 0.002 * act, "busy series' area")
say(g["launching_threads"] == 1, "one launching thread (%d): the bystander is not one" % g["launching_threads"])
lines = {l["line"]: l for l in g["idle_lines"] if l["pid"] == T["pid"] and l["path"].endswith("gpu_idle.py")}
L = T["lines"]
by = lines.get(L["bystander"])
say(not by, "the bystander's line has no idle time (%s)" % (by and by["idle_s"]))
# on-CPU ticks weigh the period in force on their CPU (tests/e2e/test_ticks.sh checks that they
# add up to thread_time): each phase's two ends are off by up to 1.25 periods, and n periods sum
# with a spread of 0.15 period each. The line's on-CPU part against the loop's own thread_time:
# cpu-clock also counts what thread_time leaves out (steal, interrupts), at most the phase's wall
# time beyond its CPU time; its waits for a CPU at most that wall time beyond.
pre, load = lines.get(L["pre"]), lines.get(L["load"])
pre_cpu, pre_wall = T["pre_cpu_ns"] / 1e9, T["pre_ns"] / 1e9
tol = 2.5 * (n - 1) * period + 3 * 0.15 * math.sqrt(pre_cpu / period) * period
say(pre is not None, "the preprocessing line has idle time")
if pre:
    say(pre_cpu - tol <= pre["cpu_s"] <= pre_wall + tol,
        "preprocessing line on a CPU %.4f s in [%.4f, %.4f] (its thread_time %.4f s, wall %.4f s)"
        % (pre["cpu_s"], pre_cpu - tol, pre_wall + tol, pre_cpu, pre_wall))
    say(pre["idle_s"] - pre["cpu_s"] <= pre_wall - pre_cpu + tol,
        "preprocessing line waiting for a CPU %.4f s, at most %.4f s" % (pre["idle_s"] - pre["cpu_s"], pre_wall - pre_cpu + tol))
    # blocked only for the GIL, which the bystander takes when it wakes
    say(pre["cpu_s"] > pre["blocked_s"], "preprocessing ran on a CPU more than it was blocked (%.4f s)" % pre["blocked_s"])
say(load is not None, "the data line has idle time")
if load:
    near(load["idle_s"], T["load_ns"] / 1e9, 2.5 * (n - 1) * period, "data line's idle time")
    say(load["blocked_s"] >= 0.9 * load["idle_s"], "the data line was blocked (%.4f of %.4f s)" % (load["blocked_s"], load["idle_s"]))
say(g["idle_lines"] and g["idle_lines"][0]["line"] in (L["pre"], L["load"]), "the most idle line is one of the two")
tot = sum(l["idle_s"] for l in g["idle_lines"])
# explained is a union: never more than idle; the lines' ticks count in full, as in Time, so
# neighbours that jitter makes overlap may add up to a little more (one thread here)
say(g["idle_explained_s"] <= g["idle_s"] + 1e-6, "explained %.4f s within the idle %.4f s" % (g["idle_explained_s"], g["idle_s"]))
say(tot <= g["idle_s"] + tol, "the lines' %.4f s within the idle %.4f s + %.4f s" % (tot, g["idle_s"], tol))
say(g["idle_explained_s"] >= (T["pre_ns"] + T["load_ns"]) / 1e9 - tol - 2.5 * (n - 1) * period,
    "explained %.4f s covers the two phases" % g["idle_explained_s"])
lg = g["longest_gaps"]
say(len(lg) == min(10, n - 1) and abs(lg[0]["idle_s"] - g["longest_gap_s"]) < 1e-9 and
    all(a["idle_s"] >= b["idle_s"] for a, b in zip(lg, lg[1:])),
    "the %d longest gaps, longest first (%.4f s)" % (len(lg), lg[0]["idle_s"] if lg else 0))
say(all(x["lines"] and x["lines"][0]["line"] in (L["pre"], L["load"]) for x in lg),
    "each long gap mostly on the preprocessing or the data line")
# the HTML report carries the same timeline, by model index
h = open(sys.argv[3]).read()
r = json.loads(re.search(r'id="ls-data">(.*?)</script>', h, re.S).group(1))
ht = r["gpu"]["timeline"]
say(len(ht) == 1 and abs(ht[0]["idle_s"] - g["idle_s"]) < 1e-9 and
    len(ht[0]["idle_lines"]) == len(g["idle_lines"]) and all("src" in l for l in ht[0]["idle_lines"]),
    "the HTML report's data has the same timeline")
PYEOF
) || fail "checker: exit $?"
check_lines <<<"$out"

# the text report: the device's busy share and the line most idle time went to
"$LS" report "$prof" --format text -o "$WORK/idle.txt" || fail "text: exit $?"
pre=$("$PYQ" -c 'import json,sys; print(json.load(open(sys.argv[1]))["lines"]["pre"])' "$WORK/truth.json")
grep -q "^# GPU 0: busy .* idle .* in 11 gaps" "$WORK/idle.txt" && pass "text: GPU 0's busy share and gaps" ||
	fail "text: no GPU 0 line: $(grep -m1 '^# GPU' "$WORK/idle.txt")"
grep -A5 "idle while its launching threads" "$WORK/idle.txt" | grep -q "gpu_idle.py:$pre " &&
	pass "text: the preprocessing line among the idle lines" || fail "text: no line $pre among the idle lines"

# without --timeline: no timeline, and the report says why
"$LS" -q --gpu --profile "$WORK/nt.lsprof" -o "$WORK/nt.html" -- "$DEB_PY" \
	"$ROOT/tests/gpu/gpu_idle.py" "$WORK/truth2.json" || fail "exit $?"
out=$("$PYQ" - "$WORK/nt.html" <<'PYEOF'

import json, re, sys
r = json.loads(re.search(r'id="ls-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
g = r["gpu"]
print(("ok" if g["timeline"] is None else "FAIL") + " no timeline without --timeline")
print(("ok" if any("--timeline" in n for n in g["notes"]) else "FAIL") + " a note says so: %s" % g["notes"])
PYEOF
) || fail "checker: exit $?"
check_lines <<<"$out"
finish
