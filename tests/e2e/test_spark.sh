#!/bin/bash
# SPDX-License-Identifier: MIT
# Spark event logs joined with the profile (docs/spark.md).
#  1. --spark-events DIR while recording fixtures/spark_driver.py, which writes an .inprogress
#     log event by event and renames it at the end: the log is followed as it grows; the action
#     without a call site is matched by time to the line the driver spun on during it, the one
#     with a call site to its line; their driver time agrees with the thread time the driver
#     measured, executor numbers equal the log's, a failed job is listed with its error.
#  2. `report --spark-events` of the real PythonPi log (Spark 3.5.3) with a profile of a driver
#     at the call site's path, /opt/spark/examples/src/main/python/pi.py, put there by a bind
#     mount in a private mount namespace: the action lands on line 42; the log is of another
#     run (2025), so its driver time is unknown, and the report says why.
#  3. The compressed copies of that log (Spark's own codec classes) give the same actions.
#  4. A notebook executed by nbconvert: the call site names the cell's compile name, and the
#     action lands on that cell's line of the notebook.
#  5. A missing path and an unsupported codec are one-line errors with exit 1; the HTML report
#     shows the log's hostile app name as text (tests/report/spark.js covers the view itself).
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"

mkdir -p "$WORK/logs"
"$LS" -q --profile "$WORK/d.lsprof" -o "$WORK/d.html" --spark-events "$WORK/logs" -- \
	"$DEB_PY" "$FIX/spark_driver.py" "$WORK/logs" "$WORK/truth.json" ||
	{ fail "recording the driver exited $?"; finish; }
json_of "$WORK/d.lsprof" >/dev/null || { fail "json report of the driver"; finish; }
"$PYQ" - "$WORK" <<'PYEOF' | check_lines
import glob, json, math, sqlite3, sys
w = sys.argv[1]
d = json.load(open(w + "/d.json"))
t = json.load(open(w + "/truth.json"))
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
s = d["spark"]
say(s and len(s["applications"]) == 1, "one application read from the directory")
app = s["applications"][0]
say(app["id"] == t["app"] and app["name"] == "driver</script><b>x" and app["status"] == "succeeded",
    "application %s %r %s" % (app["id"], app["name"], app["status"]))
say(t["followed_in_progress"] and app["log"].endswith("/" + t["app"]) and app["bad_events"] == 0,
    "followed while it was written, then renamed by its application: %s; no damaged line" % app["log"])
db = sqlite3.connect(w + "/d.lsprof")
stats = dict(db.execute("SELECT key, value FROM stats WHERE key LIKE 'spark%'"))
stored = db.execute("SELECT count(*) FROM spark_events").fetchone()[0]
say(stored == app["events"] == stats["spark_events"] and stats["spark_dropped"] == 0,
    "%d events stored, as counted; none dropped" % stored)
acts = {a["name"]: a for a in s["actions"]}
say(sorted(acts) == ["collect", "count", "save", "toPandas"], "actions %s" % sorted(acts))
period = 1.0 / d["run"]["frequency_hz"]
for name, line, match, executor in (("count", t["count_line"], "time", 0.7),
                                    ("collect", t["collect_line"], "call site", 0.25)):
    a = acts[name]
    say(a["path"] == t["path"] and a["line"] == line and a["match"] == match,
        "%s: %s:%s by %s (expected line %d by %s)" % (name, a["path"], a["line"], a["match"],
                                                       line, match))
    # the driver line's sampled time in the window: at least the CPU time the line measured
    # (its samples), at most the wall time it took (it spun; under load it also waited for a
    # CPU, and waits shorter than a period are not on the timeline). Samples vary as a count
    # does (sd sqrt(n)): 5 sd, +5% and 2 ms for the window's edges (the log's clock is in ms)
    wall, cpu = t[name + "_wall_s"], t[name + "_cpu_s"]
    n = max(cpu / period, 1)
    tol = cpu * (5 / math.sqrt(n) + 0.05) + 0.002
    ds = a["driver_s"]
    say(ds is not None and cpu - tol <= ds <= wall + tol and ds <= a["wall_s"] + 0.002,
        "%s: driver line %.4f s in its %.3f s window; the line took %.4f s CPU, %.4f s wall (tolerance %.4f)" % (
            name, ds or -1, a["wall_s"], cpu, wall, tol))
    say(a["driver_wait_s"] is not None and a["driver_wait_s"] <= 0.02 * wall + 0.002,
        "%s: blocked %s s of it (it spun)" % (name, a["driver_wait_s"]))
    say(abs(a["executor_s"] - executor) < 1e-9 and a["status"] == "succeeded",
        "%s: executor %.3f s from the log's task metrics, never added to the driver's" % (
            name, a["executor_s"]))
