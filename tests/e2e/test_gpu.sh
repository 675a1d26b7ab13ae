#!/bin/bash
# SPDX-License-Identifier: MIT
# --gpu through the real CLI, without a GPU: the fake CUDA driver and CUPTI (tests/gpu/fake) drive
# the real injection library in a real Python process whose threads launch kernels of known device
# time from known lines (tests/gpu/gpu_app.py). Each launching line must be charged exactly its
# kernels' device time; a native thread's kernels go to the process's "no Python frame" entry; the
# child process (which inherits CUDA_INJECTION64_PATH) has its own line; GPU time is never added
# to Time; the GPU view has its device card. Recorded with --timeline: the Chrome trace has every
# kernel, copy and set on its device stream's track, named and charged to the line that launched
# it, the same device time per line as the totals.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
fake="$ROOT/.output/tests/gpu/fake"
[ -e "$fake/libcupti.so.13" ] || { echo "FAIL: fake CUDA not built (make test builds it)"; exit 1; }
export FAKECUDA_LIB="$fake/libcupti.so.13"
export LD_LIBRARY_PATH="$fake" # the fake libnvidia-ml.so.1

prof="$WORK/gpu.lsprof"
"$LS" -q --gpu --timeline --profile "$prof" -o "$WORK/gpu.html" -- "$DEB_PY" \
	"$ROOT/tests/gpu/gpu_app.py" "$WORK/exp.json" || fail "exit $?"
