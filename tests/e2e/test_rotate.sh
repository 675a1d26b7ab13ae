#!/bin/bash
# SPDX-License-Identifier: MIT
# --rotate: a 3.4 s job cut into 1 s profiles. Checked: the names and how many; each a whole
# profile of its own interval (status, elapsed, intervals end to end); no sample lost or counted
# twice at the seams (the samples stored in all of them are exactly the samples the kernel took
# in all of them); the work() CPU of all of them is what the job measured itself (each interval's
# thread CPU is cut at the seam); a write that fails at a seam loses nothing (the interval goes
# on); they merge back into one, the job one process again; --keep 2 leaves the newest two; with
# --push every interval is pushed once, from/until end to end; with --trace the exact hits and
# calls, and with --gpu (the fake driver) the device time, launches and memory peaks, are each
# interval's own and add up to the whole run's; and the usage errors.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
srv=
trap '[ -n "$srv" ] && kill "$srv" 2>/dev/null; [ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"' EXIT

mkdir -p "$WORK/a"
"$LS" -q --rotate 1 --profile "$WORK/a/r.lsprof" -o "$WORK/a/r.html" -- \
	"$DEB_PY" "$FIX/busy_naps.py" "$WORK/a/truth.json" 3.4 || fail "rotated run exited $?"
for f in "$WORK"/a/r-*.lsprof; do json_of "$f" >/dev/null || fail "json report of $f"; done
"$PYQ" - "$WORK/a" "$WORK" <<'PYEOF' | check_lines
import glob, json, math, os, re, sqlite3, sys
d, work = sys.argv[1], sys.argv[2]
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
files = sorted(glob.glob(d + "/r-*.lsprof"))
names = [os.path.basename(f) for f in files]
say(len(files) >= 3 and all(re.fullmatch(r"r-\d{8}T\d{6}Z\.lsprof", n) for n in names),
    "%d interval profiles: %s" % (len(files), ", ".join(names)))
truth = json.load(open(d + "/truth.json"))["cpu_s"]
rows = taken = 0
cpu = 0.0
prev_end = 0
for f in files:
    db = sqlite3.connect(f)
    meta = dict(db.execute("SELECT key, value FROM meta"))
    st = dict(db.execute("SELECT key, value FROM stats"))
    r = db.execute("SELECT COALESCE(SUM(count), 0) FROM samples WHERE kind = 0").fetchone()[0]
    j = json.load(open("%s/%s.json" % (work, os.path.basename(f)[:-7])))
    c = sum(l["cpu_time_s"] or 0 for l in j["lines"] if l["function"] == "work")
    start, el = int(meta["interval_start_ns"]), int(meta["elapsed_ns"])
    say(meta.get("finished") == "1" and meta.get("status") == "Success" and start == prev_end,
        "%s: %s, interval %.3f s + %.3f s, %d samples (%d taken), work() %.3f s CPU" % (
            os.path.basename(f), meta.get("status"), start / 1e9, el / 1e9, r, st["taken"], c))
    prev_end = start + el
    rows += r; taken += st["taken"]; cpu += c
say(rows == taken, "seams: %d samples stored in all, %d taken in all" % (rows, taken))
say(abs(cpu / truth - 1) <= 0.03, "work(): %.4f s CPU in all, measured %.4f s" % (cpu, truth))
PYEOF
# merged back: one process (not one per interval), its samples, thread CPU and work() time the
# intervals' sums
"$LS" merge "$WORK"/a/r-*.lsprof -o "$WORK/a.lsprof" && json_of "$WORK/a.lsprof" >/dev/null ||
	fail "merging the intervals"
"$PYQ" - "$WORK/a" "$WORK" <<'PYEOF' | check_lines
import glob, json, os, sqlite3, sys
d, work = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(d + "/r-*.lsprof"))
m = sqlite3.connect(work + "/a.lsprof")
j = json.load(open(work + "/a.json"))
def one(db, q):
    return db.execute(q).fetchone()[0]
