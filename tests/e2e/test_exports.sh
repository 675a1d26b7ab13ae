#!/bin/bash
# SPDX-License-Identifier: MIT
# report --format pprof | collapsed | speedscope on a real wall-mode profile of four GIL-bound
# threads, each read by the other tool and checked against our own JSON report of the same
# profile: go tool pprof's -top -lines (per-line samples, self and on-CPU time, total time) and
# -traces (whole stacks, root to leaf, as the folded stacks have them), the folded stacks' sums
# (all samples; per leaf line, the JSON's self samples), and the real speedscope app in chromium
# (tests/report/speedscope.js). A damaged profile gives one line and exit 1 in every format.
source "$(dirname "$0")/lib.sh"

need_python "$DEB_PY"
command -v go >/dev/null || { echo "FAIL: go is missing (golang-go; run ./setup.sh)"; exit 1; }
[ -d "$ROOT/tests/report/node_modules/speedscope" ] ||
	{ echo "FAIL: the speedscope npm package is missing (run ./setup.sh)"; exit 1; }
export PPROF_TMPDIR="$WORK" HOME="${HOME:-$WORK}"

prof="$WORK/exports.lsprof"
"$LS" -q --profile "$prof" -o "$WORK/exports.html" -- "$DEB_PY" "$FIX/threads4.py" 2000000 ||
	{ fail "linescope-bpf exited $?"; finish; }
j=$(json_of "$prof") || { fail "json report"; finish; }

# --- pprof ------------------------------------------------------------------------------------
if "$LS" report "$prof" --format pprof -o "$WORK/p.pb.gz"; then
	for idx in samples cpu wall wait gil_wait cpu_wait; do
		go tool pprof -top -lines -nodefraction=0 -sample_index=$idx -unit=ns \
			"$WORK/p.pb.gz" >"$WORK/top.$idx" 2>"$WORK/top.$idx.err" ||
			fail "go tool pprof -top -sample_index=$idx: $(head -1 "$WORK/top.$idx.err")"
	done
	go tool pprof -traces -lines -sample_index=samples "$WORK/p.pb.gz" >"$WORK/traces" \
		2>"$WORK/traces.err" || fail "go tool pprof -traces: $(head -1 "$WORK/traces.err")"
else
	fail "report --format pprof"
fi
"$LS" report "$prof" --format collapsed -o "$WORK/c.folded" || fail "report --format collapsed"
"$LS" report "$prof" --format collapsed --weight time -o "$WORK/t.folded" ||
	fail "report --format collapsed --weight time"
"$LS" report "$prof" --format speedscope -o "$WORK/s.json" || fail "report --format speedscope"

"$PYQ" - "$j" "$WORK" "$prof" <<'PYEOF' | check_lines
import collections, json, re, sqlite3, sys
d = json.load(open(sys.argv[1])); work = sys.argv[2]
db = sqlite3.connect(sys.argv[3])
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)

# JSON lines summed over processes, by (path, line), as pprof's nodes are
js = collections.defaultdict(lambda: collections.Counter())
for l in d["lines"]:
    k = (l["path"], l["line"])
    for f in ("samples", "self_time_s", "total_time_s", "time_s", "cpu_time_s", "own_samples"):
        js[k][f] += l[f] or 0
procs = d["processes"]

# {(path, line): (flat, cum)}, the [native] nodes under their own names, and the total. Lines that
# are two functions' nodes (a 3.11 comprehension and its function) are in `shared`: cum adds up
# each node once per sample, where the JSON's total_time_s counts the line once.
shared = set()
def top(idx):
    rows, total = {}, None
    for t in open("%s/top.%s" % (work, idx)):
        m = re.search(r"Total samples = (\d+)", t)
        if m:
            total = int(m.group(1))
        m = re.match(r"\s*(\d+)(?:ns)?\s+\S+%\s+\S+%\s+(\d+)(?:ns)?\s+\S+%\s+(.*)$", t)
        if not m:
            continue
        flat, cum, where = int(m.group(1)), int(m.group(2)), m.group(3)
        loc = re.match(r"(\S+) (.*):(\d+)$", where)
        key = (loc.group(2), int(loc.group(3))) if loc else where
        if key in rows:
            shared.add(key)
        f0, c0 = rows.get(key, (0, 0))
        rows[key] = (f0 + flat, c0 + cum)
    return rows, total or 0

