#!/bin/bash
# SPDX-License-Identifier: MIT
# Stopping: SIGINT is forwarded to a launched command, which gets 3 s; one that ignores it, or a
# second SIGINT, gets SIGKILL with everything it started; -d asks with SIGTERM first. The tool
# exits with the command's status, else 128 + the signal that stopped it; a report that cannot
# be written exits 74 unless the command failed; output paths are checked before anything runs.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

# a command that shrugs SIGINT off (saying so), spins, and says its pid when ready
stubborn='import os, signal, time
signal.signal(signal.SIGINT, lambda *a: print("got INT", flush=True))
print("ready", os.getpid(), flush=True)
t = time.time()
while time.time() - t < 60: pass'

# run_bg NAME ARGS...: starts the tool in the background on $stubborn; sets ls and child
run_bg() {
	local name=$1
	shift
	"$LS" --profile "$WORK/$name.lsprof" -o "$WORK/$name.html" "$@" -- "$DEB_PY" -c "$stubborn" \
		>"$WORK/$name.out" 2>"$WORK/$name.err" &
	ls=$!
	wait_log "$WORK/$name.out" ready || fail "$name: the command did not start"
	child=$(sed -n 's/^ready //p' "$WORK/$name.out")
}

# gone NAME PID: the command was not left running
gone() {
	if kill -0 "$2" 2>/dev/null; then
		fail "$1: command $2 left running"
		kill -9 "$2"
	else
		pass "$1: command $2 is gone"
	fi
}

status_of() { pyq "$(json_of "$1")" 'd["run"]["status"] + " (" + (d["run"]["status_detail"] or "") + ")"'; }

# 1. SIGINT, ignored by the command: after the grace, SIGKILL; the command's status is the tool's
run_bg ignore
kill -INT $ls
wait $ls
rc=$?
[ $rc -eq 137 ] && pass "SIGINT ignored: exit $rc (the command's SIGKILL)" || fail "SIGINT ignored: exit $rc"
gone "SIGINT ignored" "$child"
st=$(status_of "$WORK/ignore.lsprof")
[[ "$st" == "Failed (killed by signal 9"* ]] && pass "SIGINT ignored: $st" || fail "SIGINT ignored: $st"

grep -q "got INT" "$WORK/ignore.out" && pass "SIGINT ignored: the command got the forwarded SIGINT" ||
	fail "SIGINT ignored: the command never got SIGINT"

# 2. a second SIGINT, once the first has reached the command, does not wait for the grace
run_bg twice
kill -INT $ls
wait_log "$WORK/twice.out" "got INT" || fail "second SIGINT: the first was not forwarded"
t1=$(date +%s%N)
kill -INT $ls
wait $ls
rc=$?
waited=$((($(date +%s%N) - t1) / 1000000))
[ $rc -eq 137 ] && grep -q "did not exit; killing it" "$WORK/twice.err" && [ $waited -lt 3000 ] &&
	pass "second SIGINT: killed after ${waited} ms, not the 3 s grace (exit $rc)" ||
	fail "second SIGINT: exit $rc after ${waited} ms, $(cat "$WORK/twice.err")"
gone "second SIGINT" "$child"

# 3. -d with a launched command: SIGTERM at the deadline
"$LS" -q -d 1 --profile "$WORK/d.lsprof" -o "$WORK/d.html" -- "$DEB_PY" -c 'import os, time
print(os.getpid(), flush=True)
t = time.time()
while time.time() - t < 60: pass' >"$WORK/d.out"
rc=$?
[ $rc -eq 143 ] && pass "-d 1: exit $rc (the command's SIGTERM)" || fail "-d 1: exit $rc"
gone "-d 1" "$(cat "$WORK/d.out")"
st=$(status_of "$WORK/d.lsprof")
[[ "$st" == *"stopped at -d 1s"* ]] && pass "-d 1: $st" || fail "-d 1: $st"

# 4. SIGHUP with -p: 128 + 1
"$DEB_PY" -c 'import time
print("ready", flush=True)
time.sleep(60)' >"$WORK/hup.out" &
target=$!
wait_log "$WORK/hup.out" ready
"$LS" -q -p $target --profile "$WORK/hup.lsprof" -o "$WORK/hup.html" &
ls=$!
# once it records (its profile has the first flush), hang up
for _ in $(seq 300); do [ -s "$WORK/hup.lsprof" ] && break; sleep 0.05; done
kill -HUP $ls
wait $ls
rc=$?
[ $rc -eq 129 ] && pass "SIGHUP: exit $rc" || fail "SIGHUP: exit $rc"
kill $target

# 5. the report cannot be written (its directory is gone): the command's status, else 74
for code in 5 0; do
	mkdir -p "$WORK/gone"
	"$LS" -q --profile "$WORK/g.lsprof" -o "$WORK/gone/r.html" -- "$DEB_PY" -c "import shutil, sys
shutil.rmtree('$WORK/gone')
sys.exit($code)" 2>"$WORK/g.err"
	rc=$?
	want=$([ $code = 5 ] && echo 5 || echo 74)
	[ $rc -eq $want ] && grep -q "cannot write" "$WORK/g.err" &&
		pass "unwritable report, command exit $code: exit $rc" ||
		fail "unwritable report, command exit $code: exit $rc (want $want), $(cat "$WORK/g.err")"
done

# 6. an output path that cannot be written is refused before the command runs
"$LS" -q -o /nonexistent/x.html --profile "$WORK/n.lsprof" -- "$DEB_PY" -c "open('$WORK/ran', 'w')" \
	2>"$WORK/n.err"
rc=$?
[ $rc -eq 1 ] && [ ! -e "$WORK/ran" ] && pass "bad -o checked first: $(cat "$WORK/n.err")" ||
	fail "bad -o: exit $rc, ran: $([ -e "$WORK/ran" ] && echo yes || echo no)"
finish
