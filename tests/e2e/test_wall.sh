#!/bin/bash
# SPDX-License-Identifier: MIT
# Wall-clock mode (the default): a line that sleeps 1 s and a line that burns 1 s of CPU both
# show about 1 s, one as Wait and one as CPU; GIL contention is labelled as such; a parent's
# wait() line carries the wait for its children; --mode cpu records no off-CPU time. A thread
# blocked before we attach or still blocked when we stop has its wait counted from the attach and
# up to the stop, against its own clock.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

cat >"$WORK/sleepburn.py" <<'PY'
import time


def sleeper():
    time.sleep(1.0)  # SLEEP


def burner():
    t = time.thread_time()
    x = 0
    while time.thread_time() - t < 1.0:
        x += 1  # BURN


sleeper()
burner()
PY
for py in "$DEB_PY" "$PYENV_PY"; do
	prof="$WORK/wall.lsprof"
	"$LS" -v --profile "$prof" -o "$WORK/wall.html" -- "$py" "$WORK/sleepburn.py" 2>"$WORK/wall.log" ||
		fail "exit $?"
	j=$(json_of "$prof")
	[ "$(pyq "$j" 'd["run"]["mode"]')" = wall ] && pass "$py: default mode is wall" || fail "mode"
	sw=$(pyq "$j" "sum(l['wait_time_s'] for l in lines(None, 'sleepburn.py') if l['function'] == 'sleeper')")
	sc=$(pyq "$j" "sum(l['cpu_time_s'] for l in lines(None, 'sleepburn.py') if l['function'] == 'sleeper')")
	bc=$(pyq "$j" "sum(l['cpu_time_s'] for l in lines(None, 'sleepburn.py') if l['function'] == 'burner')")
	bw=$(pyq "$j" "sum(l['wait_time_s'] for l in lines(None, 'sleepburn.py') if l['function'] == 'burner')")
	r=$(ratio_within "$sw" 1 1.0 0.10) && pass "$py: sleep line waits ${sw}s" || fail "$py: sleep wait ${sw}s, want 1 +/- 10%"
	r=$(ratio_within "$bc" 1 1.0 0.10) && pass "$py: burn line CPU ${bc}s" || fail "$py: burn CPU ${bc}s, want 1 +/- 10%"
	"$PYQ" -c "import sys; sys.exit(0 if float(sys.argv[1]) < 0.1 and float(sys.argv[2]) < 0.1 else 1)" "$sc" "$bw" &&
		pass "$py: sleep has no CPU (${sc}s), burn no blocked wait (${bw}s)" ||
		fail "$py: sleep CPU ${sc}s / burn wait ${bw}s"
	# the sleep line's Time is its wall time
	st=$(pyq "$j" "own('sleepburn.py', 5)")
	r=$(ratio_within "$st" 1 1.0 0.10) && pass "$py: sleep line Time ${st}s" || fail "$py: sleep line Time ${st}s"
	[ "$failures" = 0 ] || explain "$prof" "$j" "$WORK/wall.log"
done

# two CPU-bound threads share the GIL: their waits are GIL waits, on their loop lines
prof="$WORK/gil.lsprof"
"$LS" -q --profile "$prof" -o "$WORK/gil.html" -- "$DEB_PY" "$FIX/threads4.py" 800000 || fail "exit $?"
j=$(json_of "$prof")
gil=$(pyq "$j" "sum(l['gil_wait_time_s'] for l in lines(None, 'threads4.py') if l['function'] == 'spin')")
cpu=$(pyq "$j" "sum(l['cpu_time_s'] for l in lines(None, 'threads4.py') if l['function'] == 'spin')")
"$PYQ" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.3 * float(sys.argv[2]) else 1)" "$gil" "$cpu" &&
	pass "GIL waits labelled on spin(): ${gil}s (CPU ${cpu}s)" || fail "GIL wait ${gil}s vs CPU ${cpu}s"