procs = m.execute("SELECT pid, count(*) FROM processes GROUP BY pid").fetchall()
pids = {one(sqlite3.connect(f), "SELECT pid FROM processes WHERE id = 1") for f in files}
samples = sum(one(sqlite3.connect(f), "SELECT COALESCE(SUM(count), 0) FROM samples") for f in files)
cpu = sum(one(sqlite3.connect(f), "SELECT COALESCE(SUM(cpu_ns), 0) FROM threads") for f in files)
work_s = sum(sum(l["cpu_time_s"] or 0 for l in json.load(open("%s/%s.json" % (work, os.path.basename(f)[:-7])))["lines"]
                 if l["function"] == "work") for f in files)
mw = sum(l["cpu_time_s"] or 0 for l in j["lines"] if l["function"] == "work")
wn = sum(sum(l["own_samples"] or 0 for l in json.load(open("%s/%s.json" % (work, os.path.basename(f)[:-7])))["lines"]
             if l["function"] == "work") for f in files)
mn = sum(l["own_samples"] or 0 for l in j["lines"] if l["function"] == "work")
ok = len(pids) == 1 and all(n == 1 for _, n in procs) and len(j["processes"]) == len(procs)
print("%s merged: %d process(es) %s for the job's one pid %s in %d intervals" % ("ok" if ok else "FAIL", len(procs), procs, pids, len(files)))
ms, mc = one(m, "SELECT SUM(count) FROM samples"), one(m, "SELECT SUM(cpu_ns) FROM threads")
print("%s merged: %d samples = %d over the intervals, thread CPU %d ns = %d" % (
    "ok" if ms == samples and mc == cpu else "FAIL", ms, samples, mc, cpu))
# its CPU is the thread's, shared by its samples over the whole run rather than per interval
print("%s merged: work() %d samples = %d, %.4f s CPU against %.4f s over the intervals" % (
    "ok" if mn == wn and abs(mw / work_s - 1) <= 0.01 else "FAIL", mn, wn, mw, work_s))
PYEOF
[ -s "$WORK/a/r.html" ] && grep -q "r-.*\.lsprof" <(ls "$WORK/a") && pass "the report is the last interval's" ||
	fail "no report"

# a write that fails at the seams (the third transaction of every profile): the interval goes on
# into the next, and still nothing is lost, counted twice or left without its thread's CPU time
mkdir -p "$WORK/f"
LINESCOPE_FAULT_STORE=3:2 "$LS" --rotate 1 --profile "$WORK/f/r.lsprof" -o /dev/null -- \
	"$DEB_PY" "$FIX/busy_naps.py" "$WORK/f/truth.json" 3.4 2>"$WORK/f/log" >/dev/null ||
	fail "run with failing writes exited $?"
grep -q "goes on into the next interval" "$WORK/f/log" && pass "a failed seam: $(grep -m1 'goes on' "$WORK/f/log")" ||
	fail "no failed seam reported: $(head -3 "$WORK/f/log")"
for f in "$WORK"/f/r-*.lsprof; do json_of "$f" >/dev/null || fail "json report of $f"; done
"$PYQ" - "$WORK/f" "$WORK" <<'PYEOF' | check_lines
import glob, json, os, sqlite3, sys
d, work = sys.argv[1], sys.argv[2]
rows = taken = nulls = 0
cpu = 0.0
for f in glob.glob(d + "/r-*.lsprof"):
    db = sqlite3.connect(f)
    rows += db.execute("SELECT COALESCE(SUM(count), 0) FROM samples WHERE kind = 0").fetchone()[0]
    taken += dict(db.execute("SELECT key, value FROM stats"))["taken"]
    nulls += db.execute("SELECT count(*) FROM threads WHERE cpu_ns IS NULL").fetchone()[0]
    j = json.load(open("%s/%s.json" % (work, os.path.basename(f)[:-7])))
    cpu += sum(l["cpu_time_s"] or 0 for l in j["lines"] if l["function"] == "work")
truth = json.load(open(d + "/truth.json"))["cpu_s"]
ok = rows == taken and not nulls and abs(cpu / truth - 1) <= 0.03
print("%s failed seams: %d samples stored, %d taken; %d threads without CPU time; work() %.4f s, measured %.4f s" % (
    "ok" if ok else "FAIL", rows, taken, nulls, cpu, truth))
PYEOF

