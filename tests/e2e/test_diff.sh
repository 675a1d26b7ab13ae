#!/bin/bash
# SPDX-License-Identifier: MIT
# report NEW --diff BASE on two real recordings of two versions of one program
# (tests/fixtures/diff_app.py): version 2 moves every line down, does four times the work in
# light(), edits heavy()'s loop body and runs new_only() instead of base_only(). Checked: how each
# line was matched, that every change is the difference of the two profiles' own JSON reports,
# that light()'s change agrees with the thread CPU time the program measured in both runs (within
# what the sample counts allow), the text and HTML forms (tests/report/diff.js in chromium), and
# the errors.
source "$(dirname "$0")/lib.sh"

need_python "$DEB_PY"
app="$WORK/app.py"
for v in 1 2; do
	"$LS" -q --mode cpu --profile "$WORK/v$v.lsprof" -o /dev/null -- \
		"$DEB_PY" "$FIX/diff_app.py" $v "$WORK/truth$v.json" "$app" ||
		{ fail "recording version $v exited $?"; finish; }
	json_of "$WORK/v$v.lsprof" >/dev/null || { fail "json report of version $v"; finish; }
	cp "$app" "$WORK/app$v.py"
done
"$LS" report "$WORK/v2.lsprof" --diff "$WORK/v1.lsprof" --format json -o "$WORK/diff.json" ||
	{ fail "report --diff --format json exited $?"; finish; }

"$PYQ" - "$WORK" "$app" <<'PYEOF' | check_lines
import collections, json, math, sys
work, app = sys.argv[1:]
d = json.load(open(work + "/diff.json"))
v = {k: json.load(open("%s/v%d.json" % (work, k))) for k in (1, 2)}
truth = {k: json.load(open("%s/truth%d.json" % (work, k))) for k in (1, 2)}
src = {k: open("%s/app%d.py" % (work, k)).read().split("\n") for k in (1, 2)}
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
def tagged(k, tag):  # 1-based line of "# TAG" in version k
    return next(i + 1 for i, t in enumerate(src[k]) if "# " + tag in t)
def row(tag):
    ln = tagged(2, tag)
    return next((r for r in d["lines"] if r["path"] == app and r["line"] == ln), None)

shift = tagged(2, "LIGHT_BODY") - tagged(1, "LIGHT_BODY")
say(shift > 0, "version 2 moves the lines down by %d" % shift)
for tag, how in (("LIGHT_BODY", "moved"), ("LIGHT_LOOP", "moved"), ("HEAVY_LOOP", "moved"),
                 ("HEAVY_BODY", "edited"), ("NEW_ONLY", "new")):
    r = row(tag)
    want_base = None if how == "new" else tagged(1, tag)
    say(r is not None and r["match"] == how and r["base_line"] == want_base,
        "%s: %s, base line %s (want %s, %s)" % (tag, r and r["match"], r and r["base_line"],
                                                how, want_base))
gone = [r for r in d["lines"] if r["match"] == "gone" and r["path"] == app]
say(any(r["base_line"] == tagged(1, "BASE_ONLY") and r["line"] is None for r in gone),
    "base_only()'s loop is only in the base (line %d)" % tagged(1, "BASE_ONLY"))
body = row("LIGHT_BODY")
say(body and body["source"] == body["base_source"] and "LIGHT_BODY" in body["source"],
    "a moved line has the same text on both sides")
hb = row("HEAVY_BODY")
say(hb and "i * 5" in hb["source"] and "i * 3" in hb["base_source"],
    "an edited line carries both texts")

# every row is the difference of the two profiles' own reports, summed over processes
def sums(k, key):
    s = collections.Counter()
    for l in v[k]["lines"]:
        s[key(l)] += l["time_s"]
    return s
n1 = sums(1, lambda l: (l["path"], l["line"]))
n2 = sums(2, lambda l: (l["path"], l["line"]))
bad = 0
for r in d["lines"]:
    t = n2.get((r["path"], r["line"]), 0) if r["line"] is not None else 0
    b = n1.get((r["path"], r["base_line"]), 0) if r["base_line"] is not None else 0
    if abs(r["time_s"] - t) > 1e-6 or abs(r["base_time_s"] - b) > 1e-6 or \
       abs(r["delta_time_s"] - (t - b)) > 1e-6:
        bad += 1
say(bad == 0 and d["lines"], "%d line rows, %d differ from the two JSON reports" % (len(d["lines"]), bad))
tot = [sum(l["time_s"] for l in v[k]["lines"]) for k in (1, 2)]
say(abs(d["diff"]["time_s"] - tot[1]) < 1e-6 and abs(d["diff"]["base_time_s"] - tot[0]) < 1e-6,
    "totals %.3f s and %.3f s are the reports' (%.3f, %.3f)" % (d["diff"]["time_s"],
                                                                d["diff"]["base_time_s"], tot[1], tot[0]))
