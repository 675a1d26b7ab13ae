# SPDX-License-Identifier: MIT
# Helpers for the end-to-end tests: run the real tool as root against real Python processes and
# query its JSON report. Sourced by tests/e2e/test_*.sh.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LS="$ROOT/linescope-bpf"
FIX="$ROOT/tests/fixtures"
DEB_PY=/usr/bin/python3.11
PYENV_PY=/root/.pyenv/versions/3.11.7/bin/python3.11
PYQ=/usr/bin/python3.11 # runs the JSON queries
WORK=$(mktemp -d /tmp/ls-e2e.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
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

finish() {
	if [ "$failures" -gt 0 ]; then
		echo "$failures check(s) failed"
		exit 1
	fi
	exit 0
}
