#!/bin/bash
# SPDX-License-Identifier: MIT
# Faults: a profile write that fails mid-flush (injected: LINESCOPE_FAULT_STORE=T:W), the
# profiler killed with SIGKILL in the middle of a flush, a disk that fills up, and a thousand
# threads exiting at once. Each run is compared with what the workload measured itself.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

# samples_add_up JSON WHAT: kept + lost == taken, and nothing lost to the ring buffer
samples_add_up() {
	"$PYQ" - "$1" "$2" <<'PYEOF' | check_lines
import json, sys
r = json.load(open(sys.argv[1]))["run"]
ok = r["samples"] + r["lost"]["total"] == r["taken"] and r["lost"]["ringbuf"] == 0
print("%s %s: %d kept + %d lost = %d taken" % ("ok" if ok else "FAIL", sys.argv[2], r["samples"],
      r["lost"]["total"], r["taken"]))
PYEOF
}

# 1. write 10 of the first flush's transaction fails: the next flush writes all of it again
prof="$WORK/retry.lsprof"
LINESCOPE_FAULT_STORE=2:10 LS_TRUTH="$WORK/truth.json" "$LS" --mode cpu --profile "$prof" \
	-o "$WORK/retry.html" -- "$DEB_PY" "$FIX/ratio3.py" 180 >/dev/null 2>"$WORK/retry.err" ||
	fail "injected write failure: exit $?"
grep -q "write 10 of transaction 2 failed (injected)" "$WORK/retry.err" &&
	grep -q "will retry" "$WORK/retry.err" && pass "injected write failure reported, and retried" ||
	fail "injected write failure not seen: $(cat "$WORK/retry.err")"
j=$(json_of "$prof") && {
	check_lines < <(ratio_vs_truth "after a failed flush" "$j" "$WORK/truth.json" ratio3.py)
	samples_add_up "$j" "after a failed flush"
	t=$(pyq "$j" 'd["processes"][0]["threads"]')
	[ "$t" = 1 ] && pass "after a failed flush: its thread is stored" || fail "threads: $t"
}

# 2. SIGKILL in the middle of the second flush: the profile reads as of the first one, and the
# target runs on, neither stopped nor slowed
"$DEB_PY" -c 'import time
print("ready", flush=True)
t = time.time()
while time.time() - t < 30: pass' >"$WORK/target.log" &
target=$!
wait_log "$WORK/target.log" ready || fail "target did not start"
LINESCOPE_FAULT_STORE=3:5:kill "$LS" -q -p $target --profile "$WORK/killed.lsprof" -o "$WORK/k.html"
rc=$?
[ $rc -eq 137 ] && pass "profiler killed during a flush (exit $rc)" || fail "killed profiler: exit $rc"
state=$(awk '{print $3}' /proc/$target/stat 2>/dev/null)
[ "$state" = R ] || [ "$state" = S ] && pass "target still running (state $state)" ||
	fail "target after the profiler was killed: state '${state:-gone}'"
if j=$(json_of "$WORK/killed.lsprof"); then
	n=$(pyq "$j" 'd["run"]["samples"]')
	st=$("$LS" report "$WORK/killed.lsprof" --format text | sed -n 's/^# Status: //p')
	[ "$n" -gt 100 ] && pass "killed mid-flush: $n samples of the first flush readable ($st)" ||
		fail "killed mid-flush: $n samples"
else
	fail "killed mid-flush: profile unreadable"
fi
# while a recording runs, its profile reads as Running; the kill above left a Failed one
"$LS" -q -p $target -d 30 --profile "$WORK/running.lsprof" -o "$WORK/running.html" &
rec=$!
st=
for _ in $(seq 300); do # until its first flush is readable
	st=$("$LS" report "$WORK/running.lsprof" --format json 2>/dev/null |
		"$PYQ" -c 'import json, sys; r = json.load(sys.stdin)["run"]; print(r["status"] if r["samples"] else "")' 2>/dev/null)
	[ -n "$st" ] && break
	sleep 0.1
