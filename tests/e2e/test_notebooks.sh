#!/bin/bash
# SPDX-License-Identifier: MIT
# Notebooks executed by `jupyter nbconvert --execute` under the profiler: the sampled cells become
# one notebook source whose cells are the notebook's own text (verified by the hash in each cell's
# name), found in the notebook file or in the kernel's history database; the hot cell's loop line
# gets its share of the samples against the thread CPU the notebook measured itself; a cell that
# is in no notebook (run_cell) is marked, never guessed; a symlinked history database and a
# notebook that stops being JSON are notes, not failures; a kernel without a notebook (its history
# database), an IPython shell (<ipython-input-N-HASH> cells from its history) and a Jupyter
# server's kernel (the notebook from the server's sessions API); %run of
# a child notebook; a cell edited and run again (revisions); the HTML report in chromium
# (tests/report/notebook.js).
source "$(dirname "$0")/lib.sh"
NBPY=/usr/bin/python3
# --trace loads python-usdt into the kernels. A sanitizer build of it brings libasan with it, and
# loaded late, ASan takes frees of what libzmq's C++ allocated before it came for bad frees: in
# those runs it is loaded first (TRACE_PRELOAD, empty in a plain build)
TRACE_PRELOAD=$(ldd "$ROOT"/.output/python-usdt/site/linescope_usdt*.so 2>/dev/null |
	awk '/libasan/ {print $3; exit}')
for m in nbformat nbconvert nbclient ipykernel; do
	"$NBPY" -c "import $m" 2>/dev/null ||
		{ echo "FAIL: python module $m is missing (run ./setup.sh)"; exit 1; }
done
command -v jupyter >/dev/null || { echo "FAIL: jupyter is missing (run ./setup.sh)"; exit 1; }
"$NBPY" "$FIX/make_notebooks.py" "$WORK" || { echo "FAIL: cannot write the notebooks"; exit 1; }
# kernels' profiles and connection files stay in $WORK, not in the invoking user's home
export IPYTHONDIR="$WORK/ipython-home" JUPYTER_RUNTIME_DIR="$WORK/runtime"
cd "$WORK" || exit 1

# run NAME NOTEBOOK [NBCONVERT ARGS]: profiles the notebook's execution, leaves $WORK/NAME.json (the
# --format json report) and $WORK/NAME.data.json (the HTML report's data)
run() {
	local name=$1 nb=$2
	shift 2
	# shellcheck disable=SC2086 # LS_ARGS: more options, word-split on purpose
	NB_TRUTH="$WORK/$name.truth" "$LS" -q ${LS_ARGS:-} --profile "$WORK/$name.lsprof" -o "$WORK/$name.html" -- \
		jupyter nbconvert --to notebook --execute "$nb" --output "$WORK/$name.out.ipynb" "$@" \
		2>"$WORK/$name.log" || { fail "$name: exit $? ($(tail -3 "$WORK/$name.log"))"; return 1; }
	"$LS" report "$WORK/$name.lsprof" --format json -o "$WORK/$name.json" ||
		{ fail "$name: report"; return 1; }
	"$PYQ" - "$WORK/$name.html" "$WORK/$name.data.json" <<'PYEOF'
import re, sys
html = open(sys.argv[1]).read()
m = re.search(r'<script type="application/json" id="ls-data">(.*?)</script>', html, re.S)
open(sys.argv[2], "w").write(m.group(1))
PYEOF
}

# check NAME NOTEBOOK FOUND: the notebook source, its cells and lines against the .ipynb
check() {
	"$PYQ" - "$WORK/$1.json" "$WORK/$1.data.json" "$WORK/$2" "$3" "$WORK/$1.truth" <<'PYEOF' |
import json, math, os, sys
j, data, nbpath, found = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
nb = json.load(open(nbpath))
code = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in nb["cells"] if c["cell_type"] == "code"]
def say(ok, what):
    print(("ok " if ok else "FAIL ") + what)
srcs = [s for s in data["sources"] if s["kind"] == "notebook"]
say(len(srcs) == 1 and srcs[0]["path"] == nbpath,
    "one notebook source named %s: %s" % (nbpath, [s["path"] for s in srcs]))
if not srcs:
    sys.exit()
