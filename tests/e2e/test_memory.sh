#!/bin/bash
# SPDX-License-Identifier: MIT
# --memory: the line that keeps 200 MB alive in 1 MB steps gets at least 90% of the growth; the
# line that allocates and frees 1 MB 200 times gets under 10 MB and a Peak Mem; the report holds
# a timeline of at most 4096 readings per process.
source "$(dirname "$0")/lib.sh"

for py in "$DEB_PY" "$PYENV_PY"; do
	need_python "$py"
	prof="$WORK/mem.lsprof"
	"$LS" -q --memory --profile "$prof" -o "$WORK/mem.html" -- "$py" "$FIX/memgrow.py" || fail "exit $?"
	j=$(json_of "$prof")
	grow=$(pyq "$j" "own('memgrow.py', 11) and sum(l['mem_change_bytes'] or 0 for l in lines(None, 'memgrow.py') if l['line'] == 11)")
	churn=$(pyq "$j" "sum(l['mem_change_bytes'] or 0 for l in lines(None, 'memgrow.py') if l['line'] == 17)")
	peak=$(pyq "$j" "max(l['peak_mem_bytes'] or 0 for l in lines(None, 'memgrow.py') if l['line'] == 17)")
	"$PYQ" -c "import sys; sys.exit(0 if int(sys.argv[1]) >= 0.9 * 200_000_000 else 1)" "$grow" &&
		pass "$py: GROW line +$((grow / 1000000)) MB" || fail "$py: GROW line $grow bytes"
	"$PYQ" -c "import sys; sys.exit(0 if abs(int(sys.argv[1])) < 10_000_000 else 1)" "$churn" &&
		pass "$py: CHURN line $((churn / 1000)) KB" || fail "$py: CHURN line $churn bytes"
	[ "$peak" -gt 1000000 ] && pass "$py: CHURN Peak Mem $((peak / 1000000)) MB" || fail "$py: CHURN peak $peak"
	"$PYQ" - "$WORK/mem.html" <<'PYEOF' && pass "$py: memory view data" || fail "$py: memory view data"
import json, re, sys
h = open(sys.argv[1]).read()
d = json.loads(re.search(r'id="ls-data">(.*?)</script>', h, re.S).group(1))
mem = d["memory"]
ok = mem and mem["procs"] and all(len(p["t"]) <= 4096 and len(p["t"]) == len(p["rss"]) for p in mem["procs"])
ok = ok and mem["largest"] and d["sources"][mem["largest"]["src"]]["name"] == "memgrow.py" and mem["largest"]["line"] == 11
ok = ok and max(mem["procs"][0]["rss"]) == mem["procs"][0]["peak"]
sys.exit(0 if ok else 1)
PYEOF
done
# without --memory the columns are unavailable, not zero
prof="$WORK/nomem.lsprof"
# (it spins for 0.1 s of CPU: a run too short to be sampled at all has no lines to check)
"$LS" -q --profile "$prof" -o "$WORK/nomem.html" -- "$DEB_PY" -c "import time
x = bytearray(10**7)
t = time.thread_time()
while time.thread_time() - t < 0.1: pass"
j=$(json_of "$prof")
v=$(pyq "$j" 'set(l["mem_change_bytes"] for l in d["lines"])')
[ "$v" = "{None}" ] && pass "no --memory: Mem Change unavailable" || fail "no --memory: $v"
finish
