#!/bin/bash
# SPDX-License-Identifier: MIT
# Wall-clock mode (the default): a line that sleeps 1 s and a line that burns 1 s of CPU both
# show about 1 s, one as Wait and one as CPU; GIL contention is labelled as such; a parent's
# wait() line carries the wait for its children; --mode cpu records no off-CPU time.
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
	"$LS" -q --profile "$prof" -o "$WORK/wall.html" -- "$py" "$WORK/sleepburn.py" || fail "exit $?"
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
finish
