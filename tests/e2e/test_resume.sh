#!/bin/bash
# SPDX-License-Identifier: MIT
# Wall mode reports an off-CPU interval when its thread returns to user space, in its own
# context (bpf/offcpu.bpf.c): by rseq_update for threads with rseq registered, by a task work
# for the others, or, on a kernel without task works, at sys_exit. Each path is run on
# tests/fixtures/naps.py (LINESCOPE_OFFCPU_RESUME; GLIBC_TUNABLES=glibc.pthread.rseq=0 for
# threads without rseq): the NAP and WAIT lines must carry the time their threads measured off
# the CPU there, every interval reported in time (offcpu_resume_late 0), and the programs that
# ran must be the path's own (sys_exit only where it is the path). A kernel that refuses task
# works from a tracepoint (6.18.y stable; the profile's meta offcpu_resume is then "rseq" by
# default) reports the intervals of threads without rseq late, at their next switch or sample:
# there the NAP line must still be right, every late interval counted, and the WAIT thread's
# one interval, which its exit ends, reported there (in the process's wait, on no line); a
# forced task-work run falls back to sys_exit. Some kernels run a thread again with no
# sched_switch to show it (Firecracker guests: every switch away from init's threads): the
# "unseen" run hides one switch in of two (LINESCOPE_FAULT_UNSEEN_IN=2), and the lines must still
# carry their time, each such interval ended when its thread is next seen running, and counted.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

refused=
for path in auto no-rseq task-work sys-exit unseen; do
	env=()
	case $path in
	no-rseq) env=(GLIBC_TUNABLES=glibc.pthread.rseq=0) ;;
	unseen) env=(LINESCOPE_FAULT_UNSEEN_IN=2) ;;
	task-work | sys-exit) env=(LINESCOPE_OFFCPU_RESUME=$path) ;;
	esac
	prof="$WORK/$path.lsprof"
	env "${env[@]}" "$LS" -q -F 999 --mode wall --profile "$prof" -o /dev/null -- \
		"$DEB_PY" "$FIX/naps.py" "$WORK/$path.truth" || { fail "$path: exit $?"; continue; }
	j=$(json_of "$prof") || { fail "$path: report"; continue; }
	# the kernel's stance on task works, from the first (default) run's path
	[ -n "$refused" ] || refused=$(sqlite3 "$prof" "SELECT value = 'rseq' FROM meta WHERE key = 'offcpu_resume'")
	"$PYQ" - "$j" "$WORK/$path.truth" "$FIX/naps.py" "$path" "$prof" "$refused" <<'PYEOF' | check_lines
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
src = open(sys.argv[3]).read().splitlines()
path = sys.argv[4]
db = sqlite3.connect(sys.argv[5])
refused = sys.argv[6] == "1"
st = dict(db.execute("SELECT key, value FROM stats"))
took = db.execute("SELECT value FROM meta WHERE key = 'offcpu_resume'").fetchone()[0]
want = {"auto": "rseq" if refused else "rseq, task works",
        "unseen": "rseq" if refused else "rseq, task works",
        "no-rseq": "rseq" if refused else "rseq, task works",
        "task-work": "sys_exit" if refused else "task works", "sys-exit": "sys_exit"}[path]
print("%s %s: path %s (the kernel %s task works)" % ("ok" if took == want else "FAIL", path, took,
                                                      "refuses" if refused else "takes"))
# without rseq and without task works, every interval is reported late (at the next switch)
degraded = refused and path == "no-rseq"
def line(mark):
    return next(i for i, t in enumerate(src, 1) if "# " + mark in t)
def wait(mark):
    return sum(l["wait_time_s"] or 0 for l in d["lines"] if l["path"].endswith("naps.py") and l["line"] == line(mark))
for mark, want_s in (("NAP", truth["nap_s"]), ("WAIT", truth["wait_s"])):
    got = wait(mark)
    if degraded and mark == "WAIT":
        # its one interval is reported at the thread's exit, once its Python frames are gone:
        # on no line, but in the process's wait time (with the naps), and not lost
        lost = st.get("offcpu_lost_at_exit", 0)
        total = sum(p["wait_s"] for p in d["processes"])
        ok = not lost and abs(total - want_s - truth["nap_s"]) <= 0.03 * (want_s + truth["nap_s"]) + 0.006
        print("%s %s: WAIT reported at the thread's exit: process waits %.4f s, measured %.4f s, %d lost" % (
            "ok" if ok else "FAIL", path, total, want_s + truth["nap_s"], lost))
        continue
    # every interval is longer than the 1 ms period, so each is kept whole: only the ends of the
    # intervals (a few us each) and the thread's CPU inside them differ; late, the NAP thread's
    # last nap is reported at its join (one of 60), and a nap a sample catches before its next
    # sleep on the line after NAP
    ok = abs(got - want_s) <= (0.03 + 3 * degraded / 60) * want_s + 0.003
    print("%s %s: %s line waited %.4f s, measured %.4f s" % ("ok" if ok else "FAIL", path, mark, got, want_s))
progs = {p["name"] for p in d["run"]["cost"]["programs"]}
ok = ("handle_sys_exit" in progs) == (want == "sys_exit") and ("handle_rseq" in progs) == ("rseq" in want)
print("%s %s: programs %s" % ("ok" if ok else "FAIL", path, ", ".join(sorted(p for p in progs if p in ("handle_rseq", "handle_sys_exit"))) or "neither sys_exit nor rseq"))
late, n, tw = st.get("offcpu_resume_late", 0), st.get("offcpu_intervals", 0), st.get("offcpu_task_works", 0)
if degraded:
    ok = late >= 0.9 * n
elif want == "rseq":
    # the process's first intervals, before glibc registers rseq for its main thread: no more
    # than the switches it had made when its first statement ran (its own count, this run)
    ok = late <= truth["early_switches"]
else:
    ok = not late
print("%s %s: %d intervals, %d reported late (%d switches before its first statement)" % (
    "ok" if ok else "FAIL", path, n, late, truth["early_switches"]))
# the path taken: a task work for nearly every interval of a thread without rseq, else next to none
ok = tw >= 0.9 * n if "task works" in want and path not in ("auto", "unseen") else tw <= 0.1 * n
print("%s %s: %d task works for %d intervals" % ("ok" if ok else "FAIL", path, tw, n))
if path == "unseen":
    # one switch in of two hidden, each interval has one: about half of them, none lost
    unseen = st.get("offcpu_unseen_in", 0)
    ok = 0.3 * n <= unseen <= n and not st.get("offcpu_lost_at_exit", 0)
    print("%s %s: %d of %d intervals ended when their thread was next seen running" % (
        "ok" if ok else "FAIL", path, unseen, n))
PYEOF
done
finish
