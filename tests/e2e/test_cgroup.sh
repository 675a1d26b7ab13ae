#!/bin/bash
# SPDX-License-Identifier: MIT
# --cgroup: a process that joins the group after profiling started is profiled, and the run ends
# when the group empties again.
source "$(dirname "$0")/lib.sh"
need_python "$PYENV_PY"

mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$mnt" ] || { echo "FAIL: no cgroup v2 mount"; exit 1; }
name="ls-e2e-$$"
cg="$mnt/$name"
mkdir "$cg" || { echo "FAIL: cannot create $cg"; exit 1; }
cleanup_cg() {
	for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do echo "$p" >"$mnt/cgroup.procs"; done
	rmdir "$cg" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup_cg EXIT

prof="$WORK/cg.lsprof"
# relative to the v2 mount, as users write it
"$LS" -q -c "$name" -d 30 --profile "$prof" -o "$WORK/cg.html" &
lspid=$!
sleep 1.5
# a process started outside the group, moved in while it runs
"$PYENV_PY" -c "
import time
time.sleep(0.5)
def late_joiner():
    t = 0
    for i in range(6_000_000):
        t += i % 11  # LATE
    return t
late_joiner()
" &
pypid=$!
echo "$pypid" >"$cg/cgroup.procs" || fail "cannot move $pypid into $cg"
wait "$pypid"
start=$(date +%s)
wait "$lspid"
rc=$?
took=$(($(date +%s) - start))
[ $rc -eq 0 ] && pass "linescope-bpf exited 0" || fail "linescope-bpf exited $rc"
[ $took -lt 10 ] && pass "stopped when the group emptied (${took}s)" || fail "ran ${took}s after the group emptied"
j=$(json_of "$prof") || fail "report"
late=$(pyq "$j" "sum(l['total_time_s'] for l in lines($pypid) if l['function'] == 'late_joiner')")
"$PYQ" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.1 else 1)" "$late" &&
	pass "late joiner $pypid profiled (${late}s in late_joiner)" || fail "late joiner: ${late}s"
scope=$(pyq "$j" 'd["run"]["scope"]["kind"] + " " + d["run"]["scope"]["text"]')
[ "$scope" = "cgroup /$name" ] && pass "scope $scope" || fail "scope '$scope'"

# the root group (-c /, or the v2 mount itself) has no cgroup.events: it is watched like any
# group, so the run lasts until -d, with a Python process of this test among its processes
"$DEB_PY" -c 'import time
print("ready", flush=True)
t = time.thread_time()
while time.thread_time() - t < 30: pass  # ROOT' >"$WORK/root.log" &
spin=$!
wait_log "$WORK/root.log" ready
for root in / "$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)"; do
	"$LS" -q -c "$root" -d 1.5 --profile "$WORK/root.lsprof" -o "$WORK/root.html" ||
		fail "-c $root: exit $?"
	j=$(json_of "$WORK/root.lsprof") && "$PYQ" - "$j" "$root" "$spin" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1])); r = d["run"]; spin = int(sys.argv[3])
mine = sum(l["samples"] for l in d["lines"] if l["pid"] == spin)
ok = r["status"] == "Success" and r["elapsed_s"] >= 1.4 and r["processes"] > 1 and mine > 100
print("%s -c %s: %.2fs, %d processes, the test's spinner has %d samples" % (
    "ok" if ok else "FAIL", sys.argv[2], r["elapsed_s"], r["processes"], mine))
PYEOF
done
kill $spin
finish