a = acts["topandas"] if "topandas" in acts else acts.get("toPandas")
say(a and a["line"] == t["wait_line"] and a["match"] == "call site" and a["driver_wait_s"] is not None
    and abs(a["driver_wait_s"] - t["wait_s"]) <= 0.05 * t["wait_s"] + 0.003
    and abs(a["driver_s"] - a["driver_wait_s"]) <= 0.01,
    "toPandas: the driver was blocked %s s of its %s s on line %s, measured %.4f s" % (
        a and a["driver_wait_s"], a and a["driver_s"], a and a["line"], t["wait_s"]))
c = acts["count"]
say(c["execution"] == 0 and [st["label"] for st in c["steps"]] == ["Generate rows", "Group and summarise"]
    and c["steps"][1]["rows"] == 2000 and c["steps"][1]["from"] == [1],
    "count: plan steps %s" % [(st["label"], st["rows"], st["from"]) for st in c["steps"]])
col = acts["collect"]
say(col["stages"] == 1 and col["skipped_stages"] == 1 and col["tasks"] == 1,
    "collect: 1 stage ran, 1 skipped, 1 task")
sv = acts["save"]
say(sv["status"] == "failed" and sv["error"] == "Job aborted: disk full" and sv["line"] is None
    and sv["match"] is None, "save: failed (%r), its call site names no profiled line" % sv["error"])
say(any("matched by time" in n for n in s["notes"]), "the notes say one action was matched by time")
PYEOF
# the HTML: the app name is data, never markup
grep -q '<b>x' "$WORK/d.html" && fail "the hostile app name is raw in the HTML" ||
	pass "the hostile app name is escaped in the HTML"

# 2. a driver at the PythonPi log's call site path, in a private mount namespace
mkdir -p "$WORK/opt/spark/examples/src/main/python"
cp "$FIX/spark_pi.py" "$WORK/opt/spark/examples/src/main/python/pi.py"
unshare -m --propagation private bash -c '
	mount --bind "$1/opt" /opt &&
	exec "$2" -q --profile "$1/pi.lsprof" -o /dev/null -- "$3" /opt/spark/examples/src/main/python/pi.py "$1/pi.json"
' _ "$WORK" "$LS" "$DEB_PY" || { fail "recording pi.py at the call site's path exited $?"; finish; }
[ -e /opt/spark/examples/src/main/python/pi.py ] && fail "the bind mount leaked out of its namespace"
PI_LOG="$FIX/spark/real/eventlog_v2_spark-bcec39f6201b42b9925124595baad260"
"$LS" report "$WORK/pi.lsprof" --format json --spark-events "$PI_LOG" -o "$WORK/pi-plain.json" ||
	{ fail "report --spark-events exited $?"; finish; }
for c in lz4 snappy zstd; do
	"$LS" report "$WORK/pi.lsprof" --format json --spark-events "$FIX/spark/pi.$c" \
		-o "$WORK/pi-$c.json" || fail "report --spark-events pi.$c exited $?"
done
"$PYQ" - "$WORK" <<'PYEOF' | check_lines
import json, sys
w = sys.argv[1]
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
d = json.load(open(w + "/pi-plain.json"))
t = json.load(open(w + "/pi.json"))
a = d["spark"]["actions"]
say(len(a) == 1 and a[0]["name"] == "reduce", "one action, reduce")
a = a[0]
say(a["path"] == "/opt/spark/examples/src/main/python/pi.py" and a["line"] == 42 and a["match"] == "call site",
    "reduce at %s:%s by %s" % (a["path"], a["line"], a["match"]))
say(a["pid"] == t["pid"], "its process is the driver (pid %s)" % a["pid"])
line = [l for l in d["lines"] if l["path"] == a["path"] and l["line"] == 42]
say(line and line[0]["time_s"] > 0, "line 42 was sampled (%.3f s)" % (line[0]["time_s"] if line else -1))
say(a["driver_s"] is None and any("outside the recording" in n for n in d["spark"]["notes"]),
    "the 2025 log is outside the recording: driver time unknown, and said")
say(abs(a["wall_s"] - 1.541) < 1e-9 and abs(a["executor_s"] - 0.924) < 1e-9 and a["tasks"] == 2,
    "wall 1.541 s, executor 0.924 s, 2 tasks: the log's")
app = d["spark"]["applications"][0]
for c in ("lz4", "snappy", "zstd"):
    try:
        e = json.load(open("%s/pi-%s.json" % (w, c)))["spark"]
    except Exception as ex:
        say(False, "%s: %s" % (c, ex))
        continue
    ea, eb = e["actions"][0], e["applications"][0]
    same = all(ea[k] == a[k] for k in ("name", "path", "line", "match", "wall_s", "executor_s", "tasks"))
    say(same and eb["codec"] == c and eb["events"] == app["events"],
        "%s: the same action from %d events" % (c, eb["events"]))
PYEOF

