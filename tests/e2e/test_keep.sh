#!/bin/bash
# SPDX-License-Identifier: MIT
# Kept programs (userspace/loader_keep.c): a run pins its verified programs and maps in bpffs and
# the next run of the same configuration binds to them instead of loading. A bound run must
# start as fresh as a loaded one: no counter, process, aggregate or unread record of the run
# before it, even when that run was killed mid-recording with a backlog in its ring buffer.
# An entry another run holds is not shared (this run loads its own) and not replaced;
# LINESCOPE_KEEP=0 neither binds nor keeps.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
KEEP=/sys/fs/bpf/linescope

# spins on its WORK line for 0.4 s of its own CPU, and says how long it measured
cat >"$WORK/work.py" <<'EOF'
import json, sys, time
def work():
    t = time.thread_time()
    while time.thread_time() - t < 0.4: pass  # WORK
    return time.thread_time() - t
print(json.dumps({"work": work()}), flush=True)
EOF
work_line=$(grep -n "# WORK" "$WORK/work.py" | cut -d: -f1)

# blocking threads, and thousands of short-lived ones a second (each a record), forever: every
# map of wall mode has entries, and a slow reader falls behind
cat >"$WORK/busy.py" <<'EOF'
import os, threading, time
def nap():
    while True:
        time.sleep(0.002)
for _ in range(8):
    threading.Thread(target=nap, daemon=True).start()
print("ready", os.getpid(), flush=True)
while True:
    t = threading.Thread(target=sum, args=(range(1000),))
    t.start()
    t.join()
EOF

entries() { find "$KEEP" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l; }

