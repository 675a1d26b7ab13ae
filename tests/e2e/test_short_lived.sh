#!/bin/bash
# SPDX-License-Identifier: MIT
# Short-lived processes keep their identity: a parent runs 100 Python children one after another,
# each living 10-30 ms. Every child must have its command line, Python version and exit status
# (named from the kernel's exec record, not /proc), and at least 95% of them samples on their loop
# line. Also: the kernel's count of samples taken equals the samples kept plus those lost.
# Short-lived programs that are not Python (a shell loop running true and cat 200 times each) are
# not counted as samples lost for want of an interpreter: a file seen not to be Python in one
# process settles every other process of it, also those gone before /proc could be read.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

prof="$WORK/short.lsprof"
"$LS" -q --profile "$prof" -o "$WORK/short.html" -- "$DEB_PY" "$FIX/short_lived.py" 100 >"$WORK/kids.txt" ||
	fail "linescope-bpf exited $?"
j=$(json_of "$prof") || { echo "FAIL: report"; exit 1; }
check_lines < <("$PYQ" - "$j" "$WORK/kids.txt" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
kids = [tuple(map(int, l.split())) for l in open(sys.argv[2])]
procs = {p["pid"]: p for p in d["processes"]}
named = on_line = 0
bad = []
for pid, status in kids:
    p = procs.get(pid)
    want_exit = "exit %d" % status if status else "exit 0"
    if p and p["argv"] and "short_lived.py child" in p["argv"] and p["python"] and p["exit"] is not None:
        named += 1
    else:
        bad.append((pid, p and p["argv"], p and p["python"], p and p["exit"]))
    if p and any(l["pid"] == pid and l["function"] == "loop" and l["samples"] > 0 for l in d["lines"]):
        on_line += 1
print("%s %d of %d children named with command line, Python version and exit status%s" % (
    "ok" if named == len(kids) == 100 else "FAIL", named, len(kids),
    "" if not bad else "; not: %s" % bad[:3]))
print("%s %d of %d children have samples on their loop line (want 95%%)" % (
    "ok" if on_line >= 95 else "FAIL", on_line, len(kids)))
exits = {p["pid"]: p["exit"] for p in d["processes"]}
wrong = [(pid, s, exits.get(pid)) for pid, s in kids if s and str(s) not in str(exits.get(pid))]
print("%s exit statuses match the parent's wait(): %d wrong %s" % ("ok" if not wrong else "FAIL", len(wrong), wrong[:3]))
parent = [p for p in d["processes"] if p["argv"] and p["argv"].endswith("short_lived.py 100")]
cg = parent[0]["cgroup_id"] if parent else None
odd = [(pid, procs[pid]["cgroup_id"]) for pid, _ in kids if pid in procs and procs[pid]["cgroup_id"] != cg]
print("%s every child has its cgroup id from the kernel, the parent's (%s)%s" % (
    "ok" if cg is not None and not odd else "FAIL", cg, "" if not odd else ": not %s" % odd[:3]))
r = d["run"]
print("%s samples %d + lost %d = taken %s" % (
    "ok" if r["taken"] is not None and r["samples"] + r["lost"]["total"] == r["taken"] else "FAIL",
    r["samples"], r["lost"]["total"], r["taken"]))
PYEOF
)

prof="$WORK/shell.lsprof"
"$LS" -q -F 999 --profile "$prof" -o "$WORK/shell.html" -- sh -c \
	'for i in $(seq 200); do /bin/true; cat /etc/hostname >/dev/null; done' || fail "shell loop: exit $?"
j=$(json_of "$prof") || { echo "FAIL: report"; exit 1; }
check_lines < <("$PYQ" - "$j" <<'PYEOF'
import json, sys
from collections import Counter
d = json.load(open(sys.argv[1]))
execs = [x for p in d["processes"] for x in p["execs"] if x["how"] == "exec"]
runs = Counter(x["exe"] for x in execs)
print("%s %d runs of true and %d of cat" % (
    "ok" if runs["/usr/bin/true"] + runs["/bin/true"] == 200 and runs["/usr/bin/cat"] == 200 else "FAIL",
    runs["/usr/bin/true"] + runs["/bin/true"], runs["/usr/bin/cat"]))
# a file run 200 times is seen alive at least once: none of its samples is left unresolved; only
# a file run once (seq) may be, when its one process ended before /proc could be read
left = Counter()
for p in d["processes"]:
    for x in p["execs"]:
        left[x["exe"]] += x["unresolved"]
many = {e: n for e, n in left.items() if n and runs[e] >= 20}
total = sum(x["samples"] for p in d["processes"] for x in p["execs"])
print("%s %d of %d samples unresolved, %d of them of a file run 20 times or more %s" % (
    "ok" if not many else "FAIL", sum(left.values()), total, sum(many.values()), many or ""))
r = d["run"]
print("%s lost for want of an interpreter: %d, the images' sum %d" % (
    "ok" if r["lost"]["unresolved"] == sum(left.values()) else "FAIL", r["lost"]["unresolved"],
    sum(left.values())))
PYEOF
)

# a command that ends at once, before the in-kernel aggregates are set up: a clean run, nothing
# on stderr (the first flush once swapped a map it read before the thread making it was done)
"$LS" -q --profile "$WORK/at-once.lsprof" -o "$WORK/at-once.html" -- /bin/true 2>"$WORK/at-once.err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$WORK/at-once.err" ] && pass "a command that ends at once: exit 0, no message" ||
	fail "a command that ends at once: exit $rc, $(head -2 "$WORK/at-once.err")"
finish
