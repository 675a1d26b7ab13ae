#!/bin/bash
# SPDX-License-Identifier: MIT
# Processes that ended before their records were read (a loaded machine reads a short process's
# records seconds late): the collector is stopped while ten children run and are reaped, then let
# go. Files the job writes are the synchronisation.
# 1. Debian's python3.11, children as nobody: each child's own line carries its source text, read
#    with its rights at its exit from the kernel's record of it; code it compiled under the name
#    of a file only root may read brings that file's text nowhere.
# 2. pyenv's shared build (libpython mapped after the exec, so the exec cannot resolve it): each
#    child has its lines, its interpreter found by the probe on its start, not by /proc.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
need_python "$PYENV_PY"

# job NAME PYTHON [self]: runs the job with the collector stopped meanwhile; $d is its directory
job() {
	local name=$1 py=$2 pid jpid
	d="$WORK/$name"
	mkdir -p "$d/secret"
	chmod 755 "$WORK" "$d" # the children (nobody) read their script here
	chmod 700 "$d/secret"
	cp "$FIX/ended_sources.py" "$d/"
	echo "SECRET_MARKER_5e8f = 1" >"$d/secret/secret.py"
	chmod 600 "$d/secret/secret.py"
	"$LS" -q -F 999 --profile "$WORK/$name.lsprof" -o "$WORK/$name.html" -- "$py" \
		"$d/ended_sources.py" "$d" 10 ${3:+"$3"} &
	pid=$!
	while [ ! -e "$d/ready" ]; do
		kill -0 "$pid" 2>/dev/null || { fail "$name: the job never started"; return 1; }
		sleep 0.02
	done
	jpid=$(cat "$d/ready")
	kill -STOP "$pid"
	touch "$d/go"
	# the tool is stopped: it cannot end, only the job can
	while [ ! -e "$d/done" ] && kill -0 "$jpid" 2>/dev/null; do sleep 0.02; done
	[ -e "$d/done" ] || fail "$name: the job ended without its children"
	kill -CONT "$pid"
	wait "$pid" || { fail "$name: linescope-bpf exited $?"; return 1; }
}

# burns NAME: every child has samples on its BURN line, with the line's source text
burns() {
	local j
	j=$(json_of "$WORK/$1.lsprof") || { fail "$1: report"; return 1; }
	"$PYQ" - "$j" "$d/kids" "$d/ended_sources.py" "$1" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1]))
kids = [int(l) for l in open(sys.argv[2])]
script, name = sys.argv[3], sys.argv[4]
bad = []
for k in kids:
    if not [l for l in d["lines"] if l["pid"] == k and l["path"] == script and l["samples"] > 0
            and "# BURN" in (l["source"] or "")]:
        bad.append((k, [p["execs"][-1].get("note") for p in d["processes"] if p["pid"] == k],
                    [(f["path"], f["unavailable"]) for f in d["files"] if f["pid"] == k][:2]))
print("%s %s: %d of %d ended children have their BURN line with its source text%s" % (
    "ok" if not bad and len(kids) == 10 else "FAIL", name, len(kids) - len(bad), len(kids),
    "" if not bad else ": %s" % bad[:2]))
PYEOF
}

job rights "$DEB_PY" && burns rights && {
	"$PYQ" - "$WORK/rights.json" "$d/kids" "$d/secret/secret.py" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1]))
kids = [int(l) for l in open(sys.argv[2])]
hidden = 0
for k in kids:
    files = [f for f in d["files"] if f["pid"] == k and f["path"] == sys.argv[3]]
    hidden += bool(files) and all(f["unavailable"] and "unreadable" in f["unavailable"] for f in files)
print("%s %d of %d children's root-only file is unreadable with their rights" % (
    "ok" if hidden == len(kids) else "FAIL", hidden, len(kids)))
PYEOF
	if grep -qa SECRET_MARKER_5e8f "$WORK/rights.lsprof" "$WORK/rights.html" "$WORK/rights.json"; then
		fail "the root-only file's text is in the profile or the report"
	else
		pass "the root-only file's text is nowhere in the profile or the report"
	fi
}

job shared "$PYENV_PY" self && burns shared
finish