done
[ "$st" = Running ] && pass "a profile being written reads as Running" || fail "while recording: status '$st'"
kill -TERM $rec
wait $rec
st=$(pyq "$(json_of "$WORK/running.lsprof")" 'd["run"]["status"]')
[ "$st" = Success ] && pass "stopped with SIGTERM: $st" || fail "after SIGTERM: status '$st'"
kill $target
wait $target 2>/dev/null

# 3. the disk fills up: a clear error, a non-zero exit, and a profile readable as of the last
# flush that fit
small="$WORK/small"
mkdir "$small" && mount -t tmpfs -o size=300k tmpfs "$small" || fail "cannot mount a small tmpfs"
# a 30000-line source (500 KB) cannot be stored there
{
	for i in $(seq 30000); do echo "x$i = $i"; done
	printf 'import time\nt = time.thread_time()\nwhile time.thread_time() - t < 2: pass\n'
} >"$WORK/big.py"
"$LS" -q --mode cpu --profile "$small/full.lsprof" -o "$WORK/full.html" -- "$DEB_PY" "$WORK/big.py" \
	2>"$WORK/full.err"
rc=$?
last=$(tail -1 "$WORK/full.err")
[ $rc -eq 1 ] && [[ "$last" == *"disk is full"* ]] && pass "disk full: exit 1, $last" ||
	fail "disk full: exit $rc, $last"
"$LS" report "$small/full.lsprof" --format text >"$WORK/full.txt" 2>&1 &&
	pass "disk full: the profile is readable ($(sed -n 's/^# Status: //p' "$WORK/full.txt"))" ||
	fail "disk full: $(cat "$WORK/full.txt")"
umount "$small"

# 4. a thousand threads that exit at the same moment: every one is in the profile, and their
# CPU is what they measured
prof="$WORK/threads.lsprof"
LS_TRUTH="$WORK/mt.json" "$LS" -q --mode cpu --profile "$prof" -o "$WORK/mt.html" -- \
	"$DEB_PY" "$FIX/many_threads.py" 1000 || fail "1000 threads: exit $?"
j=$(json_of "$prof") && {
	samples_add_up "$j" "1000 threads"
	"$PYQ" - "$j" "$WORK/mt.json" <<'PYEOF' | check_lines
import json, math, sys
d = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2]))
p = d["processes"][0]
work = sum(l["self_time_s"] for l in d["lines"] if l["path"].endswith("many_threads.py")
           and l["function"] == "work" and l["line"] in (20, 21))
n = max(work * (d["run"]["frequency_hz"] or 999), 1)
tol = 3 / math.sqrt(n) + 0.05
ok = p["threads"] == truth["threads"] + 1
print("%s 1000 threads: %d threads stored" % ("ok" if ok else "FAIL", p["threads"]))
ok = abs(work / truth["cpu_s"] - 1) <= tol
print("%s 1000 threads: work() %.3fs, measured %.3fs (within %.1f%%)" % (
    "ok" if ok else "FAIL", work, truth["cpu_s"], 100 * tol))
PYEOF
}

# 5. a pid given out again during the run (ns_last_pid): two processes, each with its own lines
for try in 1 2 3; do
	"$LS" -q --mode cpu --profile "$WORK/reuse.lsprof" -o "$WORK/reuse.html" -- \
		"$DEB_PY" "$FIX/pid_reuse.py" >"$WORK/reuse.out" 2>&1 && break
done
if pid=$(sed -n 's/^reused //p' "$WORK/reuse.out") && [ -n "$pid" ]; then
	j=$(json_of "$WORK/reuse.lsprof") && "$PYQ" - "$j" "$pid" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
rows = [p for p in d["processes"] if p["pid"] == pid]
def fn_time(name):  # the caller lines' total: spin() is where the samples are
    return sum(l["total_time_s"] for l in d["lines"] if l["pid"] == pid and l["function"] == name)
