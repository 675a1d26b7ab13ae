#!/bin/bash
# SPDX-License-Identifier: MIT
# --sampler remote: our thread reads the running targets from its own CPU instead of a timer
# interrupt on theirs. What it must still get right, against what the workloads measured in the
# same run: one line's 3x the work of another (cpu and wall modes), four threads' CPU times in
# proportion 1:2:3:4. And what it must not do: open the timer sampler (its program never runs),
# or claim a Python/native/system split it cannot see (every on-CPU sample's mode is unknown).
source "$(dirname "$0")/lib.sh"
py=$DEB_PY
need_python "$py"

for mode in cpu wall; do
	prof="$WORK/remote-$mode.lsprof"
	LS_TRUTH="$WORK/truth.json" "$LS" -q --sampler remote --mode "$mode" --profile "$prof" \
		-o "$WORK/remote.html" -- "$py" "$FIX/ratio3.py" 180 >/dev/null ||
		{ fail "$mode: linescope-bpf exited $?"; continue; }
	j=$(json_of "$prof") || { fail "$mode: report"; continue; }
	check_lines < <(ratio_vs_truth "$mode" "$j" "$WORK/truth.json" ratio3.py)
	c=$(pyq "$j" 'd["run"]["collector"]')
	[ "$c" = bpf-remote-sampling ] && pass "$mode: collector $c" || fail "$mode: collector '$c'"
	st=$(sqlite3 "$prof" "select group_concat(key || '=' || value, ' ') from stats where key in
		('remote_passes', 'bpf_runs:sample_remote', 'bpf_runs:handle_sample', 'taken',
		 'bpf_samples', 'sample_drops')")
	"$PYQ" - "$mode" "$st" <<'PYEOF' | check_lines
import sys
mode, st = sys.argv[1], dict(kv.split("=") for kv in sys.argv[2].split())
st = {k: int(v) for k, v in st.items()}
ok = lambda c: "ok" if c else "FAIL"
runs = st.get("bpf_runs:handle_sample", 0)
print("%s %s: the timer sampler never ran (%d runs)" % (ok(runs == 0), mode, runs))
print("%s %s: %d remote passes, the iterator ran %d times" % (
    ok(st["remote_passes"] > 0 and st["bpf_runs:sample_remote"] >= st["remote_passes"]), mode,
    st["remote_passes"], st["bpf_runs:sample_remote"]))
print("%s %s: %d taken = %d samples + %d dropped" % (
    ok(st["taken"] == st["bpf_samples"] + st["sample_drops"] and st["bpf_samples"] > 0), mode,
    st["taken"], st["bpf_samples"], st["sample_drops"]))
PYEOF
	modes=$(sqlite3 "$prof" "select group_concat(distinct mode) from samples where kind = 0")
	[ "$modes" = 3 ] && pass "$mode: every on-CPU sample's mode is unknown" ||
		fail "$mode: on-CPU sample modes '$modes', want only 3 (unknown)"
	# and the report says so: no split rather than a split of zeros
	split=$(pyq "$j" 'sorted({str(l[k]) for l in d["lines"] for k in ("python_time_s", "native_time_s", "kernel_time_s")})')
	[ "$split" = "['None']" ] && pass "$mode: the lines' Python/native/kernel split is null" ||
		fail "$mode: the lines' split is $split, want null"
done

# four threads under one GIL: a thread waiting for it is off the CPU, so it is not sampled
prof="$WORK/remote-threads.lsprof"
LS_TRUTH="$WORK/truth4.json" "$LS" -q --sampler remote --mode cpu --profile "$prof" \
	-o "$WORK/remote.html" -- "$py" "$FIX/threads4.py" 5000000 >/dev/null ||
	fail "threads: linescope-bpf exited $?"
j=$(json_of "$prof") || fail "threads: report"
"$PYQ" - "$j" "$WORK/truth4.json" "$FIX/threads4.py" <<'PYEOF' | check_lines
import json, re, sys
d = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
lines = {no: "worker" + m.group(1) for no, text in enumerate(open(sys.argv[3]), 1)
         for m in [re.search(r"# W(\d)$", text.rstrip())] if m}
got = {n: sum(l["total_time_s"] for l in d["lines"] if l["path"].endswith("threads4.py")
              and l["line"] == ln) for ln, n in lines.items()}
hz = d["run"]["frequency_hz"]
for n in sorted(truth):
    r = got[n] / truth[n] if truth[n] else 0
    # 3 standard errors of the thread's sample count (a draw of about its CPU time times the
    # rate), and 5% beside for the passes' timing
    tol = 0.05 + 3 / max(truth[n] * hz, 1) ** 0.5
    print("%s threads: %s profiled %.3fs, used %.3fs (x%.3f, within %.3f)" % (
        "ok" if abs(r - 1) <= tol else "FAIL", n, got[n], truth[n], r, tol))
PYEOF

# busy processes forked at once, more of them than CPUs: 4 (an iterator each) and 12 (more than
# loader_remote.c's 8: one over every task). Our thread's wake-ups preempt one of them each
# time; that one must still be counted (bpf/remote.bpf.c remote_switch)
for n in 4 12; do
	prof="$WORK/remote-busy$n.lsprof"
	rm -rf "$WORK/busy" && mkdir "$WORK/busy"
	LS_TRUTH_DIR="$WORK/busy" "$LS" -q --sampler remote --mode cpu --profile "$prof" \
		-o "$WORK/remote.html" -- "$py" "$FIX/many_busy.py" "$n" $((48 / n)) >/dev/null ||
		fail "$n busy: linescope-bpf exited $?"
	j=$(json_of "$prof") || fail "$n busy: report"
	"$PYQ" - "$j" "$WORK/busy" "$FIX/many_busy.py" "$n" <<'PYEOF' | check_lines
import glob, json, sys
d = json.load(open(sys.argv[1]))
used = sum(json.load(open(f))["work_s"] for f in glob.glob(sys.argv[2] + "/*.json"))
call = [no for no, text in enumerate(open(sys.argv[3]), 1) if "# BUSY" in text][0]
got = sum(l["total_time_s"] for l in d["lines"] if l["path"].endswith("many_busy.py")
          and l["line"] == call)
procs = len(glob.glob(sys.argv[2] + "/*.json"))
hz = d["run"]["frequency_hz"]
tol = 0.05 + 3 / max(used * hz, 1) ** 0.5
r = got / used if used else 0
print("%s %s busy processes (%d measured): profiled %.3fs, used %.3fs (x%.3f, within %.3f)" % (
    "ok" if abs(r - 1) <= tol and procs == int(sys.argv[4]) else "FAIL", sys.argv[4], procs,
    got, used, r, tol))
PYEOF
done

# with --memory, each remote sample carries its process's RSS (the program that reads it must load)
prof="$WORK/remote-mem.lsprof"
if "$LS" -q --sampler remote --memory --profile "$prof" -o "$WORK/remote.html" -- \
	"$py" "$FIX/ratio3.py" 60 >/dev/null; then
	# readings from samples (event 0; growth events are rss_stat's, mem.bpf.c)
	n=$(sqlite3 "$prof" "select count(*) from rss where event = 0")
	s=$(sqlite3 "$prof" "select value from stats where key = 'bpf_samples'")
	[ "${n:-0}" -gt 0 ] && [ "${s:-0}" -gt 0 ] && pass "--memory: $n RSS readings from $s samples" ||
		fail "--memory: $n RSS readings from samples, $s samples"
else
	fail "--memory: linescope-bpf exited $?"
fi

# a sampler it does not know is a usage error, before anything runs
out=$("$LS" --sampler bogus -- true 2>&1)
rc=$?
[ $rc -ne 0 ] && [[ "$out" == *"invalid sampler 'bogus'"* ]] &&
	pass "--sampler bogus: exit $rc, '$(echo "$out" | head -1)'" ||
	fail "--sampler bogus: exit $rc, '$out'"
finish
