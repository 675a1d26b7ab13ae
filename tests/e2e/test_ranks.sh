#!/bin/bash
# SPDX-License-Identifier: MIT
# Each process's rank in a distributed job, read from its environment with its own rights: a
# torchrun-like launcher (tests/fixtures/ranks.py) starts two workers with RANK, LOCAL_RANK,
# WORLD_SIZE and MASTER_ADDR, and one whose RANK is not a number. The JSON's and the HTML
# report's processes carry their rank and the host; the launcher and the hostile one have none;
# pprof labels each worker's samples with its rank (go tool pprof -tags).
source "$(dirname "$0")/lib.sh"

need_python "$DEB_PY"
command -v go >/dev/null || { echo "FAIL: go is missing (golang-go; run ./setup.sh)"; exit 1; }
export PPROF_TMPDIR="$WORK" HOME="${HOME:-$WORK}"
prof="$WORK/ranks.lsprof"
env -u RANK -u LOCAL_RANK -u WORLD_SIZE -u MASTER_ADDR "$LS" -q --mode cpu --profile "$prof" \
	-o "$WORK/ranks.html" -- "$DEB_PY" "$FIX/ranks.py" || { fail "linescope-bpf exited $?"; finish; }
j=$(json_of "$prof") || { fail "json report"; finish; }
"$PYQ" - "$j" "$WORK/ranks.html" <<'PYEOF' | check_lines
import json, re, socket, sys
d = json.load(open(sys.argv[1]))
h = json.loads(re.search(r'id="ls-data">(.*?)</script>', open(sys.argv[2]).read(), re.S).group(1))
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
procs = [p for p in d["processes"] if "ranks.py" in (p["argv"] or "")]
workers = sorted((p for p in procs if p["argv"].endswith(" work")), key=lambda p: p["pid"])
launcher = [p for p in procs if not p["argv"].endswith(" work")]
got = sorted(((p["rank"], p["local_rank"], p["world_size"], p["master_addr"]) for p in workers),
             key=lambda t: -1 if t[0] is None else t[0])
say(got == [(None, None, None, None), (0, 0, 2, "127.0.0.1"), (1, 1, 2, "127.0.0.1")],
    "workers' ranks (one with RANK=0x1): %s" % got)
say(len(launcher) == 1 and launcher[0]["rank"] is None and launcher[0]["world_size"] is None,
    "the launcher has no rank: %s" % [(p["rank"], p["world_size"]) for p in launcher])
say(sorted(p["rank"] for p in h["processes"] if p["rank"] is not None) == [0, 1],
    "the HTML report's processes carry the ranks (its process selector names them)")
say(all(p["host"] == d["run"].get("host", socket.gethostname()) for p in procs),
    "every process names its host: %s" % sorted(set(p["host"] for p in procs)))
PYEOF
"$LS" report "$prof" --format pprof -o "$WORK/r.pb.gz" || fail "report --format pprof"
go tool pprof -tags "$WORK/r.pb.gz" >"$WORK/tags" 2>"$WORK/tags.err" ||
	fail "go tool pprof -tags: $(head -1 "$WORK/tags.err")"
# "rank: Total 412" then one line per value: "   210 (50.97%): 0"
ranks=$(awk '/^ *rank:/ {on = 1; next} on && /^ *[a-z_]+:/ {on = 0} on && /%\)/ {print $NF}' \
	"$WORK/tags" | sort | tr '\n' ' ')
[ "$ranks" = "0 1 " ] && pass "pprof: samples labelled rank 0 and 1" ||
	fail "pprof rank labels: '$ranks' ($(grep -A3 rank: "$WORK/tags" | head -4 | tr '\n' ' '))"
finish