samples, n_samples = top("samples")
want = sum(p["samples"] for p in procs)
say(n_samples == want, "pprof: %d samples in all, the report's processes %d" % (n_samples, want))
bad = [(k, v[0], js[k]["samples"]) for k, v in samples.items() if isinstance(k, tuple) and v[0] != js[k]["samples"]]
say(not bad, "pprof -top -lines: each line's flat samples are the JSON's samples (%d lines)%s" % (
    len(samples), " differ: %s" % bad[:3] if bad else ""))
native = sum(v[0] for k, v in samples.items() if isinstance(k, str) and k.startswith("[native]"))
want = sum(p["native_samples"] for p in procs)
say(native == want, "pprof: [native] samples %d, the report's native_samples %d" % (native, want))

# times: JSON writes seconds with 9 significant digits
close = lambda a, b: abs(a - b) <= max(2, 2e-8 * max(abs(a), abs(b)))
wall, _ = top("wall")
bad = [(k, v, js[k]["self_time_s"], js[k]["total_time_s"]) for k, v in wall.items() if isinstance(k, tuple)
       and not (close(v[0], js[k]["self_time_s"] * 1e9)
                and (k in shared or close(v[1], js[k]["total_time_s"] * 1e9)))]
say(not bad and wall, "pprof wall: flat = JSON self_time_s, cum = total_time_s on %d lines (%d of two functions: flat only)%s" % (
    len(wall), len(shared), " differ: %s" % bad[:3] if bad else ""))
cpu, cpu_total = top("cpu")
hot = sorted((k for k in js if js[k]["own_samples"] == js[k]["samples"] and js[k]["samples"]
              and close(js[k]["time_s"] * 1e9, js[k]["self_time_s"] * 1e9)), key=lambda k: -js[k]["cpu_time_s"])
for k in hot[:4]:
    got = cpu.get(k, (0, 0))[0]
    say(close(got, js[k]["cpu_time_s"] * 1e9),
        "pprof cpu %s:%d: %d ns, JSON cpu_time_s %.9f" % (k[0].rsplit("/", 1)[-1], k[1], got, js[k]["cpu_time_s"]))
# the report scales a thread's on-CPU samples to its accounted CPU: the same numbers mean the same
scaled = db.execute("SELECT count(*) FROM threads t JOIN (SELECT process_id, tid, sum(weight_ns) w"
                    " FROM samples WHERE kind = 0 GROUP BY 1, 2) s USING (process_id, tid)"
                    " WHERE t.cpu_ns >= 1e8 AND s.w >= 1e8 AND t.cpu_ns BETWEEN s.w / 2 AND s.w * 2"
                    " AND t.cpu_ns != s.w").fetchone()[0]
say(scaled >= 1, "%d threads' on-CPU time scaled to their accounted CPU time" % scaled)
say(len(hot) >= 2, "%d lines whose own time is their self time, to compare on-CPU time on" % len(hot))
for idx, key in (("wait", "wait_s"), ("gil_wait", "gil_wait_s"), ("cpu_wait", "runq_s")):
    _, tot = top(idx)
    want = sum(p[key] for p in procs)
    say(close(tot, want * 1e9), "pprof %s: %d ns in all, the report's processes %.9f s" % (idx, tot, want))
say(sum(p["gil_wait_s"] for p in procs) > 0, "four GIL-bound threads waited for the GIL")

# -traces: whole stacks; leaf first, so read upwards they are the folded stacks, root first
traces, stack, value, labels, unlabelled = collections.Counter(), [], None, {}, 0
def frame(t):
    m = re.match(r"(\S+) (.*):(\d+)$", t)
    if m:
        return "%s (%s:%s)" % m.groups()
    # pprof prints no line for line 0 (a frame before its code's first line, as in a frozen
    # module's import), where the folded stack says ":0"
    m = re.match(r"(\S+) ([</][^:]*)$", t)
    return "%s (%s:0)" % m.groups() if m else t
for t in open(work + "/traces").read().split("\n") + ["-----------+"]:
    if t.startswith("-----------+"):
        if stack:
            traces[";".join(reversed(stack))] += value
            unlabelled += not {"pid", "thread_id", "thread_name", "comm", "cmdline", "host"} <= set(labels)
        stack, value, labels = [], None, {}
        continue
    m = re.match(r"\s*(\w+):\s+(.*)$", t)
    if m and value is None:
        labels[m.group(1)] = m.group(2)
        continue
    m = re.match(r"\s*(\d+)\s{3}(\S.*)$", t)
    if m and value is None:
        value, stack = int(m.group(1)), [frame(m.group(2).strip())]
    elif value is not None and t.strip():
        stack.append(frame(t.strip()))
folded = collections.Counter()
for t in open(work + "/c.folded"):
    s, n = t.rstrip("\n").rsplit(" ", 1)
    folded[s] += int(n)