# --keep 2: the newest two
mkdir -p "$WORK/k"
"$LS" -q --rotate 1 --keep 2 --profile "$WORK/k/r.lsprof" -o /dev/null -- \
	"$DEB_PY" "$FIX/busy_naps.py" "$WORK/k/truth.json" 3.4 || fail "--keep run exited $?"
n=$(ls "$WORK"/k/r-*.lsprof 2>/dev/null | wc -l)
[ "$n" = 2 ] && pass "--keep 2: $(cd "$WORK/k" && echo r-*.lsprof)" || fail "--keep 2: $n profiles left"

# --push: each interval once
mkdir -p "$WORK/p"
"$DEB_PY" "$FIX/ingest_server.py" "$WORK/p" ok &
srv=$!
wait_log "$WORK/p/port" "[0-9]" || fail "the ingest stand-in did not start"
"$LS" -q --rotate 1 --push "http://127.0.0.1:$(cat "$WORK/p/port")" --tenant ops --profile "$WORK/p/r.lsprof" -o /dev/null -- \
	"$DEB_PY" "$FIX/busy_naps.py" "$WORK/p/truth.json" 2.4 || fail "--push run exited $?"
kill "$srv"; wait "$srv" 2>/dev/null; srv=
"$PYQ" - "$WORK/p" <<'PYEOF' | check_lines
import glob, json, sys
d = sys.argv[1]
reqs = [json.loads(l) for l in open(d + "/requests.jsonl")]
files = glob.glob(d + "/r-*.lsprof")
spans = sorted((int(r["query"]["from"][0]), int(r["query"]["until"][0])) for r in reqs)
ok = len(reqs) == len(files) and all(a[1] <= b[0] + 1 for a, b in zip(spans, spans[1:])) and \
    all(r["tenant"] == "ops" for r in reqs)
print("%s --push: %d requests for %d interval profiles, spans %s, tenants %s" % (
    "ok" if ok else "FAIL", len(reqs), len(files), spans, sorted({r["tenant"] for r in reqs})))
PYEOF

# --trace: exact hits and calls are cut at the seams too, nothing counted twice
mkdir -p "$WORK/t"
"$LS" -q --trace --rotate 1 --profile "$WORK/t/r.lsprof" -o /dev/null -- \
	"$DEB_PY" "$FIX/trace_ticks.py" 1000 || fail "--trace run exited $?"
for f in "$WORK"/t/r-*.lsprof; do json_of "$f" >/dev/null || fail "json report of $f"; done
"$PYQ" - "$WORK/t" "$WORK" "$FIX/trace_ticks.py" <<'PYEOF' | check_lines
import glob, json, os, sqlite3, sys
d, work, fix = sys.argv[1:4]
tick = next(n for n, t in enumerate(open(fix), 1) if "# TICK" in t)
per = []
for f in sorted(glob.glob(d + "/r-*.lsprof")):
    j = json.load(open("%s/%s.json" % (work, os.path.basename(f)[:-7])))
    hits = sum(l["hits"] or 0 for l in j["lines"] if l["path"].endswith("trace_ticks.py") and l["line"] == tick)
    calls = sum(x["calls"] or 0 for x in j["functions"] if x["function"] == "tick")
    st = dict(sqlite3.connect(f).execute("SELECT key, value FROM stats"))
    per.append((hits, calls, st.get("trace_batches", 0), st.get("trace_lost_batches", 0)))
h, c = sum(p[0] for p in per), sum(p[1] for p in per)
ok = h == 1000 and c == 1000 and sum(1 for p in per if p[0]) >= 2 and not sum(p[3] for p in per)
print("%s --trace: TICK %d hits, tick() %d calls over %d profiles (want 1000 and 1000, in 2 or more; "
      "hits, calls, batches, lost per profile: %s)" % ("ok" if ok else "FAIL", h, c, len(per), per))
PYEOF