f, s = fn_time("first"), fn_time("second")
ok = (len(rows) == 2 and f > 0.15 and s > 0.15 and all(r["samples"] > 0 for r in rows)
      and all(r["end_s"] is not None for r in rows))
print("%s pid %d reused: %d process rows (%s samples), first() %.3fs, second() %.3fs" % (
    "ok" if ok else "FAIL", pid, len(rows), [r["samples"] for r in rows], f, s))
PYEOF
else
	fail "pid reuse did not happen: $(cat "$WORK/reuse.out")"
fi

# 6. the interpreter-layout table is full (lowered to one slot): the second CPython is refused
# with a note, never walked with the first one's offsets
spin='import time
def spin():
    t = time.thread_time()
    while time.thread_time() - t < 0.5: pass
spin()'
LINESCOPE_MAX_LAYOUTS=1 "$LS" -q --mode cpu --profile "$WORK/lay.lsprof" -o "$WORK/lay.html" -- \
	sh -c "$DEB_PY -c '$spin' & /root/.pyenv/versions/3.12.1/bin/python3 -c '$spin'; wait" ||
	fail "layout table full: exit $?"
j=$(json_of "$WORK/lay.lsprof") && "$PYQ" - "$j" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1]))
py = [p for p in d["processes"] if (p["argv"] or "").split(" ")[0].endswith(("python3.11", "python3"))]
lined = {l["pid"] for l in d["lines"]}
ok = [p for p in py if p["pid"] in lined and p["python"]]
refused = [p for p in py if p["pid"] not in lined and "interpreter layouts" in (p["note"] or "")]
good = len(py) == 2 and len(ok) == 1 and len(refused) == 1 and refused[0]["samples"] > 100
print("%s layout table full: %s has lines, %s refused: %s" % (
    "ok" if good else "FAIL", [p["python"] for p in ok], [p["pid"] for p in refused],
    [p["note"] for p in refused]))
PYEOF
# 7. a reader slower than its writers (LINESCOPE_FAULT_RECORD_US: more time per record, as when
# the targets starve us of CPU) while thread exits keep coming faster. Killed by the fault at
# the first write of its sixth transaction (the third flush): the profile was written every
# second while the flood went on (before the reader read in slices, its first flush waited for
# the flood to end).
cat >"$WORK/flood.py" <<'PYEOF'
import os, sys, threading, time
t0 = time.time()
while time.time() - t0 < float(sys.argv[2]) and not os.path.exists(sys.argv[1]):
    ts = [threading.Thread(target=int) for _ in range(50)]  # thousands of thread exits a second
    for t in ts:
        t.start()
    for t in ts:
        t.join()
print("flood over after %.1fs" % (time.time() - t0), flush=True)
PYEOF
LINESCOPE_FAULT_RECORD_US=2000 LINESCOPE_FAULT_STORE=6:1:kill "$LS" -q --mode cpu \
	--profile "$WORK/flood.lsprof" -o "$WORK/flood.html" -- "$DEB_PY" "$WORK/flood.py" \
	"$WORK/flood.stop" 15 >"$WORK/flood.out" 2>&1
rc=$?
over=$(grep -c "flood over" "$WORK/flood.out")
touch "$WORK/flood.stop" # the command outlives the killed profiler: it ends at its next round
[ $rc -eq 137 ] && [ "$over" = 0 ] &&
	pass "a reader behind its ring buffer: flushed and killed at the third flush, flood still on" ||
	fail "a reader behind its ring buffer: exit $rc, $(cat "$WORK/flood.out")"
if j=$(json_of "$WORK/flood.lsprof"); then
	"$PYQ" - "$j" <<'PYEOF' | check_lines