src = srcs[0]
text = src["text"].split("\n")
say(len(text) == src["nlines"], "nlines %d of %d text lines" % (src["nlines"], len(text)))
verified = [c for c in src["cells"] if c["found"]]
for c in src["cells"]:
    body = "\n".join(text[c["first"] - 1:c["first"] - 1 + c["nlines"]])
    if c["found"]:
        k = c["number"]
        # a cell whose history row was not written yet when it was first sampled: the notebook
        say(c["found"] in (found, "notebook") and c["label"] == "Cell %d" % k and code[k - 1].rstrip("\n") == body,
            "%s (found in %s) is code cell %d of the notebook" % (c["label"], c["found"], k))
    else:
        say(c["unavailable"] and "hashes to its name" in c["unavailable"] and body.strip() == "",
            "%s is marked, with no text: %s" % (c["label"], c["unavailable"]))
# with a history database beside the notebook, a cell sampled before IPython's history thread
# wrote its row is found in the notebook: which one wins is a race (the caller checks the read)
say(found == "history" or any(c["found"] == found for c in src["cells"]),
    "cells found in the %s: %s" % (found, [c["label"] for c in verified if c["found"] == found]))
say(src["cells"] == sorted(src["cells"], key=lambda c: c["first"]) and
    all(a["first"] + a["nlines"] == b["first"] for a, b in zip(src["cells"], src["cells"][1:])),
    "cells tile the text in capture order")
# --format json: path, cell, cell_line and the concatenated text's line agree
nl = [l for l in j["lines"] if l["kind"] == "notebook"]
bad = [l for l in nl if l["path"] != nbpath or not l["cell"] or
       l["line"] != src["cells"][l["cell"] - 1]["first"] + l["cell_line"] - 1 or
       (src["cells"][l["cell"] - 1]["found"] and l["source"] != text[l["line"] - 1])]
say(nl and not bad, "%d notebook lines carry path, cell and cell_line (%s)" % (len(nl), bad[:2]))
files = [f for f in j["files"] if f["path"] == nbpath]
say(len(files) == 1 and files[0]["kind"] == "notebook", "files: %s" % files)
if not os.path.exists(sys.argv[5]):
    sys.exit()
truth = json.load(open(sys.argv[5]))
def tagged(tag):
    return [l for l in nl if "# " + tag in (l["source"] or "")]
for tag, key in (("HOT", "hot"), ("LIGHT", "light")):
    ls = tagged(tag)
    if not ls:
        say(False, "no %s line" % tag)
        continue
    l = ls[0]
    c = src["cells"][l["cell"] - 1]
    in_cell = sum(x["own_samples"] for x in nl if x["cell"] == l["cell"])
    want_line = code[c["number"] - 1].split("\n").index(next(s for s in code[c["number"] - 1].split("\n") if "# " + tag in s)) + 1
    n = l["own_samples"]
    # wall mode: the line's on-CPU part is what the notebook's thread_time() measured
    cpu = l["cpu_time_s"] if l["cpu_time_s"] is not None else l["time_s"]
    # 5 sd of the line's sample count, plus 5%: a tick lands on whichever thread holds the CPU,
    # and the kernel's own threads waking share the timers (test_threads measured up to 4.4 sd;
    # a CI run under SANITIZE saw 4.6 sd, 485 samples for 0.400 s, at 3 sd + 5%)
    tol = 5 / math.sqrt(max(n, 1)) + 0.05
    say(l["cell_line"] == want_line and n >= 0.9 * in_cell and abs(cpu / truth[key] - 1) <= tol,
        "%s line (cell %d line %d): %d of the cell's %d samples, %.3fs on CPU, the notebook "
        "measured %.3fs (tol %.0f%%)" % (tag, l["cell"], l["cell_line"], n, in_cell, cpu,
                                          truth[key], tol * 100))
PYEOF
	check_lines
}

run plain hot.ipynb && check plain hot.ipynb notebook
n=$(pyq "$WORK/plain.json" 'sum(1 for l in d["lines"] if __import__("re").search(r"/ipykernel_\d+/\d+\.py$", l["path"]))')
[ "$n" = 0 ] && pass "no line is left under its <tmp>/ipykernel_PID name" || fail "$n lines under cell names"
"$LS" report "$WORK/plain.lsprof" --format text | grep -q "hot.ipynb" &&
	pass "text report names the notebook" || fail "text report does not name hot.ipynb"