say(traces == folded, "pprof -traces: %d stacks, every one the folded stack of the same samples%s" % (
    len(traces), "" if traces == folded else " (differ: %s)" % list((traces - folded) + (folded - traces))[:2]))
say(traces and not unlabelled, "pprof -traces: every sample has pid, thread_id, thread_name, comm, cmdline and host labels")
spin = [s for s in traces if s.split(";")[-1].startswith("spin (")]
shape = lambda s: [f.split(" ")[0] for f in s.split(";")]
ok = spin and all(shape(s)[:3] == ["Thread._bootstrap", "Thread._bootstrap_inner", "Thread.run"]
                  and re.fullmatch(r"worker\d", shape(s)[3]) and shape(s)[4:] == ["measured", "spin"] for s in spin)
say(ok, "pprof -traces: root to leaf Thread._bootstrap ... Thread.run;workerN;measured;spin (%d stacks)" % len(spin))

# folded stacks: all the samples; per leaf line, the JSON's self samples
n = sum(folded.values())
want = db.execute("SELECT sum(count) FROM samples WHERE kind = 0").fetchone()[0]
say(n == want == sum(p["samples"] for p in procs), "collapsed: %d samples, the profile's %d" % (n, want))
leaf = collections.Counter()
for s, c in folded.items():
    m = re.match(r"\S+ \((.*):(\d+)\)$", s.split(";")[-1])
    if m:
        leaf[(m.group(1), int(m.group(2)))] += c
bad = [(k, leaf[k], js[k]["samples"]) for k in set(leaf) | set(js) if leaf[k] != js[k]["samples"]]
say(not bad, "collapsed: per leaf line the JSON's self samples (%d lines)%s" % (len(leaf), " differ: %s" % bad[:3] if bad else ""))
tus = collections.Counter()
lines = 0
for t in open(work + "/t.folded"):
    s, us = t.rstrip("\n").rsplit(" ", 1)
    m = re.match(r"\S+ \((.*):(\d+)\)$", s.split(";")[-1])
    if m:
        tus[(m.group(1), int(m.group(2)))] += int(us)
        lines += 1
bad = [(k, tus[k], js[k]["self_time_s"]) for k in js if abs(tus[k] - js[k]["self_time_s"] * 1e6) > 0.5 * lines + 1]
say(not bad, "collapsed --weight time: per leaf line the JSON's self_time_s in us%s" % (" differ: %s" % bad[:3] if bad else ""))
all_us = sum(int(t.rsplit(" ", 1)[1]) for t in open(work + "/t.folded"))
_, wall_total = top("wall")
say(abs(all_us - wall_total / 1e3) <= lines + 1, "collapsed --weight time: %d us in all, pprof's wall total %d ns" % (all_us, wall_total))

# speedscope: all the time, one profile per sampled thread
s = json.load(open(work + "/s.json"))
weights = sum(sum(p["weights"]) for p in s["profiles"])
say(weights == wall_total, "speedscope: %d ns of weights, pprof's wall total %d" % (weights, wall_total))
tids = db.execute("SELECT count(DISTINCT process_id || ':' || tid) FROM samples").fetchone()[0]
say(len(s["profiles"]) == tids, "speedscope: %d profiles for %d threads" % (len(s["profiles"]), tids))
PYEOF

if node "$ROOT/tests/report/speedscope.js" "$WORK/s.json" spin measured worker1 worker2 worker3 \
	worker4 Thread.join >"$WORK/speedscope.log" 2>&1; then
	pass "speedscope app: $(tail -1 "$WORK/speedscope.log")"
else
	fail "speedscope app: $(grep -v '^  ok' "$WORK/speedscope.log" | head -5)"
fi

# --- damaged input: one line, exit 1, never a crash --------------------------------------------
head -c 8192 "$prof" >"$WORK/cut.lsprof"
printf 'SQLite format 3\0%s' "$(head -c 3000 /dev/urandom | base64 -w0)" >"$WORK/junk.lsprof"
for bad in cut junk; do
	for f in pprof collapsed speedscope chrome-trace; do
		"$LS" report "$WORK/$bad.lsprof" --format $f -o "$WORK/out.$f" 2>"$WORK/err"
		rc=$?
		n=$(wc -l <"$WORK/err")
		[ $rc = 1 ] && [ "$n" = 1 ] && [ ! -e "$WORK/out.$f" ] &&
			pass "$bad profile, $f: exit 1, '$(cat "$WORK/err")'" ||
			fail "$bad profile, $f: exit $rc, $n lines: $(head -3 "$WORK/err")"
	done
done
finish
