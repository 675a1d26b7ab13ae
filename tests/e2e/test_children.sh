#!/bin/bash
# SPDX-License-Identifier: MIT
# Descendants: two Python children started through /bin/sh -c exec ... have their own lines, are
# linked to the parent lines that started them, and a non-Python process still counts.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

prof="$WORK/children.lsprof"
LS_TRUTH_DIR="$WORK" "$LS" -q --profile "$prof" -o "$WORK/children.html" -- "$DEB_PY" "$FIX/parent_child.py" ||
	fail "linescope-bpf exited $?"
j=$(json_of "$prof") || fail "report"

n=$(pyq "$j" 'len(d["processes"])')
[ "$n" -eq 3 ] && pass "3 processes" || fail "$n processes, want 3: $(pyq "$j" "[(p['pid'], p['ppid'], p['argv'], p['start_s'], p['end_s']) for p in d['processes']]")"
kids=$(pyq "$j" '" ".join(str(p["pid"]) for p in d["processes"] if "child_work.py" in (p["argv"] or ""))')
set -- $kids
[ $# -eq 2 ] && pass "two child_work.py processes: $kids" || fail "children: '$kids'"
for pid in "$@"; do
	hot=$(pyq "$j" "total('child_work.py', 12, $pid)")
	"$PYQ" -c "import sys; sys.exit(0 if float(sys.argv[1]) > 0.02 else 1)" "$hot" &&
		pass "child $pid has its own hot line (child_work.py:12, ${hot}s)" ||
		fail "child $pid: child_work.py:12 total ${hot}s"
	parent=$(pyq "$j" "[p['parent_pid'] for p in d['processes'] if p['pid'] == $pid][0]")
	root=$(pyq "$j" 'd["processes"][0]["pid"]')
	[ "$parent" = "$root" ] && pass "child $pid's parent is $root" || fail "child $pid parent '$parent'"
done
# each child's CPU in child_loop, against what it measured itself (thread_time)
for k in 1 2; do
	c=$(pyq "$j" "sum(l['cpu_time_s'] for l in lines(None, 'child_work.py') if l['function'] == 'child_loop' and [p for p in d['processes'] if p['pid'] == l['pid'] and p['argv'].endswith(' $k')])")
	used=$(cat "$WORK/child-$k.txt")
	r=$(ratio_within "$c" "$used" 1.0 0.10) && pass "child $k: child_loop CPU ${c}s, used ${used}s" ||
		fail "child $k: child_loop CPU ${c}s, used ${used}s (x$r)"
done
# a child's lines are not counted in the parent
leak=$(pyq "$j" "sum(l['time_s'] for l in lines(d['processes'][0]['pid'], 'child_work.py'))")
[ "$leak" = 0 ] || [ "$leak" = 0.0 ] && pass "no child time in the parent" || fail "parent has child lines ($leak)"
# the lines that started the children, from the HTML report's data
spawn=$("$PYQ" - "$WORK/children.html" <<'PYEOF'
import json, re, sys
h = open(sys.argv[1]).read()
d = json.loads(re.search(r'id="ls-data">(.*?)</script>', h, re.S).group(1))
print(" ".join(sorted("%s:%d" % (d["sources"][c["src"]]["name"], c["line"]) for c in d["children"])))
PYEOF
)
[ "$spawn" = "parent_child.py:12 parent_child.py:13" ] && pass "spawn lines: $spawn" ||
	fail "spawn lines '$spawn', want parent_child.py:12 and :13"

# a job with a non-Python process: its samples count under its command, with the reason
prof="$WORK/native.lsprof"
"$LS" -q --profile "$prof" -o "$WORK/native.html" -- /bin/sh -c \
	"dd if=/dev/zero of=/dev/null bs=4k count=400000 2>/dev/null; exec $DEB_PY $FIX/ratio3.py 5" >/dev/null ||
	fail "native job exited $?"
j=$(json_of "$prof") || fail "report"
dd=$(pyq "$j" '[p for p in d["processes"] if p["comm"] == "dd"][0]')
echo "$dd" | grep -q "'samples': [1-9]" && pass "dd has samples" || fail "dd: $dd"
echo "$dd" | grep -q "not a CPython process" && pass "dd has a note" || fail "dd note: $dd"
py=$(pyq "$j" 'len(lines(None, "ratio3.py"))')
[ "$py" -gt 0 ] && pass "exec'd Python in the same job has lines" || fail "no ratio3.py lines"

# the launched command's exit status is the tool's
"$LS" -q --profile "$prof" -o "$WORK/x.html" -- "$DEB_PY" -c "import sys; sys.exit(3)"
rc=$?
[ $rc -eq 3 ] && pass "exit status 3 propagated" || fail "exit status $rc, want 3"
j=$(json_of "$prof")
st=$(pyq "$j" 'd["run"]["status"] + "/" + d["run"]["status_detail"]')
[ "$st" = "Failed/exit status 3" ] && pass "run status $st" || fail "run status '$st'"
finish
