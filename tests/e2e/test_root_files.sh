#!/bin/bash
# SPDX-License-Identifier: MIT
# Root on behalf of untrusted users: a hostile owner of the output directory, a job that names a
# file only root may read, outputs that are streams or the profile itself, and files owned by
# the user who ran sudo. Every victim is a root-only file checked byte for byte afterwards.
source "$(dirname "$0")/lib.sh"
need_python "$DEB_PY"
NOBODY=65534
export SUDO_UID=$NOBODY SUDO_GID=$NOBODY
as_nobody=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)

chmod 711 "$WORK"
# the scripts nobody runs, where nobody can read them whatever the checkout's directory allows
# (a clone under a 0700 mktemp directory is not theirs to enter)
nfix="$WORK/fixtures"
mkdir -m 755 "$nfix"
install -m 644 "$FIX/swap_in_symlinks.py" "$FIX/hostile_job.py" "$nfix/"
mkdir -m 700 "$WORK/rootonly"
secret="$WORK/rootonly/secret.py"
marker="TOP-SECRET-$RANDOM$RANDOM"
for i in $(seq 20); do echo "# $marker line $i"; done >"$secret"
chmod 600 "$secret"
sum=$(sha256sum "$secret")
victim_ok() { # what: the secret is as it was, root's, mode 600
	if [ "$(sha256sum "$secret")" = "$sum" ] && [ "$(stat -c %u:%a "$secret")" = 0:600 ]; then
		pass "$1: the root-only file is untouched"
	else
		fail "$1: the root-only file changed: $(stat -c '%u %a %s' "$secret")"
	fi
}
no_secret() { # what files...: none of them holds the secret's text
	local what=$1
	shift
	if grep -lq "$marker" "$@" 2>/dev/null; then
		fail "$what: the root-only file's text is in $(grep -l "$marker" "$@" | tr '\n' ' ')"
	else
		pass "$what: its text is in none of the outputs"
	fi
}
busy=(-- "$DEB_PY" -c 'import time
t = time.thread_time()
while time.thread_time() - t < 0.2: pass')

# 1. a directory owned by someone else, who turns every new file in it into a link to the victim
pub="$WORK/pub"
mkdir -m 755 "$pub" && chown $NOBODY:$NOBODY "$pub"
mkdir "$pub/out" && chown $NOBODY:$NOBODY "$pub/out"
"${as_nobody[@]}" "$DEB_PY" "$nfix/swap_in_symlinks.py" "$pub/out" "$secret" >"$WORK/swap.log" 2>&1 &
swapper=$!
wait_log "$WORK/swap.log" ready || fail "the hostile directory owner did not start: $(cat "$WORK/swap.log")"
"$LS" -q -o "$pub/out/r.html" --profile "$pub/out/p.lsprof" "${busy[@]}" 2>"$WORK/swap.err"
echo "  (run under attack: exit $?, $(head -c 200 "$WORK/swap.err"))"
"$LS" report "$pub/out/p.lsprof" -o "$pub/out/again.html" 2>/dev/null
kill $swapper
wait $swapper 2>/dev/null
victim_ok "hostile directory owner"
# the same directory without the attacker: every file is a new regular file owned by SUDO_UID
rm -rf "$pub/out" "$pub/moved-away"
mkdir "$pub/out" && chown $NOBODY:$NOBODY "$pub/out"
ln -s "$secret" "$pub/out/r.html"
ln -s "$secret" "$pub/out/p.lsprof"
ln -s "$secret" "$pub/out/p.lsprof-wal"
ln -s "$secret" "$pub/out/p.lsprof-shm"
if "$LS" -q -o "$pub/out/r.html" --profile "$pub/out/p.lsprof" "${busy[@]}"; then
	bad=$(find "$pub/out" -mindepth 1 \( -type l -o ! -user $NOBODY \) -printf '%f ')
	[ -z "$bad" ] && [ -f "$pub/out/r.html" ] && [ -f "$pub/out/p.lsprof" ] &&
		pass "symlinks at the outputs replaced by files owned by uid $NOBODY" ||
		fail "left as links or not given to uid $NOBODY: $bad"
else
	fail "run into a directory with planted links: exit $?"
fi
victim_ok "planted links"

# 2. a job (as nobody) runs code it says comes from the root-only file
mkdir "$pub/job" && chown $NOBODY:$NOBODY "$pub/job"
for mode in compile swap; do
	prof="$WORK/$mode.lsprof"
	"$LS" -q -o "$WORK/$mode.html" --profile "$prof" -- \
		"${as_nobody[@]}" "$DEB_PY" "$nfix/hostile_job.py" $mode "$secret" "$pub/job" >"$WORK/$mode.out" ||
		fail "$mode: exit $?"
	grep -q done "$WORK/$mode.out" || fail "$mode: the job did not finish"
	j=$(json_of "$prof") || { fail "$mode: no report"; continue; }
	no_secret "job ($mode)" "$prof" "$prof-wal" "$WORK/$mode.html" "$j"
	name=$([ $mode = compile ] && echo "$secret" || echo "$pub/job/mod.py")
	"$PYQ" - "$j" "$name" "$mode" <<'PYEOF' | check_lines
import json, sys
d = json.load(open(sys.argv[1])); name, mode = sys.argv[2], sys.argv[3]
files = [f for f in d["files"] if f["path"] == name]
n = sum(f["samples"] for f in files)
text = [l["source"] for l in d["lines"] if l["path"] == name and l["source"]]
if not n:
    print("FAIL job (%s): no samples on %s" % (mode, name))
elif mode == "compile" or files[0]["unavailable"]:
    why = files[0]["unavailable"]
    print("%s job (%s): %d samples on its lines, source: %s" % (
        "ok" if not text and why == "unreadable by the profiled process" else "FAIL", mode, n, why))
else:  # sampled while mod.py was still the job's own file: that text is fine
    print("%s job (%s): %d samples, source captured before the swap" % (
        "ok" if any("thread_time" in t for t in text) else "FAIL", mode, n))
PYEOF
done
victim_ok "hostile job"

# 2b. the same path in a root process that may read it and in a job of nobody's that names it
# right after: a read is shared only between processes with the same rights (sources.c)
shared_mod="$WORK/rootonly/shared_mod.py"
# spawn() (line 7 on): a child of root's that runs its own line as root, then becomes nobody's
# and execs the job, which names the path: its rights are looked at again, not kept from before
# (the exec's record brings them: `exec_views`)
cat >"$shared_mod" <<PYEOF
import time
def busy():
    t = time.thread_time()
    while time.thread_time() - t < 0.4:
        pass

import os, sys
def spawn():
    if os.fork() == 0:
        t = time.thread_time()
        while time.thread_time() - t < 0.2:
            pass  # SPAWN, as root
        os.setgroups([]); os.setgid($NOBODY); os.setuid($NOBODY)
        os.execv(sys.executable, [sys.executable, "$nfix/hostile_job.py", "compile", __file__])
    os.wait()
PYEOF
chmod 600 "$shared_mod"
cat >"$WORK/rootonly/both.py" <<PYEOF
import subprocess, sys
sys.path.insert(0, "$WORK/rootonly")
import shared_mod
shared_mod.busy()  # read by root first, then named by nobody well within the 1 s a read is shared
subprocess.run([*sys.argv[1:], "$DEB_PY", "$nfix/hostile_job.py", "compile", "$shared_mod"], check=True)
shared_mod.spawn()
PYEOF
"$LS" -q -o "$WORK/both.html" --profile "$WORK/both.lsprof" -- "$DEB_PY" "$WORK/rootonly/both.py" \
	"${as_nobody[@]}" >"$WORK/both.out" || fail "shared path: exit $?"
j=$(json_of "$WORK/both.lsprof") || fail "shared path: no report"
"$PYQ" - "$j" "$shared_mod" "$WORK/both.lsprof" <<'PYEOF' | check_lines
import json, sqlite3, sys
d = json.load(open(sys.argv[1])); path = sys.argv[2]
# each exec's record brought its view: the jobs' first opens used nobody's rights from the kernel
st = dict(sqlite3.connect(sys.argv[3]).execute("SELECT key, value FROM stats"))
print("%s shared path: %d of %d execs came with their view" % (
    "ok" if st.get("exec_views", 0) == st.get("exec_events", -1) >= 3 else "FAIL",
    st.get("exec_views", 0), st.get("exec_events", 0)))
procs = {p["pid"]: p for p in d["processes"]}
by_pid = {}
for l in d["lines"]:
    if l["path"] == path:
        by_pid.setdefault(l["pid"], []).append(l)
root = [pid for pid in by_pid if "both.py" in (procs[pid]["argv"] or "")]
job = [pid for pid in by_pid if "hostile_job.py" in (procs[pid]["argv"] or "")]
if not root or len(job) != 2:
    print("FAIL shared path: lines of the root process %s and of the two jobs %s" % (root, job))
else:
    rt = [l["source"] for l in by_pid[root[0]] if l["source"]]
    print("%s shared path: the root process has its text (%d lines)" % ("ok" if rt else "FAIL", len(rt)))
    for pid in job:  # busy()'s lines, 2-5: the job's compiled code (the forked one ran SPAWN as root)
        how = "forked by root, then nobody's" if any(l["line"] > 6 for l in by_pid[pid]) else "nobody's"
        jt = [l["source"] for l in by_pid[pid] if l["source"] and l["line"] <= 6]
        print("%s shared path: %s job, naming it after root read it, has none (%d lines)" % (
            "ok" if not jt else "FAIL", how, len(jt)))
PYEOF

# 2c. a child of root's that drops its rights in place (no exec, so no exec record brings them)
# after it was sampled as root, then runs code of the root-only module root read: each record
# says with its view key how the thread saw files, so the child's later frames are read with
# nobody's rights however late the collector reads them (LINESCOPE_FAULT_RECORD_US: a reader
# starved behind the job), never with the root view it had just before (recorder_view.c)
cat >"$WORK/rootonly/dropper.py" <<PYEOF
import os, sys, time
sys.path.insert(0, "$WORK/rootonly")
import shared_mod
shared_mod.busy()  # root reads it: a read under root's view
def as_root():
    t = time.thread_time()
    while time.thread_time() - t < 0.2:
        pass  # AS ROOT
pid = os.fork()
if pid == 0:
    as_root()
    os.setgroups([]); os.setgid($NOBODY); os.setuid($NOBODY)
    shared_mod.busy()  # named by nobody's process now, with no exec between
    os._exit(0)
os.waitpid(pid, 0)
PYEOF
chmod 600 "$WORK/rootonly/dropper.py"
for lag in 0 3000; do
	prof="$WORK/drop$lag.lsprof"
	LINESCOPE_FAULT_RECORD_US=$lag "$LS" -q -o "$WORK/drop$lag.html" --profile "$prof" -- \
		"$DEB_PY" "$WORK/rootonly/dropper.py" || fail "dropped rights (lag $lag us): exit $?"
	j=$(json_of "$prof") || { fail "dropped rights (lag $lag us): no report"; continue; }
	"$PYQ" - "$j" "$shared_mod" "$lag" "$prof" <<'PYEOF' | check_lines
import json, sqlite3, sys
d = json.load(open(sys.argv[1])); path, lag = sys.argv[2], sys.argv[3]
st = dict(sqlite3.connect(sys.argv[4]).execute("SELECT key, value FROM stats"))
kids = [p["pid"] for p in d["processes"] if p["parent_pid"] in {q["pid"] for q in d["processes"]}]
mine = [l for l in d["lines"] if l["path"] == path and l["line"] <= 6]
root = [l for l in mine if l["pid"] not in kids]
kid = [l for l in mine if l["pid"] in kids]
if len(kids) != 1 or not root or not kid:
    print("FAIL dropped rights (lag %s us): children %s, lines of root %d, of the child %d" % (
        lag, kids, len(root), len(kid)))
else:
    rt = [l for l in root if l["source"]]
    kt = [l for l in kid if l["source"]]
    print("%s dropped rights (lag %s us): root's process has the text (%d lines)" % (
        "ok" if rt else "FAIL", lag, len(rt)))
    print("%s dropped rights (lag %s us): its child, nobody's since, has none (%d of %d lines; "
          "views by key %d, changed %d)" % ("ok" if not kt else "FAIL", lag, len(kt), len(kid),
                                            st.get("views_by_key", 0), st.get("views_changed", 0)))
PYEOF
	no_secret "dropped rights (lag $lag us)" "$prof" "$prof-wal" "$WORK/drop$lag.html" "$j"
done

# 3. streams: /dev/stdout redirected to a file and to a pipe, a FIFO of the user's, one of root's
cd "$WORK"
# /dev is a private tmpfs for these: a tool that replaced /dev/stdout would break only its copy
in_private_dev() { # command: runs it with a /dev of its own holding stdout and null
	unshare --mount --propagation private bash -c 'mount -t tmpfs none /dev &&
		ln -s /proc/self/fd/1 /dev/stdout && mknod -m 666 /dev/null c 1 3 && "$@" &&
		{ [ -L /dev/stdout ] || { echo "/dev/stdout is no longer a symlink" >&2; exit 9; }; }' _ "$@"
}
in_private_dev "$LS" -q -o /dev/stdout --profile "$WORK/s.lsprof" "${busy[@]}" >"$WORK/stdout.html"
rc=$?
[ $rc -eq 0 ] && grep -qi "<html" "$WORK/stdout.html" && pass "-o /dev/stdout into a file: the report is there" ||
	fail "-o /dev/stdout into a file: exit $rc"
in_private_dev "$LS" report "$WORK/s.lsprof" -o /dev/stdout | cat >"$WORK/piped.html"
rc=${PIPESTATUS[0]}
[ $rc -eq 0 ] && grep -qi "<html" "$WORK/piped.html" &&
	pass "report -o /dev/stdout into a pipe" || fail "report -o /dev/stdout into a pipe: exit $rc"
"$LS" report "$WORK/s.lsprof" -o - --format text | grep -q "Status: Success" &&
	pass "report -o - writes standard output" || fail "report -o -"
mkfifo -m 600 "$pub/fifo" && chown $NOBODY:$NOBODY "$pub/fifo"
timeout 30 cat "$pub/fifo" >"$WORK/fifo.html" &
reader=$!
"$LS" report "$WORK/s.lsprof" -o "$pub/fifo" || fail "report into the user's FIFO: exit $?"
wait $reader
[ -p "$pub/fifo" ] && grep -qi "<html" "$WORK/fifo.html" && pass "report written through the user's FIFO" ||
	fail "report through the user's FIFO"
mkfifo -m 600 "$WORK/rootonly/fifo"
chmod 755 "$WORK/rootonly"
if "$LS" report "$WORK/s.lsprof" -o "$WORK/rootonly/fifo" 2>"$WORK/rf.err"; then
	fail "report into root's FIFO as uid $NOBODY: it was written"
else
	grep -q "Permission denied" "$WORK/rf.err" && [ -p "$WORK/rootonly/fifo" ] &&
		pass "root's FIFO refused to uid $NOBODY: $(cat "$WORK/rf.err")" || fail "root's FIFO: $(cat "$WORK/rf.err")"
fi
chmod 700 "$WORK/rootonly"

# 4. outputs that would destroy data
cp "$WORK/s.lsprof" "$WORK/keep.lsprof"
keep=$(sha256sum <"$WORK/keep.lsprof")
"$LS" -q --profile "$WORK/keep.lsprof" -o "$WORK/k.html" -- /no/such/command 2>"$WORK/k.err"
rc=$?
[ $rc -ne 0 ] && [ "$(sha256sum <"$WORK/keep.lsprof")" = "$keep" ] &&
	pass "a command that cannot start leaves the profile as it was (exit $rc)" ||
	fail "a command that cannot start: exit $rc, profile changed"
[ -z "$(find "$WORK" -maxdepth 1 -name '.keep.lsprof.*')" ] || fail "its temporary profile was left behind"
"$LS" report "$WORK/keep.lsprof" -o "$WORK/keep.lsprof" 2>"$WORK/k.err"
rc=$?
[ $rc -ne 0 ] && [ "$(sha256sum <"$WORK/keep.lsprof")" = "$keep" ] &&
	pass "report over its own profile refused: $(cat "$WORK/k.err")" || fail "report over its own profile: exit $rc"
"$LS" -o "$WORK/same" --profile "$WORK/same" "${busy[@]}" 2>"$WORK/k.err"
rc=$?
[ $rc -eq 64 ] && [ ! -e "$WORK/same" ] && pass "-o and --profile the same: usage error" ||
	fail "-o and --profile the same: exit $rc, $(cat "$WORK/k.err")"

# 5. under sudo, what report writes belongs to the user
"$LS" report "$WORK/keep.lsprof" -o "$WORK/mine.html"
[ "$(stat -c %u "$WORK/mine.html")" = $NOBODY ] && pass "report -o belongs to SUDO_UID" ||
	fail "report -o is owned by $(stat -c %u "$WORK/mine.html")"

# 6. -p --trace on 3.14 (PEP 768): the loader script the target runs is root's, in a directory of
# our own, read by a target of another user, and gone afterwards; nothing lands in the site
sid=${LS_SID_ROOT:-/var/cache/linescope/sid-root}
[ -x "$sid/usr/bin/python3.14" ] || bash "$FIX/pyroot.sh" >/dev/null || fail "no sid root"
site="$WORK/site"
mkdir -m 755 "$site"
cp "$ROOT/.output/python-usdt/site/sitecustomize.py" "$site/"
# built against sid's headers; its pyconfig.h is found after ours, so our libc's headers win
cc -O2 -fPIC -fvisibility=hidden -std=gnu11 -D_GNU_SOURCE -I"$ROOT/bpf" -I"$ROOT/python-usdt" \
	-I"$sid/usr/include/python3.14" -idirafter "$sid/usr/include" -shared "$ROOT"/python-usdt/*.c \
	-o "$site/linescope_usdt.cpython-314-x86_64-linux-gnu.so" || fail "cannot build linescope_usdt for 3.14"
chmod -R a+rX "$site"
before=$(ls -d /tmp/linescope-load-* 2>/dev/null)
"${as_nobody[@]}" "$sid/lib64/ld-linux-x86-64.so.2" --library-path "$sid/lib/x86_64-linux-gnu:$sid/usr/lib/x86_64-linux-gnu" \
	"$sid/usr/bin/python3.14" -c 'import time
print("ready", flush=True)
t = time.time()
while time.time() - t < 30: pass' >"$WORK/py14.log" 2>&1 &
py14=$!
wait_log "$WORK/py14.log" ready || fail "sid 3.14 did not start: $(cat "$WORK/py14.log")"
LINESCOPE_PYUSDT_SITE="$site" "$LS" -q --trace --sample -p $py14 -d 1 --profile "$WORK/r14.lsprof" \
	-o "$WORK/r14.html" || fail "-p --trace 3.14: exit $?"
kill $py14
wait $py14 2>/dev/null
j=$(json_of "$WORK/r14.lsprof") && t=$(pyq "$j" 'd["processes"][0]["trace"]')
[ "${t:-}" = on ] && pass "-p --trace: the 3.14 target of uid $NOBODY ran our loader" ||
	fail "-p --trace 3.14: trace ${t:-?}, note $(pyq "$j" 'd["processes"][0]["note"]')"
left=$(ls -d /tmp/linescope-load-* 2>/dev/null)
[ "$left" = "$before" ] && [ -z "$(ls -A "$site" | grep -v '^sitecustomize.py$\|^linescope_usdt')" ] &&
	pass "no loader script left in /tmp or the site" || fail "left behind: $left $(ls -A "$site")"
finish