j=$(json_of "$prof") || { fail "report"; finish; }
out=$("$PYQ" - "$j" "$WORK/exp.json" "$WORK/gpu.html" "$prof" <<'PYEOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
child = json.load(open(sys.argv[2] + ".child"))
def line_gpu(pid, line, key="gpu_time_s"):
    return sum(l[key] or 0 for l in d["lines"] if l["pid"] == pid and l["path"].endswith("gpu_app.py") and l["line"] == line)
for t in exp["threads"].values():
    if not t["line"] or not t["gpu_ns"]:
        continue
    want = t["gpu_ns"] / 1e9
    got = line_gpu(exp["pid"], t["line"])
    ok = abs(got - want) <= 0.01 * want
    print("%s %s line %d: GPU %.4f s (kernels' total %.4f s)" % ("ok" if ok else "FAIL", t["label"], t["line"], got, want))
    # the part a native thread launched while the line waited: exactly the engine's, else none
    want = t["native_ns"] / 1e9
    got = line_gpu(exp["pid"], t["line"], "gpu_native_time_s")
    print("%s %s line %d: launched for it by a native thread %.4f s (want %.4f s)" % (
        "ok" if abs(got - want) <= 0.01 * want + 1e-9 else "FAIL", t["label"], t["line"], got, want))
for line, e in exp["by_line"].items():
    want, got = e["gpu_ns"] / 1e9, line_gpu(exp["pid"], int(line))
    print("%s line %s of a thread launching from two lines in turn: GPU %.4f s (want %.4f s)" % (
        "ok" if abs(got - want) <= 1e-6 * want + 1e-9 else "FAIL", line, got, want))
# three callers of one launching function: the GPU time of the stacks through each caller's line
import sqlite3, struct
db = sqlite3.connect(sys.argv[4])
app = {r[0] for r in db.execute("SELECT f.id FROM functions f JOIN files p ON p.id = f.file_id WHERE p.path LIKE '%gpu_app.py'")}
below = {int(l): 0 for l in exp["callers"]}
for pid_row, frames, g in db.execute("SELECT g.process_id, s.frames, g.gpu_ns FROM gpu g JOIN stacks s ON s.id = g.stack_id"):
    pairs = struct.unpack("<%dI" % (len(frames) // 4), frames)
    for line in below:
        if any(pairs[i] in app and pairs[i + 1] == line for i in range(0, len(pairs), 2)):
            below[line] += g
for line, want in exp["callers"].items():
    got = below[int(line)]
    print("%s caller line %s of one launching function: its stacks' GPU %.4f s (want %.4f s)" % (
        "ok" if got == want else "FAIL", line, got / 1e9, want / 1e9))
c = child["threads"].popitem()[1]
got = line_gpu(child["pid"], c["line"])
print("%s child process line %d: GPU %.4f s (want %.4f)" % ("ok" if abs(got - c["gpu_ns"] / 1e9) < 1e-4 else "FAIL", c["line"], got, c["gpu_ns"] / 1e9))
h = open(sys.argv[3]).read()
r = json.loads(re.search(r'id="ls-data">(.*?)</script>', h, re.S).group(1))
g = r["gpu"]
nopy = [p["no_python_gpu_s"] for p in g["procs"] if r["processes"][p["proc"]]["pid"] == exp["pid"]]
want = exp["native"]["gpu_ns"] / 1e9
print("%s native thread's kernels in the no-Python-frame entry: %s s (want %.3f)" % ("ok" if nopy and abs(nopy[0] - want) < 1e-4 else "FAIL", nopy, want))
print("%s device card: %s" % ("ok" if g["devices"] and g["devices"][0]["name"] else "FAIL", g["devices"][:1]))
sync = [t for t in exp["threads"].values() if t["label"] == "main"]
drv = sum(l["driver_time_s"] or 0 for l in d["lines"] if l["pid"] == exp["pid"] and l["path"].endswith("gpu_app.py") and l["line"] == exp["lines"]["sync"])
print("%s sync line driver time %.3f s (busy %.3f s)" % ("ok" if drv >= exp["sync_busy_ns"] / 1e9 * 0.9 else "FAIL", drv, exp["sync_busy_ns"] / 1e9))
# GPU time is device time: never in Time
fw = [l for l in d["lines"] if l["pid"] == exp["pid"] and l["path"].endswith("gpu_app.py") and l["line"] == exp["lines"]["forward"]][0]
print("%s forward line Time %.4f s excludes its GPU time %.4f s" % ("ok" if fw["time_s"] < fw["gpu_time_s"] else "FAIL", fw["time_s"], fw["gpu_time_s"]))
PYEOF
)
while read -r st rest; do [ "$st" = ok ] && pass "$rest" || fail "$rest"; done <<<"$out"

# the device work on the Chrome trace's GPU tracks, against the workload's own counts
"$LS" report "$prof" --format chrome-trace -o "$WORK/gpu.trace.json" || fail "chrome-trace: exit $?"
"$PYQ" - "$WORK/gpu.trace.json" "$WORK/exp.json" "$prof" <<'PYEOF' | check_lines
import collections, json, re, sqlite3, sys
d = json.load(open(sys.argv[1])); exp = json.load(open(sys.argv[2]))
child = json.load(open(sys.argv[2] + ".child"))
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
ev = d["traceEvents"]
tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"
          and e["args"]["name"].startswith("GPU ")}
gpu = [e for e in ev if e["ph"] == "X" and e.get("cat") == "gpu"]
say(gpu and all((e["pid"], e["tid"]) in tracks for e in gpu),
    "%d device slices, each on a named GPU stream track (%d tracks)" % (len(gpu), len(tracks)))
say(d["otherData"]["gpu_spans"] == len(gpu) and d["otherData"]["gpu_spans_refused"] == 0,
    "otherData: %d spans, none refused" % d["otherData"]["gpu_spans"])
bad = 0
for k in tracks:
    l = sorted((e for e in gpu if (e["pid"], e["tid"]) == k), key=lambda e: e["ts"])
    bad += sum(1 for a, b in zip(l, l[1:]) if b["ts"] < a["ts"] + a["dur"] - 0.001)
say(bad == 0, "slices of a stream never overlap (%d)" % bad)
# per launching line: its kernels' device time and names, as the workload counted them
by_line = collections.defaultdict(float)
names = collections.defaultdict(collections.Counter)
for e in gpu:
    m = re.search(r"gpu_app\.py:(\d+)\)$", e["args"]["launched from"])
    if m:
        key = (e["pid"], int(m.group(1)))
        by_line[key] += e["dur"] * 1e3
        names[key][e["name"]] += e["args"]["records"]
for line, e in exp["by_line"].items():
    got, key = by_line[(exp["pid"], int(line))], (exp["pid"], int(line))
    say(abs(got - e["gpu_ns"]) <= 1e-3 * e["gpu_ns"] + 1000 and dict(names[key]) == e["names"],
        "line %s (launching in turn with another): %.0f ns of slices (want %d), kernels %s" % (
            line, got, e["gpu_ns"], dict(names[key])))
for t in list(exp["threads"].values()) + list(child["threads"].values()):
    if not t["line"] or not t["gpu_ns"] or not t.get("kernels"):
        continue
    pid = child["pid"] if t in child["threads"].values() else exp["pid"]
    got, want = by_line[(pid, t["line"])], t["gpu_ns"]
    say(abs(got - want) <= 1e-3 * want + 1000,
        "%s line %d: %.0f ns of slices, the kernels' %d" % (t.get("label", "?"), t["line"], got, want))
    if t.get("names"):
        say(all(names[(pid, t["line"])][n] == c for n, c in t["names"].items()),
            "%s line %d: kernels %s, launched %s" % (t.get("label", "?"), t["line"], dict(names[(pid, t["line"])]), t["names"]))
# every device nanosecond of the profile's totals is on a track
(want,) = sqlite3.connect(sys.argv[3]).execute("SELECT sum(gpu_ns) FROM gpu").fetchone()
tot = sum(e["dur"] for e in gpu) * 1e3
say(abs(tot - want) <= len(gpu), "all slices: %.0f ns of device time, the profile's total %d" % (tot, want))
PYEOF

# --gpu for a job that never loads the library: the report says so
prof="$WORK/nogpu.lsprof"
"$LS" -q --gpu --profile "$prof" -o "$WORK/nogpu.html" -- "$DEB_PY" -c "pass" || fail "exit $?"
j=$(json_of "$prof")
note=$(pyq "$j" '" ".join(d["run"]["notes"])')
case "$note" in *"no process loaded liblinescope_cupti.so"*) pass "no library loaded: noted" ;; *) fail "note: $note" ;; esac
finish