# a parent waiting for its children: the wait is on the wait() lines, children keep their own lines
prof="$WORK/pw.lsprof"
"$LS" -q --profile "$prof" -o "$WORK/pw.html" -- "$DEB_PY" "$FIX/parent_child.py" || fail "exit $?"
j=$(json_of "$prof")
root=$(pyq "$j" 'd["processes"][0]["pid"]')
wa=$(pyq "$j" "own('parent_child.py', 14, $root)")
"$PYQ" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.1 else 1)" "$wa" &&
	pass "parent's a.wait() line has ${wa}s" || fail "a.wait() line ${wa}s"
cw=$(pyq "$j" "sum(l['time_s'] for l in lines($root, 'child_work.py'))")
[ "$cw" = 0 ] || [ "$cw" = 0.0 ] && pass "no child line time in the parent" || fail "child time in parent: $cw"
wb=$(pyq "$j" "own('parent_child.py', 15, $root)")
"$PYQ" - "$WORK/pw.html" "$wa" "$wb" <<'PYEOF' && pass "child invocations carry the parent's wait" || fail "child wait_s"
import json, re, sys
h = open(sys.argv[1]).read()
d = json.loads(re.search(r'id="ls-data">(.*?)</script>', h, re.S).group(1))
waits = [c["wait_s"] for c in d["children"]]
lines = float(sys.argv[2]) + float(sys.argv[3])
print("child waits %s; wait() lines %.3fs" % (waits, lines))
# each child's wait is the parent's time in waitpid() for it: together, the wait() lines' time
ok = len(waits) == 2 and all(w is not None for w in waits) and waits[0] > 0.05
sys.exit(0 if ok and abs(sum(waits) - lines) <= 0.2 * lines else 1)
PYEOF

# --mode cpu: no off-CPU intervals at all
prof="$WORK/cpu.lsprof"
"$LS" -q --mode cpu --profile "$prof" -o "$WORK/cpu.html" -- "$DEB_PY" "$WORK/sleepburn.py" || fail "exit $?"
j=$(json_of "$prof")
w=$(pyq "$j" 'd["lines"][0]["wait_time_s"]')
n=$(sqlite3 "$prof" "SELECT count(*) FROM samples WHERE kind != 0")
[ "$w" = None ] && [ "$n" = 0 ] && pass "--mode cpu: no wait column, no off-CPU rows" || fail "--mode cpu: wait=$w rows=$n"
# The edges: tests/fixtures/blocked.py blocks on line 10 (opening a FIFO) and writes when it began
# to block and when it woke, on CLOCK_MONOTONIC, the clock of the profile's clock_start_ns.
fifo="$WORK/edge.fifo"
mkfifo "$fifo"
meta() { sqlite3 "$1" "SELECT value FROM meta WHERE key = '$2'"; }
stat_of() { sqlite3 "$1" "SELECT value FROM stats WHERE key = '$2'"; }
# near WHAT VALUE TRUTH BELOW ABOVE: TRUTH - BELOW <= VALUE <= TRUTH + ABOVE
near() {
	"$PYQ" -c "import sys; v, t, lo, hi = map(float, sys.argv[1:]); sys.exit(0 if t - lo <= v <= t + hi else 1)" "$2" "$3" "$4" "$5" &&
		pass "$1: $2 s, truth $3 s (-$4/+$5)" || fail "$1: $2 s, want $3 s (-$4/+$5)"
}
# blocked_in PID: waits until its thread sleeps in openat (257), the line it blocks in
blocked_in() {
	local i nr
	for ((i = 0; i < 600; i++)); do
		read -r nr _ <"/proc/$1/syscall" 2>/dev/null && [ "$nr" = 257 ] && return 0
		sleep 0.05
	done
	return 1
}