import json, sys
r = json.load(open(sys.argv[1]))["run"]
print("%s a reader behind: the profile of its second flush reads %.2fs recorded (status %s)" % (
    "ok" if r["elapsed_s"] >= 1 else "FAIL", r["elapsed_s"], r["status"]))
PYEOF
else
	fail "a reader behind: profile unreadable"
fi
# ... and to its end: the kernel's sums under stacks the reader had not reached yet were held
# back (agg_parked) and added later, none orphaned, every sample kept or counted lost. Behind
# by more than 64 KB (LINESCOPE_FAULT_BEHIND_KB; 8 MB in use), the reading thread runs at a
# higher priority until it has caught up, and the command it launched does not: their nice
# values are read from /proc while it runs. How far behind the reader falls depends on the CPU
# the flood gets: the flood goes on until the profile's last flush shows both (at most 30 s).
LINESCOPE_FAULT_BEHIND_KB=64 LINESCOPE_FAULT_RECORD_US=500 "$LS" -q --mode cpu \
	--profile "$WORK/flood2.lsprof" -o "$WORK/flood2.html" -- "$DEB_PY" "$WORK/flood.py" \
	"$WORK/flood2.stop" 30 >/dev/null &
lspid=$!
"$PYQ" - "$lspid" "$WORK/flood2.lsprof" "$WORK/flood2.stop" >"$WORK/nice.txt" <<'PYEOF'
import os, sqlite3, sys, time
pid = int(sys.argv[1])
ours, job = set(), set()
def nice(task):  # field 19 of stat, after the command name
    return int(open(task + "/stat").read().rsplit(")", 1)[1].split()[16])
def flushed_both():  # the last flush counted a held-back sum and a raise
    try:
        db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True, timeout=0.1)
        st = dict(db.execute("SELECT key, value FROM stats"))
        db.close()
        return st.get("agg_parked", 0) > 0 and st.get("reader_raises", 0) > 0
    except sqlite3.Error:
        return False  # not written yet, or mid-write
n = 0
while os.path.exists("/proc/%d" % pid):
    n += 1
    if n % 20 == 0 and flushed_both():
        open(sys.argv[3], "w").close()
    try:
        ours.add(nice("/proc/%d/task/%d" % (pid, pid)))
        for c in open("/proc/%d/task/%d/children" % (pid, pid)).read().split():
            for t in os.listdir("/proc/%s/task" % c):
                job.add(nice("/proc/%s/task/%s" % (c, t)))
    except (OSError, ValueError, IndexError):
        pass  # one of them ended between two reads
    time.sleep(0.005)
print(" ".join(map(str, sorted(ours))), "/", " ".join(map(str, sorted(job))))
PYEOF
wait "$lspid" || fail "a reader behind, to the end: exit $?"
j=$(json_of "$WORK/flood2.lsprof") && {
	samples_add_up "$j" "a reader behind, to the end"
	"$PYQ" - "$WORK/flood2.lsprof" "$j" "$(cat "$WORK/nice.txt")" <<'PYEOF' | check_lines
import json, sqlite3, sys
st = dict(sqlite3.connect(sys.argv[1]).execute("SELECT key, value FROM stats"))
ok = st["agg_parked"] > 0 and st["agg_orphans"] == 0
print("%s a reader behind, to the end: %d samples held back and added, %d orphaned" % (
    "ok" if ok else "FAIL", st["agg_parked"], st["agg_orphans"]))
el = json.load(open(sys.argv[2]))["run"]["elapsed_s"]
ours, job = ([int(v) for v in h.split()] for h in sys.argv[3].split("/"))
ok = st["reader_raises"] >= 1 and 0 < st["reader_raised_ns"] <= el * 1e9 and -10 in ours and job == [0]
print("%s a reader behind: raised %d time(s) for %.2fs of %.2fs; nice seen: ours %s, the job's %s" % (
    "ok" if ok else "FAIL", st["reader_raises"], st["reader_raised_ns"] / 1e9, el, ours, job))
PYEOF
}
finish