# the kernel's history database (nbclient keeps it in memory unless told otherwise)
run history hot.ipynb --ExecutePreprocessor.ipython_hist_file="$WORK/history.sqlite" &&
	check history hot.ipynb history
rows=$(sqlite3 "$WORK/history.sqlite" "select count(*) from history" 2>&1)
[ "$rows" -ge 5 ] 2>/dev/null && pass "the kernel wrote $rows history rows" || fail "history rows: $rows"
# the database was read and parsed (a failed read is the notebook's note); cells found in it by
# hash are checked where nothing else can have them: the kernel without a notebook, below
hist=$(sqlite3 "$WORK/history.lsprof" "select history || '|' || coalesce(note, '') from notebooks")
[ "$hist" = "$WORK/history.sqlite|" ] && pass "history database read: $hist" ||
	fail "history database not read: $hist"

# a symlinked history database is not read: the cells come from the notebook, with a note
ln -s "$WORK/history.sqlite" "$WORK/link.sqlite"
run symlink hot.ipynb --ExecutePreprocessor.ipython_hist_file="$WORK/link.sqlite" &&
	check symlink hot.ipynb notebook
note=$(sqlite3 "$WORK/symlink.lsprof" "select note from notebooks")
# ... and only that: the kernel's end, after reads that failed, adds nothing
[[ "$note" == *"symlink"* && "$note" != *"ended"* && "$note" != *"No such process"* ]] &&
	pass "symlinked history: $note" || fail "symlinked history note: $note"

# a kernel with no notebook file (driven by jupyter_client, as a server drives it): its cells come
# from the history database it keeps under $IPYTHONDIR, the notebook is named after the kernel
IPYTHONDIR="$WORK/ipython" "$LS" -q --profile "$WORK/client.lsprof" -o "$WORK/client.html" -- \
	"$NBPY" "$FIX/kernel_client.py" >"$WORK/client.log" 2>&1 || fail "client: exit $?"
"$LS" report "$WORK/client.lsprof" --format json -o "$WORK/client.json" || fail "client: report"
"$PYQ" - "$WORK/client.json" "$WORK/client.lsprof" <<'PYEOF' | check_lines
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
db = sqlite3.connect(sys.argv[2])
nb = db.execute("select pid, path, history from notebooks").fetchall()
cells = db.execute("select number, how from cells").fetchall()
hot = [l for l in d["lines"] if "# HOT" in (l["source"] or "")]
ok = (len(nb) == 1 and nb[0][1] is None and nb[0][2].endswith("/ipython/profile_default/history.sqlite")
      and (2, "history") in cells and hot and hot[0]["path"] == "kernel %d" % nb[0][0] and
      hot[0]["kind"] == "notebook" and hot[0]["cell_line"] == 2 and hot[0]["own_samples"] > 200)
print(("ok " if ok else "FAIL ") + "kernel without a notebook: %s, cells %s, HOT %s" % (
    nb, cells, hot and {k: hot[0][k] for k in ("path", "cell", "cell_line", "own_samples")}))
PYEOF