# merged back: the hits of one process add up, row by row
"$LS" merge "$WORK"/t/r-*.lsprof -o "$WORK/t.lsprof" || fail "merging the --trace intervals"
n=$(sqlite3 "$WORK/t.lsprof" "SELECT count(*) FROM processes WHERE argv LIKE '%trace_ticks.py%'")
h=$(sqlite3 "$WORK/t.lsprof" "SELECT SUM(t.hits) FROM trace t JOIN functions f ON f.id = t.function_id
	WHERE f.qualname = 'tick' AND t.line = -1")
[ "$n" = 1 ] && [ "$h" = 1000 ] && pass "--trace merged: one process, tick() $h calls" ||
	fail "--trace merged: $n processes, tick() ${h:-no} calls"

# --gpu (the fake driver): each interval has its own device time, launches and memory peak
fake="$ROOT/.output/tests/gpu/fake"
mkdir -p "$WORK/g"
FAKECUDA_LIB="$fake/libcupti.so.13" LD_LIBRARY_PATH="$fake" "$LS" -q --gpu --rotate 1 \
	--profile "$WORK/g/r.lsprof" -o /dev/null -- "$DEB_PY" "$ROOT/tests/gpu/gpu_ticks.py" \
	"$WORK/g/exp.json" 1000 || fail "--gpu run exited $?"
for f in "$WORK"/g/r-*.lsprof; do json_of "$f" >/dev/null || fail "json report of $f"; done
"$PYQ" - "$WORK/g" "$WORK" <<'PYEOF' | check_lines
import glob, json, os, sqlite3, sys
d, work = sys.argv[1:3]
exp = json.load(open(d + "/exp.json"))
per = []
for f in sorted(glob.glob(d + "/r-*.lsprof")):
    j = json.load(open("%s/%s.json" % (work, os.path.basename(f)[:-7])))
    line = sum(l["gpu_time_s"] or 0 for l in j["lines"] if l["line"] == exp["line"] and l["path"].endswith("gpu_ticks.py"))
    db = sqlite3.connect(f)
    launches, gpu_ns, peak = db.execute("SELECT COALESCE(SUM(launches), 0), COALESCE(SUM(gpu_ns), 0), "
                                        "COALESCE(MAX(peak_alloc), 0) FROM gpu_processes").fetchone()
    per.append((round(line, 6), launches, gpu_ns, peak))
line = sum(p[0] for p in per)
ok = abs(line - exp["gpu_ns"] / 1e9) < 1e-6 and sum(p[2] for p in per) == exp["gpu_ns"]
print("%s --gpu: LAUNCH line %.6f s, process %d ns over %d profiles, %d ns launched (line s, launches, "
      "device ns, peak per profile: %s)" % ("ok" if ok else "FAIL", line, sum(p[2] for p in per), len(per),
                                            exp["gpu_ns"], per))
# the kernels and the allocation and free: every launch once
n = sum(p[1] for p in per)
print("%s --gpu: %d launches over all profiles, %d made" % ("ok" if n == exp["kernels"] + 2 else "FAIL", n, exp["kernels"] + 2))
# the 64 MiB is held from before the first launch to after the last: the peak of every interval
# with device time but the last (whose records may come with the free's) is exactly that
busy = [p for p in per if p[2]]
print("%s --gpu: device time in %d profiles, their memory peaks %s (64 MiB held)" % (
    "ok" if len(busy) >= 2 and all(p[3] == exp["alloc"] for p in busy[:-1]) and
            all(p[3] <= exp["alloc"] for p in per) else "FAIL", len(busy), [p[3] for p in per]))
PYEOF

"$LS" merge "$WORK"/g/r-*.lsprof -o "$WORK/g.lsprof" || fail "merging the --gpu intervals"
read -r n l g < <(sqlite3 -separator ' ' "$WORK/g.lsprof" "SELECT count(*), SUM(launches), SUM(gpu_ns) FROM gpu_processes")
[ "$n" = 1 ] && [ "$l" = 1002 ] && [ "$g" = 1000000000 ] &&
	pass "--gpu merged: one GPU process, $l launches, $g ns" || fail "--gpu merged: $n GPU processes, $l launches, $g ns"

for args in "--keep 2" "--rotate 0"; do
	"$LS" $args -- "$DEB_PY" -c pass 2>"$WORK/err"
	rc=$?
	[ $rc = 64 ] && pass "$args: $(cat "$WORK/err")" || fail "$args: exit $rc, $(cat "$WORK/err")"
done
finish
