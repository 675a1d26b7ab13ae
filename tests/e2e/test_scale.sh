#!/bin/bash
# SPDX-License-Identifier: MIT
# A busy service at scale: 200 child processes x 5 threads, each thread working a little and
# sleeping 10 ms, at -F 99 in wall mode (about 100,000 context switches a second). Nothing may be
# lost, and every child's sleep line carries the sleep time that child measured itself.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

prof="$WORK/scale.lsprof"
"$LS" -q -F 99 --profile "$prof" -o "$WORK/scale.html" -- "$DEB_PY" "$FIX/sleepers.py" \
	"$WORK/truth" 200 5 100 || fail "exit $?"
for k in ringbuf_drops sample_drops offcpu_pending_full agg_orphans scratch_busy; do
	v=$(sqlite3 "$prof" "SELECT value FROM stats WHERE key = '$k'")
	[ "$v" = 0 ] && pass "$k: 0" || fail "$k: $v"
done
j=$(json_of "$prof")
lost=$(pyq "$j" 'd["run"]["lost"]["ringbuf"] + d["run"]["lost"]["other_records"]')
[ "$lost" = 0 ] && pass "no sample or record dropped" || fail "$lost samples or records dropped"
# samples without lines (a process's first ticks, before its interpreter is known: the children
# exec an image the parent's discovery has published, so almost none) are few and all counted
"$PYQ" - "$j" <<'PYEOF' && pass "samples without lines are few and counted" ||
import json, sys
d = json.load(open(sys.argv[1]))
u = sum(x["unresolved"] for p in d["processes"] for x in p["execs"])
r = d["run"]
print("%d of %d samples without lines, %d counted as lost" % (u, r["taken"], r["lost"]["unresolved"]))
sys.exit(0 if u == r["lost"]["unresolved"] and u <= 0.01 * r["taken"] else 1)
PYEOF
	fail "samples without lines: too many, or not counted"
[ "$(sqlite3 "$prof" "SELECT value FROM stats WHERE key = 'agg_added'")" -gt 10000 ] &&
	pass "samples and intervals added up in the kernel" || fail "nothing added up in the kernel"
"$PYQ" - "$j" "$WORK/truth" "$(sqlite3 "$prof" "SELECT value FROM meta WHERE key = 'period_ns'")" <<'PYEOF' &&
import json, math, sys
d = json.load(open(sys.argv[1]))
period = int(sys.argv[3]) / 1e9
truth = {int(l.split()[0]): float(l.split()[1]) for l in open(sys.argv[2])}
got, samples = {}, {}
for l in d["lines"]:
    if l["path"].endswith("sleepers.py") and l["line"] == 19:  # SLEEP
        got[l["pid"]] = got.get(l["pid"], 0) + l["time_s"]
        samples[l["pid"]] = samples.get(l["pid"], 0) + l["samples"]
bad = []
for pid, t in truth.items():
    # on-CPU samples of the line are period-weighted counts; intervals of a 10 ms sleep are kept
    # with probability d/period: 3 sigma of both, plus 2% for the time Python spends around it
    sigma = period * math.sqrt(samples.get(pid, 0) + t / 0.01 * 0.05)
    if abs(got.get(pid, 0) - t) > 3 * sigma + 0.02 * t:
        bad.append((pid, round(got.get(pid, 0), 3), round(t, 3)))
print("%d children, %d on the sleep line; profile %.1f s, measured %.1f s; off: %s" % (
    len(truth), len(got), sum(got.values()), sum(truth.values()), bad[:5]))
sys.exit(0 if len(truth) == 200 and not bad else 1)
PYEOF
	pass "every child's sleep line matches its own measurement" ||
	fail "some children are missing or wrong on their sleep line"
# our own cost is recorded: the sampler ran at least once per sample taken, the switch handler
# once per context switch, and the collector used some CPU
"$PYQ" - "$j" <<'PYEOF' && pass "run.cost recorded" || fail "run.cost missing or implausible"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["run"]["cost"]
runs = {p["name"]: p["runs"] for p in c["programs"]}
print("BPF %.3f s in %d runs; collector %.3f s CPU (%.1f%% of one core), %.3f s setting up" % (
    c["bpf_time_s"], c["bpf_runs"], c["collector_cpu_s"], 100 * c["collector_share"],
    c["collector_setup_cpu_s"]))
sys.exit(0 if runs["handle_sample"] >= d["run"]["taken"] and runs["handle_switch"] > 100000
         and c["bpf_time_s"] > 0 and c["collector_cpu_s"] > 0 else 1)
PYEOF
finish
