#!/bin/bash
# SPDX-License-Identifier: MIT
# `merge`: two ranks of a job recorded separately, the second made to look as if it came from
# another host (another name and boot, its monotonic clock 1234.5 s behind), merged into one
# profile. Checked: every line of each input is in the merged report with its own samples and
# time and its host; nothing is counted twice; the second host's times are put on the first's
# clock through the wall clock; each rank's STEP line agrees with the CPU time it measured; the
# text and HTML reports (tests/report/ranks.js in chromium) name hosts and ranks and compare the
# ranks; a merged profile merges again; and the errors.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

for r in 0 1; do
	RANK=$r WORLD_SIZE=2 "$LS" -q --profile "$WORK/r$r.lsprof" -o /dev/null -- \
		"$DEB_PY" "$FIX/rank_work.py" "$WORK/truth$r.json" || { fail "rank $r exited $?"; finish; }
done
# rank 1 "on another host": its name, boot and monotonic clock differ (its times are relative to
# its start, so only the start moves); its wall clock is true
"$PYQ" - "$WORK/r1.lsprof" <<'PYEOF' || { fail "cannot rewrite rank 1's profile"; finish; }
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE meta SET value = 'node-b' WHERE key = 'host'")
db.execute("UPDATE meta SET value = 'another-boot' WHERE key = 'boot_id'")
db.execute("UPDATE meta SET value = value - 1234500000000 WHERE key = 'clock_start_ns'")
db.commit()
PYEOF
"$LS" merge "$WORK/r0.lsprof" "$WORK/r1.lsprof" -o "$WORK/m.lsprof" || { fail "merge exited $?"; finish; }
for p in r0 r1 m; do json_of "$WORK/$p.lsprof" >/dev/null || { fail "json report of $p"; finish; }; done

"$PYQ" - "$WORK" <<'PYEOF' | check_lines
import json, sys
w = sys.argv[1]
d = {k: json.load(open("%s/%s.json" % (w, k))) for k in ("r0", "r1", "m")}
truth = {r: json.load(open("%s/truth%d.json" % (w, r))) for r in (0, 1)}
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
def key(l):
    return (l["host"], l["pid"], l["path"], l["line"], l["function"])
merged = {key(l): l for l in d["m"]["lines"]}
for k in ("r0", "r1"):
    lines = d[k]["lines"]
    same = [l for l in lines if key(l) in merged and merged[key(l)]["samples"] == l["samples"]
            and abs(merged[key(l)]["time_s"] - l["time_s"]) < 1e-9]
    say(len(same) == len(lines) and lines, "%s: %d of its %d lines in the merged profile, same samples and time" % (
        k, len(same), len(lines)))
n = {k: len(d[k]["lines"]) for k in d}
say(n["m"] == n["r0"] + n["r1"], "lines: %d merged = %d + %d" % (n["m"], n["r0"], n["r1"]))
s = {k: d[k]["run"]["samples"] for k in d}
say(s["m"] == s["r0"] + s["r1"], "samples: %d merged = %d + %d" % (s["m"], s["r0"], s["r1"]))
hosts = sorted({p["host"] for p in d["m"]["processes"]})
say(len(hosts) == 2 and "node-b" in hosts, "hosts of the merged processes: %s" % hosts)
# the second host's times, on the first's clock: its wall start minus the first's, plus its own
meta = {}
import sqlite3
for k in ("r0", "r1"):
    meta[k] = dict(sqlite3.connect("%s/%s.lsprof" % (w, k)).execute("SELECT key, value FROM meta"))
off = (int(meta["r1"]["wall_start_ns"]) - int(meta["r0"]["wall_start_ns"])) / 1e9
for p in d["r1"]["processes"]:
    q = next(q for q in d["m"]["processes"] if q["host"] == "node-b" and q["pid"] == p["pid"])
    say(abs(q["start_s"] - (p["start_s"] + off)) < 1e-6 and abs(q["end_s"] - (p["end_s"] + off)) < 1e-6,
        "node-b pid %d: starts at %.6f s of the merged run (its own %.6f s + %.6f s between the starts)" % (
            p["pid"], q["start_s"], p["start_s"], off))
# each rank's STEP line against the CPU time it measured itself
for r in (0, 1):
    t = truth[r]
    l = [l for l in d["m"]["lines"] if l["pid"] == t["pid"] and "# STEP" in (l["source"] or "")]
    # on-CPU only: in wall mode Time also holds its waits for a CPU, which a busy machine adds
    got = sum(x["cpu_time_s"] or 0 for x in l)
    say(abs(got / t["cpu_s"] - 1) <= 0.1, "rank %d: STEP %.3f s, measured %.3f s" % (r, got, t["cpu_s"]))
    p = [p for p in d["m"]["processes"] if p["pid"] == t["pid"] and p["rank"] == r]
    say(len(p) == 1, "rank %d: its process carries its rank" % r)
PYEOF

"$LS" report "$WORK/m.lsprof" --format text >"$WORK/m.txt" || fail "text report exited $?"
grep -q "node-b.*\[rank 1\]" "$WORK/m.txt" && pass "text: the processes name host and rank" ||
	fail "text: no 'node-b [rank 1]' process line: $(grep -A4 Processes: "$WORK/m.txt")"

"$LS" report "$WORK/m.lsprof" -o "$WORK/m.html" || fail "html report exited $?"
if node "$ROOT/tests/report/ranks.js" "$WORK/m.html" "$WORK/m.json" >"$WORK/ranks.log" 2>&1; then
	pass "html in chromium: $(tail -1 "$WORK/ranks.log")"
else
	fail "html in chromium: $(grep -v '^  ok' "$WORK/ranks.log" | head -8)"
fi

# a merged profile merges again: its processes keep their hosts
"$LS" merge "$WORK/m.lsprof" "$WORK/r0.lsprof" -o "$WORK/mm.lsprof" || fail "merge of a merged profile exited $?"
j=$(json_of "$WORK/mm.lsprof") &&
	h=$(pyq "$j" "sorted((p['host'], p['rank']) for p in d['processes'] if p['rank'] is not None)")
[[ "${h:-}" == *"'node-b', 1"* && $(pyq "$j" "len(d['processes'])") -eq 3 ]] &&
	pass "merged again: $h" || fail "merged again: ${h:-no report}"

# errors: one line, exit 1, nothing written
"$LS" -q --mode cpu --profile "$WORK/cpu.lsprof" -o /dev/null -- "$DEB_PY" -c pass || fail "cpu-mode run exited $?"
echo keep >"$WORK/out.lsprof"
for args in "$WORK/r0.lsprof $WORK/cpu.lsprof" "$WORK/r0.lsprof $WORK/nothere.lsprof" \
	"$WORK/r0.lsprof $WORK/r0.json" "$WORK/r0.lsprof $WORK/out.lsprof"; do
	"$LS" merge $args -o "$WORK/out.lsprof" 2>"$WORK/err.txt"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l <"$WORK/err.txt")" = 1 ] && [ "$(cat "$WORK/out.lsprof")" = keep ] &&
		pass "merge ${args//$WORK\//}: $(cat "$WORK/err.txt")" ||
		fail "merge ${args//$WORK\//}: exit $rc, $(cat "$WORK/err.txt"), out: $(head -c 20 "$WORK/out.lsprof")"
done
"$LS" merge "$WORK/r0.lsprof" 2>"$WORK/err.txt"
[ $? = 64 ] && pass "merge without -o: $(cat "$WORK/err.txt")" || fail "merge without -o: $(cat "$WORK/err.txt")"
finish