for key in ("lines", "functions", "files"):
    ds = [r["delta_time_s"] for r in d[key]]
    say(ds == sorted(ds, reverse=True), "%s are ordered by change, largest regression first" % key)

# light(): its change against the change in the thread CPU time the program measured for it.
# Tolerance: 3 standard errors of the two sample counts, plus 3% of the two for the tick.
fn = {f["function"]: f for f in d["functions"] if f["path"] == app}
light = fn.get("light")
hz = d["run"]["frequency_hz"]
want = truth[2]["light"] - truth[1]["light"]
if light:
    tol = 3 * math.sqrt(light["samples"] + light["base_samples"]) / hz + \
        0.03 * (truth[1]["light"] + truth[2]["light"])
    say(abs(light["delta_time_s"] - want) <= tol,
        "light(): %+.3f s, measured %+.3f s (%.3f -> %.3f), within %.3f s" % (
            light["delta_time_s"], want, truth[1]["light"], truth[2]["light"], tol))
else:
    say(False, "no function row for light()")
say("new_only" in fn and fn["new_only"]["match"] == "new" and fn["new_only"]["base_time_s"] == 0,
    "new_only() is new")
say("base_only" in fn and fn["base_only"]["match"] == "gone" and fn["base_only"]["time_s"] == 0,
    "base_only() is gone")
say(d["diff"]["notes"] == [], "same mode and rate: no notes (%s)" % d["diff"]["notes"])
PYEOF

# --- text: regressions first ------------------------------------------------------------------
"$LS" report "$WORK/v2.lsprof" --diff "$WORK/v1.lsprof" --format text --top 5 >"$WORK/diff.txt" ||
	fail "report --diff --format text exited $?"
first=$(sed -n '/^# Lines that got slower/{n;n;p;q}' "$WORK/diff.txt")
[[ "$first" == *"+"*light* ]] && pass "text: first regression is in light(): $first" ||
	fail "text: first regression: '$first'"
grep -q '^# Base: .*v1.lsprof' "$WORK/diff.txt" && pass "text names the base" ||
	fail "text does not name the base"

# --- the same profile against itself: nothing changed ---------------------------------------
"$LS" report "$WORK/v2.lsprof" --diff "$WORK/v2.lsprof" --format json -o "$WORK/self.json" &&
	"$PYQ" -c "
import json, sys
d = json.load(open(sys.argv[1]))
m = d['diff']['matching']
ok = all(r['delta_time_s'] == 0 for k in ('lines', 'functions', 'files') for r in d[k])
print(('ok ' if ok and m['new'] == m['gone'] == m['moved'] == 0 else 'FAIL ') +
      'a profile against itself: all %d lines same, no change' % m['same'])" "$WORK/self.json" |
	check_lines || fail "report --diff of a profile with itself"

# --- HTML, in chromium -------------------------------------------------------------------------
if "$LS" report "$WORK/v2.lsprof" --diff "$WORK/v1.lsprof" -o "$WORK/diff.html"; then
	if node "$ROOT/tests/report/diff.js" "$WORK/diff.html" "$WORK/diff.json" >"$WORK/diff.log" 2>&1; then
		pass "html in chromium: $(tail -1 "$WORK/diff.log")"
	else
		fail "html in chromium: $(grep -v '^  ok' "$WORK/diff.log" | head -8)"
	fi
else
	fail "report --diff (html) exited $?"
fi

# --- errors: one line and a non-zero exit -------------------------------------------------------
expect_error() { # RC COMMAND...: exits with RC and says one line
	local want=$1
	shift
	"$@" >"$WORK/out" 2>"$WORK/err"
	local rc=$? n
	n=$(wc -l <"$WORK/err")
	[ $rc = "$want" ] && [ "$n" = 1 ] && pass "exit $rc: $(cat "$WORK/err")" ||
		fail "'$*': exit $rc (want $want), $n lines: $(head -3 "$WORK/err")"
}
expect_error 1 "$LS" report "$WORK/v2.lsprof" --diff "$WORK/missing.lsprof" --format text
expect_error 64 "$LS" report "$WORK/v2.lsprof" --diff "$WORK/v1.lsprof" --format pprof
expect_error 1 "$LS" report "$WORK/v2.lsprof" --diff "$WORK/v1.lsprof" -o "$WORK/v1.lsprof"
head -c 8192 "$WORK/v1.lsprof" >"$WORK/cut.lsprof"
expect_error 1 "$LS" report "$WORK/v2.lsprof" --diff "$WORK/cut.lsprof" --format json
finish