# -p a thread blocked all along: its wait runs from the attach to the stop
"$DEB_PY" "$FIX/blocked.py" "$fifo" "$WORK/edgeA.times" &
bp=$!
blocked_in $bp || fail "blocked.py never blocked"
prof="$WORK/edgeA.lsprof"
"$LS" -q -p $bp -d 1.5 --profile "$prof" -o "$WORK/edgeA.html" || fail "-p blocked: exit $?"
# release it: opening the FIFO is enough. blocked.py closes it at once, so a write (`echo >`)
# could find no reader and SIGPIPE would kill this script without a word (CI saw it once)
: >"$fifo"
wait $bp
j=$(json_of "$prof")
w=$(pyq "$j" "own('blocked.py', 10)")
span=$("$PYQ" -c "import sys; print((int(sys.argv[1]) - int(sys.argv[2])) / 1e9)" \
	"$(meta "$prof" elapsed_ns)" "$(meta "$prof" attached_ns)")
# it opened at or after the attach and closed before the end was taken
near "-p, blocked from before the attach to after the stop: the line's wait" "$w" "$span" 0.05 0
[ "$(stat_of "$prof" offcpu_open_at_start)" -ge 1 ] && [ "$(stat_of "$prof" offcpu_open_at_stop)" -ge 1 ] &&
	pass "counted as open at the start and at the stop" || fail "open at start/stop not counted"
[ "$(pyq "$j" 'd["run"]["threads"]')" = 1 ] && pass "the blocked thread has its row" ||
	fail "no thread row for the blocked thread"

# -p a thread blocked at the attach that wakes during the run: wait from the attach to its wake
"$DEB_PY" "$FIX/blocked.py" "$fifo" "$WORK/edgeB.times" &
bp=$!
blocked_in $bp || fail "blocked.py never blocked"
prof="$WORK/edgeB.lsprof"
"$LS" -v -p $bp --profile "$prof" -o "$WORK/edgeB.html" 2>"$WORK/edgeB.log" &
lp=$!
wait_log "$WORK/edgeB.log" "off the CPU at the start" || fail "the tool never said it attached"
# release it once the profile is published (the first flush, a second in): a wait worth measuring
for ((i = 0; i < 600; i++)); do [ -e "$prof" ] && break; sleep 0.05; done
: >"$fifo"
wait $bp
wait $lp || fail "-p blocked then woken: exit $?"
j=$(json_of "$prof")
w=$(pyq "$j" "own('blocked.py', 10)")
truth=$("$PYQ" -c "import sys; print((int(sys.argv[1]) - int(sys.argv[2]) - int(sys.argv[3])) / 1e9)" \
	"$(awk '/^wake/ {print $2}' "$WORK/edgeB.times")" "$(meta "$prof" clock_start_ns)" "$(meta "$prof" attached_ns)")
# it opened at or after the attach and ended before the thread read its clock
near "-p, blocked at the attach, woken later by its own clock: the line's wait" "$w" "$truth" 0.05 0.002

# a launched command still blocked at -d: its wait runs up to its end (SIGTERM at the deadline)
prof="$WORK/edgeC.lsprof"
"$LS" -q -d 1 --profile "$prof" -o "$WORK/edgeC.html" -- "$DEB_PY" "$FIX/blocked.py" "$fifo" "$WORK/edgeC.times"
[ $? = 143 ] && pass "-d 1, blocked command: exit 143" || fail "-d 1, blocked command: exit $?"
j=$(json_of "$prof")
w=$(pyq "$j" "own('blocked.py', 10)")
truth=$("$PYQ" -c "import sys; print(float(sys.argv[1]) - (int(sys.argv[2]) - int(sys.argv[3])) / 1e9)" \
	"$(pyq "$j" 'd["processes"][0]["end_s"]')" "$(awk '/^block/ {print $2}' "$WORK/edgeC.times")" \
	"$(meta "$prof" clock_start_ns)")
near "-d 1 -- blocked command, blocked until it ended: the line's wait" "$w" "$truth" 0.05 0.002
finish
