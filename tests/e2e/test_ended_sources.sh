#!/bin/bash
# SPDX-License-Identifier: MIT
# Sources of processes that ended before their records were read (a loaded machine reads a short
# process's records seconds late): the collector is stopped while ten children run as nobody and
# are reaped, then let go. Each child's own line must carry its source text, read with its rights
# at its exit from the kernel's record of it; and code it compiled under the name of a file only
# root may read must not bring that file's text into the profile or the report.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

d="$WORK/job"
mkdir -p "$d/secret"
chmod 755 "$WORK" "$d" # the children (nobody) read their script here
chmod 700 "$d/secret"
cp "$FIX/ended_sources.py" "$d/"
echo "SECRET_MARKER_5e8f = 1" >"$d/secret/secret.py"
chmod 600 "$d/secret/secret.py"

prof="$WORK/ended.lsprof"
"$LS" -q -F 999 --profile "$prof" -o "$WORK/ended.html" -- "$DEB_PY" "$d/ended_sources.py" "$d" 10 &
ls_pid=$!
waited() { # waited FILE: until the job writes it, or the tool ends
	while [ ! -e "$1" ]; do
		kill -0 "$ls_pid" 2>/dev/null || return 1
		sleep 0.02
	done
}
waited "$d/ready" || fail "the job never started"
kill -STOP "$ls_pid"
touch "$d/go"
# the tool is stopped: it cannot end, only the job can
while [ ! -e "$d/done" ] && [ -n "$(pgrep -f "ended_sources.py $d")" ]; do sleep 0.02; done
[ -e "$d/done" ] || fail "the job ended without its children"
kill -CONT "$ls_pid"
wait "$ls_pid" || fail "linescope-bpf exited $?"

j=$(json_of "$prof") || { echo "FAIL: report"; exit 1; }
"$PYQ" - "$j" "$d/kids" "$d/ended_sources.py" "$d/secret/secret.py" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1]))
kids = [int(l) for l in open(sys.argv[2])]
script, secret = sys.argv[3], sys.argv[4]
own = hidden = 0
bad = []
for k in kids:
    burn = [l for l in d["lines"] if l["pid"] == k and l["path"] == script and l["samples"] > 0
            and "# BURN" in (l["source"] or "")]
    own += bool(burn)
    if not burn:
        bad.append((k, [(f["path"], f["unavailable"]) for f in d["files"] if f["pid"] == k][:3]))
    files = [f for f in d["files"] if f["pid"] == k and f["path"] == secret]
    hidden += bool(files) and all(f["unavailable"] and "unreadable" in f["unavailable"] for f in files)
print("%s %d of %d ended children have their BURN line with its source text%s" % (
    "ok" if own == len(kids) == 10 else "FAIL", own, len(kids), "" if not bad else ": %s" % bad[:2]))
print("%s %d of %d children's root-only file is unreadable with their rights" % (
    "ok" if hidden == len(kids) else "FAIL", hidden, len(kids)))
PYEOF
if grep -qa SECRET_MARKER_5e8f "$prof" "$WORK/ended.html" "$j"; then
	fail "the root-only file's text is in the profile or the report"
else
	pass "the root-only file's text is nowhere in the profile or the report"
fi
finish
