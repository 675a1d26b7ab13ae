#!/bin/bash
# SPDX-License-Identifier: MIT
# A tick weighs the period in force and what a change of period cut off, not the first period
# the kernel reports: the period drawn changes (jitter) and each change restarts the timer. At
# 99 and 999 Hz, a 3 s loop's line carries the CPU time the loop measured itself, within what its
# ends and its switches can move (before: 1-9% short, half a period lost at each draw). Time the
# hypervisor took from the CPU between two ticks is not the loop's CPU time: left out, and never
# more than /proc/stat counted stolen meanwhile, with the interrupts' time a kernel that accounts
# it also leaves out of the task clock (before: up to 1% over on a busy host).
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

for hz in 99 999; do
	prof="$WORK/ticks-$hz.lsprof"
	steal0=$(awk '/^cpu /{print $7 + $8 + $9}' /proc/stat) # irq, softirq, steal
	"$LS" -q -F "$hz" --profile "$prof" -o "$WORK/ticks-$hz.html" -- "$DEB_PY" "$FIX/burn_cpu.py" 3 >"$WORK/truth-$hz" ||
		fail "exit $?"
	steal=$(($(awk '/^cpu /{print $7 + $8 + $9}' /proc/stat) - steal0))
	check_lines < <("$PYQ" - "$prof" "$(cat "$WORK/truth-$hz")" "$hz" "$(grep -n '# BURN' "$FIX/burn_cpu.py" | cut -d: -f1)" "$steal" <<'PYEOF'
import math, os, sqlite3, struct, sys
db = sqlite3.connect(sys.argv[1])
# /proc/stat counts in clock ticks, each CPU's three counters rounded down at both ends
stolen = (int(sys.argv[5]) + 6 * os.cpu_count()) / os.sysconf("SC_CLK_TCK")
left = dict(db.execute("SELECT key, value FROM stats")).get("tick_lost_ns", -1) / 1e9
print("%s %s Hz: %.3fs stolen left out of the ticks, %.2fs at most stolen meanwhile" % (
    "ok" if 0 <= left <= stolen else "FAIL", sys.argv[3], left, stolen))
cpu, switches = float(sys.argv[2].split()[0]), int(sys.argv[2].split()[1])
hz, burn = sys.argv[3], int(sys.argv[4])
period = int(db.execute("SELECT value FROM meta WHERE key = 'period_ns'").fetchone()[0]) / 1e9
frames = dict(db.execute("SELECT id, frames FROM stacks"))
got = 0
for sid, w in db.execute("SELECT stack_id, weight_ns FROM samples WHERE kind = 0"):
    f = frames.get(sid)
    # innermost frame on the loop: its condition line or the pass under it
    if f and struct.unpack_from("<II", f, 0)[1] in (burn, burn + 1):
        got += w / 1e9
# each end of the loop and each switch moves at most one tick (at most 4/3 of a period, the
# slowest rate drawn) to or from the loop, uniformly: 3 sigma of that
tol = 3 * (4 / 3 * period) * math.sqrt((switches + 2) / 3)
print("%s %s Hz: the loop's line carries %.3fs of on-CPU ticks; the loop measured %.3fs (%d switches, tol %.3fs)" % (
    "ok" if abs(got - cpu) <= tol else "FAIL", hz, got, cpu, switches, tol))
PYEOF
	)
done
finish
