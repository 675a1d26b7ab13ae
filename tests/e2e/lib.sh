# SPDX-License-Identifier: MIT
# Helpers for the end-to-end tests: run the real tool as root against real Python processes and
# query its JSON report. Sourced by tests/e2e/test_*.sh.
set -u
# `... | check_lines` must count its failures here, not in a subshell that forgets them
shopt -s lastpipe
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LS="$ROOT/linescope-bpf"
FIX="$ROOT/tests/fixtures"
DEB_PY=/usr/bin/python3.11
PYENV_PY=/root/.pyenv/versions/3.11.7/bin/python3.11
PYQ=/usr/bin/python3.11 # runs the JSON queries
WORK=$(mktemp -d /tmp/ls-e2e.XXXXXX)
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

pass() {
	echo "ok: $*"
}

# Succeeds when an interpreter exists; a missing one is a broken test machine, not a skip.
need_python() {
	[ -x "$1" ] || { echo "FAIL: interpreter $1 is missing (run ./setup.sh)"; exit 1; }
}

# json PROFILE: writes the report's JSON to $WORK/<name>.json and prints its path
json_of() {
	local out="$WORK/$(basename "$1" .lsprof).json"
	"$LS" report "$1" --format json -o "$out" || return 1
	echo "$out"
}

# pyq JSON_FILE EXPR: evaluates a Python expression with d = the parsed JSON, prints the result
pyq() {
	"$PYQ" - "$1" "$2" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
def lines(pid=None, path_suffix=None):
    return [l for l in d["lines"] if (pid is None or l["pid"] == pid)
            and (path_suffix is None or l["path"].endswith(path_suffix))]
def total(path_suffix, line, pid=None, key="total_time_s"):
    return sum(l[key] for l in lines(pid, path_suffix) if l["line"] == line)
def own(path_suffix, line, pid=None):
    return total(path_suffix, line, pid, "time_s")
print(eval(sys.argv[2]))
PYEOF
}

# ratio_within A B EXPECTED TOL: A/B within EXPECTED*(1 +/- TOL)
ratio_within() {
	"$PYQ" -c "import sys; a,b,e,t=map(float,sys.argv[1:]); r=a/b if b else float('inf'); print('%.3f' % r); sys.exit(0 if abs(r-e) <= e*t else 1)" "$@"
}

# ratio_vs_truth NAME JSON TRUTH SUFFIX: heavy/light as profiled (ratio3.py's call lines) against
# heavy/light as the workload measured its own thread_time in the same run. The tolerance follows
# from the sample counts (3 standard errors of a ratio of two counts) plus 3% for the scheduler
# tick, so a slower or faster CPU changes both sides alike and no nominal 3.0 is assumed.
ratio_vs_truth() {
	"$PYQ" - "$2" "$3" "$4" "$1" <<'PYEOF'
import json, math, sys
d = json.load(open(sys.argv[1])); truth = json.load(open(sys.argv[2])); suffix = sys.argv[3]
def line_of(tag):  # the line that carries "# TAG" in the stored source
    for l in d["lines"]:
        if l["path"].endswith(suffix) and ("# " + tag) in (l["source"] or ""):
            return l["line"]
    return -1
def call(tag, key):
    ln = line_of(tag)
    return sum(l[key] for l in d["lines"] if l["path"].endswith(suffix) and l["line"] == ln)
lt, ht = call("CALL_LIGHT", "total_time_s"), call("CALL_HEAVY", "total_time_s")
hz = d["run"]["frequency_hz"] or 999
nl, nh = max(lt * hz, 1), max(ht * hz, 1)
tol = 3 * math.sqrt(1 / nl + 1 / nh) + 0.03
want = truth["heavy"] / truth["light"]
got = ht / lt if lt else float("inf")
ok = abs(got / want - 1) <= tol
print("%s %s: heavy/light %.3f (%.3fs/%.3fs), measured %.3f (%.3fs/%.3fs), within %.1f%%" % (
    "ok" if ok else "FAIL", sys.argv[4], got, ht, lt, want, truth["heavy"], truth["light"],
    100 * tol))
PYEOF
}

# check_lines: "ok ..." / "FAIL ..." lines from a Python check become pass/fail
check_lines() {
	local st rest n=0
	while read -r st rest; do
		n=$((n + 1))
		[ "$st" = ok ] && pass "$rest" || fail "$rest"
	done
	# a check that printed nothing crashed (its traceback is above): never a silent pass
	[ $n -gt 0 ] || fail "a check printed no result"
}

# wait_log FILE PATTERN: waits (up to 30 s) until FILE has a line matching PATTERN: the tool's own
# word that it is ready, not a guess at how long that takes
wait_log() {
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# explain PROFILE JSON [LOG]: where a run's time went, for a check that failed: what was lost, the
# collector's counters that are not 0, notes, the heaviest lines, and the tool's own -v log
explain() {
	"$PYQ" - "$1" "$2" <<'PYEOF'
import json, sqlite3, sys
d = json.load(open(sys.argv[2]))
print("  lost: %s" % d["run"]["lost"])
st = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True).execute(
    "SELECT key, value FROM stats WHERE value != 0 AND key NOT LIKE 'bpf_run%'").fetchall()
print("  stats: %s" % " ".join("%s=%s" % r for r in st))
for p in d["processes"]:
    print("  pid %s: %s" % (p.get("pid"), {k: v for k, v in p.items() if k in ("python", "note", "samples")}))
for l in sorted(d["lines"], key=lambda l: -l["time_s"])[:6]:
    print("  %s:%d %s time %.3fs cpu %.3fs wait %.3fs" % (l["path"][-40:], l["line"], l["function"],
          l["time_s"], l["cpu_time_s"], l["wait_time_s"]))
PYEOF
	[ -z "${3:-}" ] || sed 's/^/  log: /' "$3"
}

finish() {
	if [ "$failures" -gt 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	exit 0
}
