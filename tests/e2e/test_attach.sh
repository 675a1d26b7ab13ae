#!/bin/bash
# SPDX-License-Identifier: MIT
# -p attaches to running processes (and their existing children); -d stops; SIGKILL of the
# profiler leaves the data flushed so far readable; files belong to the invoking sudo user.
source "$(dirname "$0")/lib.sh"
need_python "$PYENV_PY"
need_python "$DEB_PY"

# a running Python process with a running Python child
"$PYENV_PY" -c "
import subprocess, sys
c = subprocess.Popen([sys.argv[1], sys.argv[2], '400'])
def parent_spin():
    t = 0
    while c.poll() is None:
        t += 1  # PARENT_SPIN
parent_spin()
" "$DEB_PY" "$FIX/ratio3.py" &
ppid=$!
sleep 1
prof="$WORK/attach.lsprof"
start=$(date +%s.%N)
"$LS" -q -p "$ppid" -d 3 --profile "$prof" -o "$WORK/attach.html"
rc=$?
took=$("$PYQ" -c "import sys,time; print(round(time.time() - float(sys.argv[1]), 1))" "$start")
[ $rc -eq 0 ] && pass "-p -d 3 exited 0 after ${took}s" || fail "-p exited $rc"
"$PYQ" -c "import sys; sys.exit(0 if 2.5 < float(sys.argv[1]) < 6 else 1)" "$took" ||
	fail "-d 3 took ${took}s"
j=$(json_of "$prof") || fail "report"
pspin=$(pyq "$j" "sum(l['time_s'] for l in lines($ppid) if l['function'] == 'parent_spin')")
"$PYQ" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.3 else 1)" "$pspin" &&
	pass "attached parent: parent_spin ${pspin}s" || fail "parent spin line ${pspin}s"
child=$(pyq "$j" "sum(l['time_s'] for l in lines(None, 'ratio3.py') if l['pid'] != $ppid)")
"$PYQ" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.3 else 1)" "$child" &&
	pass "its existing child was profiled too (${child}s in ratio3.py)" || fail "child ${child}s"
kill "$ppid" 2>/dev/null
pkill -f "ratio3.py 400" 2>/dev/null
wait "$ppid" 2>/dev/null

# SIGKILL: what was flushed (at least once a second) stays readable
prof="$WORK/killed.lsprof"
SUDO_UID=4321 SUDO_GID=4322 "$LS" -q --profile "$prof" -o "$WORK/killed.html" -- "$DEB_PY" "$FIX/ratio3.py" 400 >/dev/null &
lspid=$!
sleep 3
kill -KILL "$lspid"
wait "$lspid" 2>/dev/null
pkill -f "ratio3.py 400"
j=$(json_of "$prof") && pass "killed profile is readable" || fail "killed profile unreadable"
n=$(pyq "$j" 'd["run"]["samples"]')
[ "$n" -gt 500 ] && pass "killed profile holds $n samples" || fail "killed profile holds $n samples"
st=$(pyq "$j" 'd["run"]["status"]')
[ "$st" = Failed ] && pass "interrupted run reported as $st" || fail "interrupted run status '$st'"
owner=$(stat -c %u:%g "$prof")
[ "$owner" = 4321:4322 ] && pass "profile owned by SUDO_UID:SUDO_GID" || fail "profile owner $owner"
for f in "$prof-wal" "$prof-shm"; do
	[ ! -e "$f" ] || [ "$(stat -c %u "$f")" = 4321 ] || fail "$f owned by $(stat -c %u "$f")"
done

# a finished run under sudo: profile and report both belong to the user
SUDO_UID=4321 SUDO_GID=4322 "$LS" -q --profile "$WORK/own.lsprof" -o "$WORK/own.html" -- "$DEB_PY" -c "pass"
for f in "$WORK/own.lsprof" "$WORK/own.html"; do
	o=$(stat -c %u:%g "$f")
	[ "$o" = 4321:4322 ] && pass "$(basename "$f") owned by $o" || fail "$(basename "$f") owned by $o"
done
finish