# a Jupyter server's kernel, history off: its notebook's path comes from the server's sessions API
# (port and token in the server's runtime file), its cells from that notebook
mkdir -p "$WORK/srv-ipython/profile_default"
echo "c.HistoryManager.enabled = False" >"$WORK/srv-ipython/profile_default/ipython_config.py"
# serve NAME WHERE [SERVER ARGS]: profiles a notebook server (WHERE as server_client.py takes it)
# while server_client.py runs server.ipynb in a kernel of it; checks the SERVED line
serve() {
	local name=$1 where=$2 prof
	shift 2
	# shellcheck disable=SC2086 # LS_ARGS, DRIVER_ARGS: more options, word-split on purpose
	IPYTHONDIR="$WORK/srv-ipython" "$LS" -q ${LS_ARGS:-} --profile "$WORK/$name.lsprof" -o "$WORK/$name.html" -- \
		"$NBPY" -m notebook --no-browser --NotebookApp.token=t0ken --allow-root \
		--notebook-dir="$WORK" "$@" >"$WORK/$name.log" 2>&1 &
	prof=$!
	# shellcheck disable=SC2086
	timeout 180 "$NBPY" "$FIX/server_client.py" "$where" t0ken server.ipynb ${DRIVER_ARGS:-} \
		>"$WORK/$name.driver.log" 2>&1 ||
		{ # the server, the launched command, ends on SIGTERM (one SIGINT only asks)
			fail "$name driver: exit $? ($(tail -2 "$WORK/$name.driver.log"))"
			pkill -TERM -P $prof
		}
	wait $prof || fail "$name: profiler exit $?"
	"$LS" report "$WORK/$name.lsprof" --format json -o "$WORK/$name.json" || fail "$name: report"
	"$PYQ" - "$WORK/$name.json" "$WORK/server.ipynb" "$name" <<'PYEOF' | check_lines
import json, sys
d, nbpath, name = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
hot = [l for l in d["lines"] if "# SERVED" in (l["source"] or "")]
ok = hot and hot[0]["path"] == nbpath and hot[0]["cell_line"] == 2 and hot[0]["own_samples"] > 150
print(("ok " if ok else "FAIL ") + "%s: a Jupyter server's kernel runs %s: %s" % (
    name, nbpath, hot and {k: hot[0][k] for k in ("path", "cell", "cell_line", "own_samples")}))
PYEOF
}
port=$("$NBPY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
serve server "$port" --port="$port"
# with TLS: the sessions API over HTTPS, trusting only the certificate the server's command line names
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/tls.key" -out "$WORK/tls.crt" -days 1 \
	-subj /CN=localhost 2>/dev/null || fail "openssl: cannot make a certificate"
port=$("$NBPY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
serve server-tls "https:$port" --port="$port" --certfile="$WORK/tls.crt" --keyfile="$WORK/tls.key"
# on a UNIX socket: connected with the server's rights
serve server-sock "unix:$WORK/nb.sock" --sock="$WORK/nb.sock"
# a front end that sends cell ids (as JupyterLab does), python-usdt loaded (--trace): the served
# cell edited and run again without saving is one cell with two revisions, labelled by the id's
# code cell of the notebook file
port=$("$NBPY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LD_PRELOAD=$TRACE_PRELOAD LS_ARGS="--trace --sample" DRIVER_ARGS=--cell-ids serve server-ids "$port" --port="$port"
"$PYQ" - "$WORK/server-ids.html" <<'PYEOF' | check_lines
import json, re, sys
h = open(sys.argv[1]).read()
d = json.loads(re.search(r'id="ls-data">(.*?)</script>', h, re.S).group(1))
src = [s for s in d["sources"] if s["kind"] == "notebook"][0]
text = src["text"].split("\n")
two = [c for c in src["cells"] if c["label"] == "Cell 2"]
body = ["\n".join(text[c["first"] - 1:c["first"] - 1 + c["nlines"]]) for c in two]
ok = ([c["revision"] for c in two] == ["revision 1 of 2", "revision 2 of 2"] and
      all(c["found"] == "python-usdt" for c in two) and "# SERVED AGAIN" in body[1] and
      "# SERVED AGAIN" not in body[0])
print(("ok " if ok else "FAIL ") + "cell ids: the served cell edited and run again, unsaved: %s" % [
    (c["label"], c["revision"], c["found"], b.split("#")[-1]) for c, b in zip(two, body)])
PYEOF

# an IPython shell (the terminal's, cells piped in): its cells are <ipython-input-N-HASH>, found in
# its history by execution count and the SHA-1 of their compiled text; a line magic's cell shows
# what was typed
mkdir -p "$WORK/shell-ipython"
cat >"$WORK/shell.in" <<EOF
import json, time
def hot(n):
    s = 0
    for i in range(n):
        s += i * i  # SHELL HOT
    return s

t = time.thread_time(); hot(12000000); cpu = time.thread_time() - t
json.dump({"cpu": cpu}, open("$WORK/shell.truth", "w"))
def burn(s):
    t = time.thread_time()
    while time.thread_time() - t < s: pass

%time y = burn(0.1)  # SHELL MAGIC
EOF
IPYTHONDIR="$WORK/shell-ipython" "$LS" -q --profile "$WORK/shell.lsprof" -o /dev/null -- \
	"$NBPY" -m IPython --simple-prompt --no-banner <"$WORK/shell.in" >"$WORK/shell.log" 2>&1 ||
	fail "IPython shell: exit $? ($(tail -2 "$WORK/shell.log"))"
"$LS" report "$WORK/shell.lsprof" --format json -o "$WORK/shell.json" || fail "IPython shell: report"
"$PYQ" - "$WORK/shell.json" "$WORK/shell.truth" "$WORK/shell.lsprof" <<'PYEOF' | check_lines
import json, math, sqlite3, sys
d, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))["cpu"]
cells = sorted(sqlite3.connect(sys.argv[3]).execute("select number, how from cells").fetchall(), key=str)
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
hot = [l for l in d["lines"] if "# SHELL HOT" in (l["source"] or "")]
say(hot and hot[0]["kind"] == "notebook" and hot[0]["path"].startswith("kernel ") and hot[0]["cell_line"] == 4,
    "IPython shell: the hot line in its cell: %s" % (hot and {k: hot[0][k] for k in ("path", "cell", "cell_line", "own_samples")}))
say((2, "history") in cells, "IPython shell: the def cell is execution count 2, from the history: %s" % cells)
fn = [l for l in d["lines"] if l["function"] == "hot" and l["kind"] == "notebook"]
cpu, n = sum(l["cpu_time_s"] or 0 for l in fn), sum(l["own_samples"] or 0 for l in fn)
tol = 5 / math.sqrt(max(n, 1)) + 0.05
say(n and abs(cpu / truth - 1) <= tol, "IPython shell: hot() %.3f s CPU on its lines, %.3f s measured (%d samples, tolerance %.0f%%)" % (
    cpu, truth, n, 100 * tol))
# the magic's cell (a line of it is on the stack while burn(0.1) runs: 0.1 s of CPU time, so
# ticks of at most 4/3 of a period must fall in it): shown as typed
typed = [l for l in d["lines"] if "%time y = burn(0.1)  # SHELL MAGIC" in (l["source"] or "")]
say(typed and typed[0]["kind"] == "notebook", "IPython shell: the line magic's cell as typed: %s" % (
    typed and {k: typed[0][k] for k in ("cell", "cell_line", "samples")}))
PYEOF

# the same shell writing its history only as it exits (a cache of 1000 cells): every sampled cell
# is found once it is gone, in the database as read from the descriptor opened while it ran
mkdir -p "$WORK/exit-ipython/profile_default"
echo "c.HistoryManager.db_cache_size = 1000" >"$WORK/exit-ipython/profile_default/ipython_config.py"
IPYTHONDIR="$WORK/exit-ipython" "$LS" -q --profile "$WORK/shell-exit.lsprof" -o /dev/null -- \
	"$NBPY" -m IPython --simple-prompt --no-banner <"$WORK/shell.in" >"$WORK/shell-exit.log" 2>&1 ||
	fail "IPython shell, history at exit: exit $? ($(tail -2 "$WORK/shell-exit.log"))"
"$PYQ" - "$WORK/shell-exit.lsprof" <<'PYEOF' | check_lines
import sqlite3, sys
cells = sorted(sqlite3.connect(sys.argv[1]).execute("select number, how from cells").fetchall(), key=str)
print(("ok " if (2, "history") in cells and all(h == "history" for _, h in cells) else "FAIL ") +
      "IPython shell, history written at exit: every sampled cell found: %s" % cells)
PYEOF

# a kernel under --trace (nbconvert's, whose history is in memory): its cells are announced by
# python-usdt and traced, run_cell()'s INNER cell too, once ipykernel's import of pydevd has saved
# and restored the trace function
NB_TRUTH="$WORK/hottrace.truth" LD_PRELOAD=$TRACE_PRELOAD "$LS" -q --trace --profile "$WORK/hottrace.lsprof" -o /dev/null -- \
	jupyter nbconvert --to notebook --execute hot.ipynb --output "$WORK/hottrace.out.ipynb" \
	2>"$WORK/hottrace.log" || fail "hot --trace: exit $? ($(tail -3 "$WORK/hottrace.log"))"
"$LS" report "$WORK/hottrace.lsprof" --format json -o "$WORK/hottrace.json" || fail "hot --trace: report"
"$PYQ" - "$WORK/hottrace.json" "$WORK/hottrace.lsprof" "$WORK/hot.ipynb" <<'PYEOF' | check_lines
import json, sqlite3, sys
d = json.load(open(sys.argv[1]))
cells = sqlite3.connect(sys.argv[2]).execute("select number, how from cells").fetchall()
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
say(len(cells) >= 5 and all(h == "python-usdt" for _, h in cells),
    "hot --trace: every cell found through python-usdt: %s" % sorted(cells, key=str))
for tag in ("HOT", "INNER"):
    l = [l for l in d["lines"] if (l["source"] or "").startswith("while") and "# " + tag in l["source"]]
    say(l and l[0]["path"] == sys.argv[3] and (l[0]["hits"] or 0) > 1000,
        "hot --trace: the %s loop line is traced in %s: %s" % (
            tag, sys.argv[3], l and {k: l[0][k] for k in ("path", "cell", "cell_line", "hits")}))
PYEOF

# python-usdt (--trace) announces each cell as the shell compiles it: with the history kept in
# memory only, every cell is still found, and so is the cell run_cell() compiles, which no history
# row and no notebook holds; its loop line has the hits the loop made
cat >"$WORK/usdt.in" <<'EOF'
import json, time
n = 0; t0 = time.thread_time()
while time.thread_time() - t0 < 0.2: n += 1  # USDT OUTER
get_ipython().run_cell("m = 0; t1 = time.thread_time()\nwhile time.thread_time() - t1 < 0.2: m += 1  # USDT INNER")
json.dump({"n": n, "m": m}, open("usdt.truth", "w"))
EOF
IPYTHONDIR="$WORK/shell-ipython" "$LS" -q --trace --profile "$WORK/usdt.lsprof" -o /dev/null -- \
	"$NBPY" -m IPython --simple-prompt --no-banner --HistoryManager.hist_file=:memory: \
	<"$WORK/usdt.in" >"$WORK/usdt.log" 2>&1 || fail "python-usdt cells: exit $? ($(tail -2 "$WORK/usdt.log"))"
"$LS" report "$WORK/usdt.lsprof" --format json -o "$WORK/usdt.json" || fail "python-usdt cells: report"
"$PYQ" - "$WORK/usdt.json" "$WORK/usdt.truth" "$WORK/usdt.lsprof" <<'PYEOF' | check_lines
import json, sqlite3, sys
d, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cells = sqlite3.connect(sys.argv[3]).execute("select number, how from cells").fetchall()
def say(ok, msg):
    print(("ok " if ok else "FAIL ") + msg)
say(len(cells) >= 4 and all(h == "python-usdt" for _, h in cells),
    "python-usdt cells: every cell found through python-usdt: %s" % sorted(cells, key=str))
for tag, key in (("OUTER", "n"), ("INNER", "m")):
    l = [l for l in d["lines"] if "# USDT %s" % tag in (l["source"] or "") and l["kind"] == "notebook"
         and l["source"].startswith("while")]
    # a line event per iteration (the jump back), and one for the first test
    say(l and l[0]["cell_line"] == (2 if tag == "INNER" else 1) and l[0]["hits"] - truth[key] in (0, 1),
        "python-usdt cells: the %s loop line in its cell, %s hits for %d iterations" % (
            tag, l and (l[0]["cell"], l[0]["cell_line"], l[0]["hits"]), truth[key]))
PYEOF

# %run child.ipynb: the child's cells are a notebook of their own, run from the parent's line
run parent parent.ipynb
"$PYQ" - "$WORK/parent.json" "$WORK/parent.data.json" "$WORK" <<'PYEOF' | check_lines
import json, sys
j, data, work = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
src = {s["path"]: i for i, s in enumerate(data["sources"]) if s["kind"] == "notebook"}
child = [l for l in j["lines"] if "# CHILD" in (l["source"] or "")]
runs = [c for c in data["children"] if c["kind"] == "notebook"]
ok = (set(src) == {work + "/parent.ipynb", work + "/child.ipynb"} and child and
      child[0]["path"] == work + "/child.ipynb" and child[0]["cell_line"] == 2)
print(("ok " if ok else "FAIL ") + "the child's CHILD line is in child.ipynb: %s, sources %s" % (
    child and {k: child[0][k] for k in ("path", "cell", "cell_line")}, sorted(src)))
r = runs[0] if len(runs) == 1 else {}
ok = (r.get("status") == "Reference" and r.get("src") == src.get(work + "/parent.ipynb") and
      r.get("source") == src.get(work + "/child.ipynb") and r.get("cmd") == "%run child.ipynb" and
      data["sources"][r["src"]]["text"].split("\n")[r["line"] - 1] == "%run child.ipynb" and
      r["wait_s"] >= child[0]["time_s"])
print(("ok " if ok else "FAIL ") + "children: %s" % runs)
# --format json lists the same run with paths and the %run line's cell
jr = [c for c in j["children"] if c["kind"] == "notebook"]
ok = (len(jr) == 1 and jr[0]["path"] == work + "/parent.ipynb" and
      jr[0]["notebook"] == work + "/child.ipynb" and jr[0]["status"] == "Reference" and
      jr[0]["cell"] is not None and jr[0]["cell_line"] is not None and
      jr[0]["wait_s"] == r.get("wait_s") and jr[0]["via"] == "spawn")
print(("ok " if ok else "FAIL ") + "--format json children: %s" % jr)
PYEOF

# a cell edited and run again: both texts are kept, as revisions of that cell
mkdir -p "$WORK/tr" && cp "$WORK/revise.ipynb" "$WORK/tr/" # it rewrites itself: a copy as made
run revise revise.ipynb
# revised NAME FOUND: cell 2's two texts are its revisions, each found FOUND
revised() {
	"$PYQ" - "$WORK/$1.data.json" "$2" "$1" <<'PYEOF' | check_lines
import json, sys
d, found, name = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
src = [s for s in d["sources"] if s["kind"] == "notebook"][0]
text = src["text"].split("\n")
two = [c for c in src["cells"] if c["label"] == "Cell 2"]
body = ["\n".join(text[c["first"] - 1:c["first"] - 1 + c["nlines"]]) for c in two]
ok = ([c["revision"] for c in two] == ["revision 1 of 2", "revision 2 of 2"] and
      "# V1" in body[0] and "# V2" in body[1] and all(c["found"] == found for c in two) and
      all(c["revision"] is None for c in src["cells"] if c["label"] != "Cell 2"))
print(("ok " if ok else "FAIL ") + "%s: cell 2 edited and run again: %s" % (name, [
    (c["label"], c["revision"], c["found"], b.split("#")[-1]) for c, b in zip(two, body)]))
PYEOF
}
revised revise notebook
# under --trace, python-usdt gives the texts, and the notebook file still says which cell each is
(cd "$WORK/tr" && LD_PRELOAD=$TRACE_PRELOAD LS_ARGS=--trace run revise-trace revise.ipynb) &&
	revised revise-trace python-usdt

# nbclient from a notebook: the child notebook runs in a kernel the parent's kernel started; it
# is found in that kernel's working directory by its cells' hashes, never named after the parent
run nbclient nbparent.ipynb
"$PYQ" - "$WORK/nbclient.json" "$WORK" "$WORK/nbclient.truth" "$WORK/nbclient.data.json" <<'PYEOF' | check_lines
import json, math, sys
j, work, truth = json.load(open(sys.argv[1])), sys.argv[2], json.load(open(sys.argv[3]))
data = json.load(open(sys.argv[4]))
def say(ok, what):
    print(("ok " if ok else "FAIL ") + what)
nbs = {f["path"] for f in j["files"] if f["kind"] == "notebook"}
say(nbs == {work + "/nbparent.ipynb", work + "/nbchild.ipynb"}, "notebooks %s" % sorted(nbs))
child = [l for l in j["lines"] if "# NBCHILD" in (l["source"] or "")]
say(child and child[0]["path"] == work + "/nbchild.ipynb" and child[0]["pid"] == truth["pid"]
    and child[0]["cell_line"] == 2,
    "the child kernel's NBCHILD line is in nbchild.ipynb: %s" % (
        child and {k: child[0][k] for k in ("path", "pid", "cell", "cell_line")}))
kernel = [p for p in j["processes"] if p["pid"] == truth["pid"]]
say(kernel and kernel[0]["parent_pid"] in {l["pid"] for l in j["lines"] if l["path"] == work + "/nbparent.ipynb"},
    "its kernel is the parent kernel's child")
if child:
    n = max(truth["cpu_s"] * 999, 1)
    tol = truth["cpu_s"] * (5 / math.sqrt(n) + 0.05)
    say(abs(child[0]["cpu_time_s"] - truth["cpu_s"]) <= tol,
        "NBCHILD %.3f s CPU against %.3f s measured (tolerance %.3f)" % (
            child[0]["cpu_time_s"], truth["cpu_s"], tol))
# jupyter_client's launcher thread started the child kernel; the parent's line that waited for
# it is the execute() line of nbparent.ipynb, with the child's life as its wait
link = [c for c in data["children"] if c["pid"] == truth["pid"]]
src = data["sources"][link[0]["src"]] if link else {}
text = src.get("text", "").split("\n")[link[0]["line"] - 1] if link else ""
say(link and src["path"] == work + "/nbparent.ipynb" and "# RUNS" in text and
    link[0]["via"] == "waiting thread" and
    truth["cpu_s"] <= link[0]["wait_s"] <= link[0]["duration_s"] + 0.001,
    "the child kernel is linked from the parent's waiting line: %s" % (
        link and dict(link[0], line_text=text)))
jc = [c for c in j["children"] if c["pid"] == truth["pid"]]
say(jc and jc[0]["path"] == work + "/nbparent.ipynb" and jc[0]["cell"] == 2 and
    jc[0]["cell_line"] == 2 and jc[0]["via"] == "waiting thread" and
    jc[0]["wait_s"] == link[0]["wait_s"], "--format json children: %s" % jc)
PYEOF

# %%time and %time: the code IPython compiles under <timed exec> is on its cell's lines
run timed timed.ipynb
"$PYQ" - "$WORK/timed.json" "$WORK" "$WORK/timed.truth" <<'PYEOF' | check_lines
import json, math, sys
j, work, truth = json.load(open(sys.argv[1])), sys.argv[2], json.load(open(sys.argv[3]))
say = lambda ok, what: print(("ok " if ok else "FAIL ") + what)
say(not [l for l in j["lines"] if l["path"].startswith("<timed")],
    "no line left in <timed exec>: %s" % sorted({l["path"] for l in j["lines"]}))
for tag, key, cell_line in (("# TIMED", "timed", 3), ("# LINETIMED", "line", 2)):
    l = [x for x in j["lines"] if tag + "\n" in (x["source"] or "") + "\n"]
    n = max(truth[key] * 999, 1)
    tol = truth[key] * (5 / math.sqrt(n) + 0.05)
    say(len(l) == 1 and l[0]["path"] == work + "/timed.ipynb" and l[0]["cell_line"] == cell_line and
        abs(l[0]["cpu_time_s"] - truth[key]) <= tol,
        "%s on cell line %d: %s, %.3f s measured (tolerance %.3f)" % (
            tag, cell_line, l and {k: l[0][k] for k in ("cell", "cell_line", "cpu_time_s")},
            truth[key], tol))
PYEOF

# the HTML reports in chromium: one notebook row, lines grouped and numbered by cell; the %run child
if node "$ROOT/tests/report/notebook.js" "$WORK/plain.html" "$WORK/plain.json" \
	"$WORK/parent.html" "$WORK/nbclient.html" >"$WORK/nb.log" 2>&1; then
	pass "html in chromium: $(tail -1 "$WORK/nb.log")"
else
	fail "html in chromium: $(grep -v '^  ok' "$WORK/nb.log" | head -8)"
fi

# a notebook that is no longer JSON when its cells are looked for: marked, with the reason
run corrupt corrupt.ipynb
u=$(pyq "$WORK/corrupt.data.json" '[c["unavailable"] for s in d["sources"] if s["kind"] == "notebook" for c in s["cells"]]')
[[ "$u" == *"not valid JSON"* && "$u" == *"no text found"* ]] && pass "corrupt notebook: $u" ||
	fail "corrupt notebook: $u"
finish