# kept_keys MAP [AT]: the u32 at byte AT (default 0) of each key (pids, thread ids) of a kept map
# of the one entry, by its name
kept_keys() {
	local f
	for f in "$KEEP"/*/m*; do
		[ "$(bpftool -j map show pinned "$f" | "$PYQ" -c 'import json,sys; print(json.load(sys.stdin)["name"])')" = "$1" ] || continue
		bpftool -j map dump pinned "$f" | "$PYQ" -c '
import json, sys
at = int(sys.argv[1])
for e in json.load(sys.stdin):
    k = e["key"] if at else e.get("formatted", e)["key"]
    print(k if isinstance(k, int) else
          int.from_bytes(bytes(int(b, 16) for b in k[at:at + 4]), "little"))' "${2:-0}"
	done
}
how_of() { sed -n 's/.*BPF set-up .*, \(load\|kept programs\) [0-9.]* ms, attach.*/\1/p' "$1"; }

# run NAME [ARG...]: profiles work.py (wall mode unless MODE is set) with the tool's ARGs, and
# the environment's LINESCOPE_KEEP; -v output in NAME.err
run() {
	local name=$1
	shift
	"$LS" "$@" -v --mode "${MODE:-wall}" --profile "$WORK/$name.lsprof" -o "$WORK/$name.html" \
		-- "$DEB_PY" "$WORK/work.py" >"$WORK/$name.out" 2>"$WORK/$name.err" ||
		fail "$name: exit $? ($(tail -1 "$WORK/$name.err"))"
}

# fresh NAME: the profile holds this run alone, its counters add up from zero, and work()'s line
# has the time the workload measured (scaled to the kernel's count, within 3 sigma + 5%)
fresh() {
	local name=$1 j
	j=$(json_of "$WORK/$name.lsprof") || { fail "$name: no report"; return; }
	"$PYQ" - "$j" "$WORK/$name.out" "$work_line" "$name" <<'PYEOF' | check_lines
import json, math, os, sys
d = json.load(open(sys.argv[1])); truth = json.loads(open(sys.argv[2]).read())["work"]
line, name = int(sys.argv[3]), sys.argv[4]
r = d["run"]
taken, samples, lost = r["taken"], r["samples"], r["lost"]["total"]
print("%s %s: taken %d = %d samples + %d lost" % (
    "ok" if taken == samples + lost else "FAIL", name, taken, samples, lost))
pids = sorted(p["pid"] for p in d["processes"])
print("%s %s: %d process(es) in the profile %s" % ("ok" if len(pids) == 1 else "FAIL", name,
                                                   len(pids), pids))
# the kept programs' run counts go on from the runs before: only this run's may be reported (a
# cpu-clock event per CPU, at most 1.25x the rate with jitter, attached before the clock starts)
hz = r["frequency_hz"] or 999
runs = [p["runs"] for p in r["cost"]["programs"] if p["name"] == "handle_sample"]
bound = 1.25 * hz * os.cpu_count() * (r["elapsed_s"] + 1)
print("%s %s: handle_sample ran %s times this run (at most %.0f)" % (
    "ok" if runs and 0 < runs[0] <= bound else "FAIL", name, runs, bound))
got = sum(l["cpu_time_s"] if l["cpu_time_s"] is not None else l["self_time_s"]  # cpu mode: None
          for l in d["lines"] if l["path"].endswith("work.py") and l["line"] == line)
tol = 3 / math.sqrt(truth * hz) + 0.05
print("%s %s: work() line %.3fs against %.3fs measured (within %.0f%%)" % (
    "ok" if abs(got / truth - 1) <= tol else "FAIL", name, got, truth, 100 * tol))
PYEOF
}

rm -rf "$KEEP"

# 1. the first run loads and keeps; the second binds
run cold
[ "$(how_of "$WORK/cold.err")" = load ] && pass "first run: loaded" ||
	fail "first run: $(grep 'BPF set-up' "$WORK/cold.err")"
fresh cold
n=$(entries)
[ "$n" = 1 ] && pass "one entry kept" || fail "$n entries kept"
entry=$(find "$KEEP" -mindepth 1 -maxdepth 1 -type d | head -1)
progs=$(find "$entry" -name 'p*' | wc -l)
maps=$(find "$entry" -name 'm*' | wc -l)
[ "$progs" -ge 5 ] && [ "$maps" -ge 10 ] && pass "entry: $progs programs, $maps maps" ||
	fail "entry: $progs programs, $maps maps"
run warm
[ "$(how_of "$WORK/warm.err")" = "kept programs" ] && pass "second run: bound to the kept load" ||
	fail "second run: $(grep 'BPF set-up' "$WORK/warm.err")"
fresh warm

# 2. a bound run killed while its reader is behind (a backlog in the ring buffer, processes in
# procs, open intervals, aggregates, counters); the next one must not see any of it
LINESCOPE_FAULT_RECORD_US=2000 "$LS" -v --profile "$WORK/killed.lsprof" -o "$WORK/killed.html" \
	-- "$DEB_PY" "$WORK/busy.py" >"$WORK/killed.out" 2>"$WORK/killed.err" &
ls=$!
wait_log "$WORK/killed.out" ready || fail "killed: the job did not start"
busy=$(sed -n 's/^ready //p' "$WORK/killed.out")
# its first flush published the profile: everything is running and recorded
for ((i = 0; i < 600; i++)); do [ -s "$WORK/killed.lsprof" ] && break; sleep 0.05; done
naps=$(ls /proc/"$busy"/task | sort -n | sed -n '2,9p') # the napping threads
kill -9 $ls
wait $ls 2>/dev/null
kill -9 "$busy" 2>/dev/null
# what it left: the job in procs, its napping threads' open intervals in offcpu_pending, its
# samples added up in the aggregate maps (struct ls_agg_key: the pid at byte 8), one of which the
# aggregate slot still holds (a bound run keeps it set)
of_job() { # of_job ID...: how many of the IDs are the job's pid or its napping threads' ids
	local n=0 k t
	for k in "$@"; do
		for t in $busy $naps; do [ "$k" = "$t" ] && n=$((n + 1)); done
	done
	echo $n
}
left() { of_job $(kept_keys procs) $(kept_keys offcpu_pending); }
agg_left() { of_job $(kept_keys agg_a 8) $(kept_keys agg_b 8); }
n=$(left)
[ "$n" -ge 2 ] && pass "killed run: $n of its job's entries left in the kept maps" ||
	fail "killed run: $n of its job's entries left (the check below would prove nothing)"
n=$(agg_left)
[ "$n" -ge 1 ] && pass "killed run: $n of its job's aggregates left in the kept maps" ||
	fail "killed run: $n of its job's aggregates left (the check below would prove nothing)"
[ "$(how_of "$WORK/killed.err")" = "kept programs" ] && pass "killed run: it was bound" ||
	fail "killed run: $(grep 'BPF set-up' "$WORK/killed.err")"
run after_kill
[ "$(how_of "$WORK/after_kill.err")" = "kept programs" ] && pass "after a killed run: bound" ||
	fail "after a killed run: $(grep 'BPF set-up' "$WORK/after_kill.err")"
fresh after_kill
n=$(left)
[ "$n" = 0 ] && pass "after a killed run: none of its entries left" ||
	fail "after a killed run: $n of its entries left"
n=$(agg_left)
[ "$n" = 0 ] && pass "after a killed run: none of its aggregates left" ||
	fail "after a killed run: $n of its aggregates left"

# 3. an entry another run holds: this one loads its own, and the held one stays
flock -x "$entry" -c "touch '$WORK/held'; while [ ! -e '$WORK/release' ]; do sleep 0.05; done" &
holder=$!
for ((i = 0; i < 600; i++)); do [ -e "$WORK/held" ] && break; sleep 0.05; done
run concurrent
[ "$(how_of "$WORK/concurrent.err")" = load ] && pass "entry held elsewhere: loaded its own" ||
	fail "entry held elsewhere: $(grep 'BPF set-up' "$WORK/concurrent.err")"
fresh concurrent
[ -e "$entry/p0" ] || [ "$(find "$entry" -name 'p*' | wc -l)" -gt 0 ] &&
	pass "the held entry was not replaced" || fail "the held entry was removed"
touch "$WORK/release"
wait $holder

# 4. LINESCOPE_KEEP=0: loads, keeps nothing new
rm -rf "$KEEP"
LINESCOPE_KEEP=0 run nokeep
[ "$(how_of "$WORK/nokeep.err")" = load ] && pass "LINESCOPE_KEEP=0: loaded" ||
	fail "LINESCOPE_KEEP=0: $(grep 'BPF set-up' "$WORK/nokeep.err")"
n=$(entries)
[ "$n" = 0 ] && pass "LINESCOPE_KEEP=0: nothing kept" || fail "LINESCOPE_KEEP=0: $n entries"

# 5. --unload: loads, and leaves nothing kept behind
run keep_one
run unload --unload
[ "$(how_of "$WORK/unload.err")" = load ] && pass "--unload: loaded" ||
	fail "--unload: $(grep 'BPF set-up' "$WORK/unload.err")"
n=$(entries)
[ "$n" = 0 ] && [ ! -e "$KEEP" ] && pass "--unload: nothing left in bpffs" ||
	fail "--unload: $n entries left"

# 6. another configuration has its own key, and replaces the one nobody holds
run wall1
MODE=cpu run cpu1
MODE=cpu run cpu2
[ "$(how_of "$WORK/cpu1.err")" = load ] && [ "$(how_of "$WORK/cpu2.err")" = "kept programs" ] &&
	pass "cpu mode: its own entry (loaded, then bound)" ||
	fail "cpu mode: $(how_of "$WORK/cpu1.err"), then $(how_of "$WORK/cpu2.err")"
fresh cpu2
n=$(entries)
[ "$n" = 1 ] && pass "one entry after a change of configuration" || fail "$n entries"

finish
