#!/bin/bash
# SPDX-License-Identifier: MIT
# A real job nobody here wrote: CPython's own regression test runner (libpython3.11-testsuite,
# installed by setup.sh) with two worker processes over a handful of test modules. Every process
# must be named (command line) with its Python version, and every sampled Python process must have
# lines; nothing is lost silently (samples + lost = taken).
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
[ -e /usr/lib/python3.11/test/test_json/__init__.py ] ||
	{ echo "FAIL: libpython3.11-testsuite is not installed (run ./setup.sh)"; exit 1; }

prof="$WORK/regrtest.lsprof"
(cd "$WORK" && "$LS" -q --profile "$prof" -o "$WORK/regrtest.html" -- "$DEB_PY" -m test -j2 \
	test_json test_re test_textwrap test_bisect test_heapq test_string >"$WORK/regrtest.out" 2>&1) ||
	{ fail "the test runner or the profiler failed ($?): $(tail -3 "$WORK/regrtest.out")"; finish; }
j=$(json_of "$prof") || { echo "FAIL: report"; exit 1; }
check_lines < <("$PYQ" - "$j" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
procs = d["processes"]
py = [p for p in procs if p["python"]]
unnamed = [p["pid"] for p in procs if not p["argv"]]
print("%s %d processes, %d of them Python, all with a command line%s" % (
    "ok" if not unnamed and len(py) >= 3 else "FAIL", len(procs), len(py),
    "" if not unnamed else "; unnamed: %s" % unnamed))
nopy = [(p["pid"], p["argv"][:40], p["note"]) for p in procs
        if not p["python"] and "python" in (p["argv"] or "")]
print("%s every python3.11 process has its Python version%s" % (
    "ok" if not nopy else "FAIL", "" if not nopy else ": not %s" % nopy))
with_lines = {l["pid"] for l in d["lines"] if l["samples"]}
dark = [(p["pid"], p["samples"]) for p in py if p["samples"] >= 5 and p["pid"] not in with_lines]
print("%s every sampled Python process has lines%s" % (
    "ok" if not dark else "FAIL", "" if not dark else ": not %s" % dark))
workers = [p for p in py if "worker" in (p["argv"] or "") or "--worker-args" in (p["argv"] or "")]
print("%s %d test workers profiled" % ("ok" if len(workers) >= 2 else "FAIL", len(workers)))
r = d["run"]
print("%s samples %d + lost %d = taken %s" % (
    "ok" if r["samples"] + r["lost"]["total"] == r["taken"] else "FAIL", r["samples"],
    r["lost"]["total"], r["taken"]))
PYEOF
)
finish
