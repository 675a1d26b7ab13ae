#!/bin/bash
# SPDX-License-Identifier: MIT
# Wall mode reports an off-CPU interval when its thread returns to user space, in its own
# context (bpf/offcpu.bpf.c): by rseq_update for threads with rseq registered, by a task work
# for the others, or, on a kernel without task works, at sys_exit. Each path is run on
# tests/fixtures/naps.py (LINESCOPE_OFFCPU_RESUME; GLIBC_TUNABLES=glibc.pthread.rseq=0 for
# threads without rseq): the NAP and WAIT lines must carry the time their threads measured off
# the CPU there, every interval reported in time (offcpu_resume_late 0), and the programs that
# ran must be the path's own (sys_exit only where it is the path).
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

for path in auto no-rseq task-work sys-exit; do
	env=()
	case $path in
	no-rseq) env=(GLIBC_TUNABLES=glibc.pthread.rseq=0) ;;
	task-work | sys-exit) env=(LINESCOPE_OFFCPU_RESUME=$path) ;;
	esac
	prof="$WORK/$path.lsprof"
	env "${env[@]}" "$LS" -q -F 999 --mode wall --profile "$prof" -o /dev/null -- \
		"$DEB_PY" "$FIX/naps.py" "$WORK/$path.truth" || { fail "$path: exit $?"; continue; }
	j=$(json_of "$prof") || { fail "$path: report"; continue; }
	"$PYQ" - "$j" "$WORK/$path.truth" "$FIX/naps.py" "$path" "$prof" <<'PYEOF' | check_lines
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
truth = json.load(open(sys.argv[2]))
src = open(sys.argv[3]).read().splitlines()
path = sys.argv[4]
st = dict(sqlite3.connect(sys.argv[5]).execute("SELECT key, value FROM stats"))
def line(mark):
    return next(i for i, t in enumerate(src, 1) if "# " + mark in t)
def wait(mark):
    return sum(l["wait_time_s"] or 0 for l in d["lines"] if l["path"].endswith("naps.py") and l["line"] == line(mark))
for mark, want in (("NAP", truth["nap_s"]), ("WAIT", truth["wait_s"])):
    got = wait(mark)
    # every interval is longer than the 1 ms period, so each is kept whole: only the ends of the
    # intervals (a few us each) and the thread's CPU inside them differ
    ok = abs(got - want) <= 0.03 * want + 0.003
    print("%s %s: %s line waited %.4f s, measured %.4f s" % ("ok" if ok else "FAIL", path, mark, got, want))
progs = {p["name"] for p in d["run"]["cost"]["programs"]}
want_exit = path == "sys-exit"
ok = ("handle_sys_exit" in progs) == want_exit and ("handle_rseq" in progs) == (path in ("auto", "no-rseq"))
print("%s %s: programs %s" % ("ok" if ok else "FAIL", path, ", ".join(sorted(p for p in progs if p in ("handle_rseq", "handle_sys_exit"))) or "neither sys_exit nor rseq"))
late, n, tw = st.get("offcpu_resume_late", 0), st.get("offcpu_intervals", 0), st.get("offcpu_task_works", 0)
print("%s %s: %d intervals, %d reported late" % ("ok" if not late else "FAIL", path, n, late))
# the path taken: a task work for nearly every interval without rseq, next to none with it
ok = tw >= 0.9 * n if path in ("no-rseq", "task-work") else tw <= 0.1 * n
print("%s %s: %d task works for %d intervals" % ("ok" if ok else "FAIL", path, tw, n))
PYEOF
done
finish
