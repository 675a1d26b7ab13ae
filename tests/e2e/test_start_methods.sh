#!/bin/bash
# SPDX-License-Identifier: MIT
# Every process of a real job: multiprocessing pools with each start method (fork, spawn,
# forkserver and the interpreter's default), ProcessPoolExecutor, subprocess, os.posix_spawn, an
# `sh -c exec` chain and a grandchild, on Debian 3.11, pyenv 3.12 and 3.13, and sid's 3.14 and
# 3.15 (chrooted). Every busy worker (one that measured its own work()) must have the CPU time it
# measured there on work()'s lines, a command line and its Python version; forkserver on 3.14 also
# under --cgroup, where processes join the target set from the kernel.
source "$(dirname "$0")/lib.sh"

root=$("$ROOT/tests/fixtures/pyroot.sh") || { echo "FAIL: cannot build the sid root"; exit 1; }
inside=/tmp/ls-e2e-start
mkdir -p "$root$inside"
cp "$FIX/start_ways.py" "$root$inside/"
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc" || { echo "FAIL: mount proc"; exit 1; }
cg=/sys/fs/cgroup/unified/ls-e2e-start-$$
holder=
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; umount "$root/proc" 2>/dev/null; rmdir "$cg" 2>/dev/null; rm -rf "$WORK" "$root$inside"' EXIT

# check NAME PROFILE TRUTH_DIR: every worker that measured itself is named and on its lines
check() {
	local name=$1 j
	j=$(json_of "$2") || { fail "$name: report"; return; }
	check_lines < <("$PYQ" - "$j" "$3" "$name" <<'PYEOF'
import glob, json, os, sys
d = json.load(open(sys.argv[1])); name = sys.argv[3]
truth = [json.load(open(f)) for f in glob.glob(os.path.join(sys.argv[2], "*.json"))]
procs = {p["pid"]: p for p in d["processes"]}
if not truth:
    print("FAIL %s: no worker measured itself" % name)
for t in sorted(truth, key=lambda t: t["pid"]):
    p = procs.get(t["pid"])
    if p is None:
        print("FAIL %s: worker %d is not in the profile" % (name, t["pid"])); continue
    work = [l for l in d["lines"] if l["pid"] == t["pid"] and l["function"] == "work"]
    on = sum(l["samples"] for l in work)
    # their on-CPU time, scaled to the CPU the kernel accounted for each thread: a loaded
    # machine's timer misses ticks (an overrun hrtimer skips them), the accounting does not
    on_s = sum(l["self_time_s"] if l["cpu_time_s"] is None else l["cpu_time_s"] for l in work)
    share = on / p["samples"] if p["samples"] else 0
    named = bool(p["argv"]) and bool(p["python"])
    # work()'s lines must carry the CPU time the worker measured there (a worker whose lines are
    # lost has next to none): within 3 sigma of the sample count and 5%; the samples beyond are
    # its start-up and shutdown, longer on a busy machine
    hz = d["run"]["frequency_hz"]
    ok = on_s >= t["work_s"] * 0.95 - 3 * on ** 0.5 / hz and named
    print("%s %s: worker %d: %d of %d samples (%.1f%%, %.3fs) on work(), which used %.3fs; %s, %s%s" % (
        "ok" if ok else "FAIL", name, t["pid"], on, p["samples"],
        100 * share, on_s, t["work_s"], p["python"], (p["argv"] or "no command line")[:60],
        "" if ok else "; %d native; images %s" % (p["native_samples"], [
            (x["how"], x["samples"], x["unresolved"], x["python"], x["note"]) for x in p["execs"]])))
PYEOF
)
}

# run NAME TRUTH_DIR_AS_SEEN_BY_THE_JOB -- COMMAND...
run() {
	local name=$1 tdir=$2 prof="$WORK/s.lsprof"
	shift 3
	rm -rf "$WORK/t" "$root$inside/t"
	mkdir -p "$WORK/t" "$root$inside/t"
	LS_TRUTH_DIR="$tdir" "$LS" -q --profile "$prof" -o "$WORK/s.html" -- "$@" >/dev/null ||
		{ fail "$name: exit $?"; return; }
	if [ "$tdir" = "$WORK/t" ]; then check "$name" "$prof" "$WORK/t"; else check "$name" "$prof" "$root$tdir"; fi
}

for py in "$DEB_PY" /root/.pyenv/versions/3.12.1/bin/python3.12 /root/.pyenv/versions/3.13.0/bin/python3.13; do
	need_python "$py"
	v=$(basename "$py")
	for m in fork spawn forkserver default; do
		run "$v pool $m" "$WORK/t" -- "$py" "$FIX/start_ways.py" pool "$m"
	done
done
run "python3.11 executor" "$WORK/t" -- "$DEB_PY" "$FIX/start_ways.py" executor
run "python3.11 spawners" "$WORK/t" -- "$DEB_PY" "$FIX/start_ways.py" spawners
for v in 3.14 3.15; do
	for m in fork spawn forkserver default; do
		run "sid $v pool $m" "$inside/t" -- chroot "$root" "/usr/bin/python$v" "$inside/start_ways.py" pool "$m"
	done
done
run "sid 3.14 executor" "$inside/t" -- chroot "$root" /usr/bin/python3.14 "$inside/start_ways.py" executor
run "sid 3.14 spawners" "$inside/t" -- chroot "$root" /usr/bin/python3.14 "$inside/start_ways.py" spawners

# --cgroup: the job joins a group the profiler watches; a holder keeps the group alive until the
# job is done, and the profiler stops once the group is empty
mkdir -p "$cg"
rm -rf "$root$inside/t" && mkdir -p "$root$inside/t"
sh -c "echo \$\$ > $cg/cgroup.procs; exec sleep 600" &
holder=$!
"$LS" -v -c "$(basename "$cg")" --profile "$WORK/c.lsprof" -o "$WORK/c.html" 2>"$WORK/c.log" &
lsp=$!
wait_log "$WORK/c.log" "processes at start" || fail "cgroup: the profiler did not start"
sh -c "echo \$\$ > $cg/cgroup.procs; LS_TRUTH_DIR=$inside/t exec chroot $root /usr/bin/python3.14 $inside/start_ways.py pool forkserver" >/dev/null ||
	fail "cgroup job: exit $?"
kill "$holder"
wait "$lsp" || fail "cgroup: linescope-bpf exited $?"
check "sid 3.14 forkserver --cgroup" "$WORK/c.lsprof" "$root$inside/t"
j=$(json_of "$WORK/c.lsprof")
n=$(pyq "$j" "sum(1 for p in d['processes'] if p['python'] and (p['cgroup'] or '').endswith('/$(basename "$cg")'))")
[ "$n" -ge 5 ] && pass "cgroup: $n Python processes name their group" ||
	fail "cgroup: $n Python processes name $(basename "$cg") as their cgroup: $(pyq "$j" "[(p['pid'], p['cgroup'], p['cgroup_id']) for p in d['processes']]")"
finish