# 3. a notebook's action: PySpark's call site names the cell's compile name
# (<tmp>/ipykernel_PID/HASH.py); the action lands on that cell's line of the notebook
mkdir -p "$WORK/nb/logs"
/usr/bin/python3 - "$WORK/nb/spark.ipynb" <<'PYEOF' || fail "cannot write the notebook"
import sys
import nbformat
from nbformat.v4 import new_code_cell, new_notebook
cells = [
    "import inspect, json, os, time\n"
    "log = open(os.environ['NB_LOG'], 'w')\n"
    "def ev(**e): log.write(json.dumps(e) + '\\n'); log.flush()\n"
    "ev(Event='SparkListenerLogStart', **{'Spark Version': '3.5.3'})\n"
    "ev(Event='SparkListenerApplicationStart', **{'App Name': 'nb', 'App ID': 'local-nb',"
    " 'Timestamp': int(time.time() * 1000)})",
    "# an action from a cell: the call site PySpark would set\n"
    "t0 = time.thread_time()\n"
    "site = 'collect at %s:%d' % (inspect.currentframe().f_code.co_filename,\n"
    "                             inspect.currentframe().f_lineno + 2)\n"
    "ev(Event='SparkListenerJobStart', **{'Job ID': 0, 'Submission Time': int(time.time() * 1000),"
    " 'Stage IDs': [], 'Properties': {'callSite.short': site}})\n"
    "while time.thread_time() - t0 < 0.3: pass  # NBSITE\n"
    "ev(Event='SparkListenerJobEnd', **{'Job ID': 0, 'Completion Time': int(time.time() * 1000),"
    " 'Job Result': {'Result': 'JobSucceeded'}})\n"
    "ev(Event='SparkListenerApplicationEnd', Timestamp=int(time.time() * 1000))\n"
    "log.close()",
]
nbformat.write(new_notebook(cells=[new_code_cell(c) for c in cells]), sys.argv[1])
PYEOF
(
	export IPYTHONDIR="$WORK/nb/ipython-home" JUPYTER_RUNTIME_DIR="$WORK/nb/runtime"
	cd "$WORK/nb" && NB_LOG="$WORK/nb/logs/local-nb" "$LS" -q --profile "$WORK/nb.lsprof" \
		-o /dev/null --spark-events "$WORK/nb/logs" -- jupyter nbconvert --to notebook \
		--execute spark.ipynb --output out.ipynb 2>"$WORK/nb.log"
) || fail "recording the notebook exited $? ($(tail -2 "$WORK/nb.log"))"
json_of "$WORK/nb.lsprof" >/dev/null || fail "json report of the notebook"
"$PYQ" - "$WORK" <<'PYEOF' | check_lines
import json, sys
w = sys.argv[1]
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
d = json.load(open(w + "/nb.json"))
acts = (d["spark"] or {}).get("actions", [])
say(len(acts) == 1 and acts[0]["match"] == "call site", "one action, by its call site: %s" % [
    (a["name"], a["call_site"], a["match"]) for a in acts])
if acts:
    a = acts[0]
    nb = [f for f in d["files"] if f["kind"] == "notebook"]
    say(nb and a["path"] == nb[0]["path"] and a["path"].endswith("spark.ipynb"),
        "on the notebook %s, not the cell's compile name %s" % (a["path"], a["call_site"]))
    line = [l for l in d["lines"] if l["path"] == a["path"] and l["line"] == a["line"]]
    # "cell" counts in capture order (the first cell may have no sample): the line is the cell's 6th
    say(line and line[0]["cell"] >= 1 and line[0]["cell_line"] == 6 and "# NBSITE" in line[0]["source"],
        "the cell's line 6: %r" % ((line[0]["cell"], line[0]["cell_line"], line[0]["source"]) if line else None,))
    say(a["driver_s"] is not None and a["driver_s"] > 0.1, "the cell line's time in the action: %s s" % a["driver_s"])
PYEOF

# 4. errors: one line, exit 1
out=$("$LS" report "$WORK/pi.lsprof" --format json --spark-events /nonexistent/events 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && pass "a missing log: exit 1, one line ($out)" ||
	fail "a missing log: exit $rc, $out"
printf 'ZV\001' >"$WORK/app-1.lzf"
out=$("$LS" report "$WORK/pi.lsprof" --format json --spark-events "$WORK/app-1.lzf" 2>&1 >/dev/null)
rc=$?
[ $rc = 1 ] && [ "$(echo "$out" | wc -l)" = 1 ] && echo "$out" | grep -q "codec lzf is not supported" &&
	pass "an lzf log: exit 1, one line" || fail "an lzf log: exit $rc, $out"
"$LS" -q --rotate 1 --spark-events "$WORK/logs" -- /bin/true 2>/dev/null
[ $? = 64 ] && pass "--spark-events with --rotate is a usage error" || fail "--spark-events --rotate accepted"
finish
