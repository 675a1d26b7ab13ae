#!/bin/bash
# SPDX-License-Identifier: MIT
# Tracing follows the tracer: off before it attaches, on within a flush period of attaching
# (the flush thread reads the USDT semaphore), off again after it detaches; and a process whose
# hook is already taken by another tool reports LINESCOPE_TRACE_UNAVAILABLE (busy) instead.
set -u
cd "$(dirname "$0")/../.."
. tests/bpf/trace_lib.sh

for py in $TRACE_PYTHONS; do
	echo "-- toggle, $py"
	if ! PYTHONPATH=$TRACE_SITE $TRACE_LOADER -o "$tmp/out" --attach-after 700 --detach-after 1500 \
		$(trace_usdt_args) -- "$py" tests/fixtures/trace/toggle.py "$tmp/toggle.json" 4; then
		echo "FAIL: trace_loader"
		fail=1
		continue
	fi
	/usr/bin/python3.11 - "$tmp/toggle.json" "$tmp/out" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
tl = d["timeline"]
ev = {r[1]: float(r[2]) for r in rows if r[0] == "event"}
fails = []
if set(ev) != {"attach", "detach"}:
    sys.exit("FAIL: no attach/detach times from trace_loader: %s" % ev)
# the flush thread looks every 100 ms; allow for a busy machine
slack = 0.5
before = [on for t, on in tl if t < ev["attach"]]
after = [on for t, on in tl if t > ev["detach"] + slack]
ons = [t for t, on in tl if on]
if not before or any(before):
    fails.append("on before the tracer attached")
if not ons or not ev["attach"] <= ons[0] <= ev["attach"] + slack:
    fails.append("did not turn on within %.1f s of attaching: %s vs %.3f"
                 % (slack, ons[:1], ev["attach"]))
if ons and max(ons) > ev["detach"] + slack:
    fails.append("on %.3f s after the tracer detached" % (max(ons) - ev["detach"]))
if not after:
    fails.append("the run ended too soon after detaching to tell")
hits = sum(int(r[6]) for r in rows if r[0] == "line" and r[3].endswith("toggle.py") and r[5] ==
           str(next(i for i, l in enumerate(open("tests/fixtures/trace/toggle.py"), 1)
                    if "@toggle-body" in l)))
if not 0 < hits < d["rounds"] * 2000:
    fails.append("toggle-body hits %d: want some, fewer than %d" % (hits, d["rounds"] * 2000))
if not any(r[0] == "state" and r[2] == "1" for r in rows):
    fails.append("no state ON message")
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
PY
	echo "-- busy, $py"
	if ! PYTHONPATH=$TRACE_SITE $TRACE_LOADER -o "$tmp/out" $(trace_usdt_args) -- \
		"$py" -S tests/fixtures/trace/busy.py "$tmp/busy.json"; then
		echo "FAIL: trace_loader (busy)"
		fail=1
		continue
	fi
	/usr/bin/python3.11 - "$tmp/busy.json" "$tmp/out" <<'PY' || fail=1
import json, sys
st = json.load(open(sys.argv[1]))
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2])]
fails = []
if st["enabled"] or st["reason"] != 1:
    fails.append("in-process state %s, want off with reason 1 (busy)" % st)
# state rows: state 3 = LS_TRACE_UNAVAILABLE, reason 1 = LS_TR_BUSY
if not any(r[0] == "state" and r[2] == "3" and r[3] == "1" for r in rows):
    fails.append("no UNAVAILABLE/BUSY state message: %s" % [r for r in rows if r[0] == "state"])
if any(r[0] in ("line", "calls") for r in rows):
    fails.append("lines counted although tracing was unavailable")
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else 0)
PY
done
exit $fail
