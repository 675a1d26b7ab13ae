#!/bin/bash
# SPDX-License-Identifier: MIT
# PEP 768 remote loading (userspace/remote_exec.c). No CPython 3.14 exists here yet, so the
# request itself is checked against a stand-in process whose .PyRuntime section holds 3.14's
# _Py_DebugOffsets layout: the request must land where CPython reads it, and be refused when the
# target disabled remote execution. Real interpreters check the error paths (3.11: no debug
# offsets; 3.13: too old), and the loader script that the request runs is executed by each real
# interpreter, which must end up with linescope_usdt loaded and sys.path untouched.
set -u
cd "$(dirname "$0")/../.."
. tests/bpf/trace_lib.sh
T=.output/tests/bpf
if [ ! -x $T/trace_remote ] || [ ! -x $T/fake_python_runtime ]; then
	echo "test_trace_remote: not built; run: make $T/trace_remote $T/fake_python_runtime" >&2
	exit 1
fi
trap 'rm -rf "$tmp"; [ -n "${bg:-}" ] && kill $bg 2>/dev/null' EXIT
expect() { # what, want, got
	[ "$2" = "$3" ] && return 0
	echo "FAIL: $1: want '$2', got '$3'"
	fail=1
}

start_bg() { # command...; sets bg, waits until it printed "ready": its runtime is set up
	"$@" >"$tmp/bg.out" 2>&1 &
	bg=$!
	# a busy machine may take seconds to start it; 30 s means it is broken
	for _ in $(seq 600); do
		grep -q ready "$tmp/bg.out" 2>/dev/null && return
		sleep 0.05
	done
	echo "FAIL: $1 never said it was ready: $(head -3 "$tmp/bg.out")"
	fail=1
}

echo "-- stand-in 3.14 runtime"
start_bg $T/fake_python_runtime
expect "probe" "version 0x30e00f0 enabled 1 path_max 512 free_threaded 0" \
	"$($T/trace_remote probe $bg)"
$T/trace_remote send $bg /tmp/linescope-remote-test.py
expect "send" 0 $?
wait $bg
expect "stand-in saw the request" 0 $?
expect "stand-in output" "ready
run /tmp/linescope-remote-test.py" "$(cat "$tmp/bg.out")"
bg=

start_bg $T/fake_python_runtime disabled
$T/trace_remote send $bg /tmp/x.py 2>/dev/null
expect "send to a target that disabled remote execution (EACCES)" 13 $?
kill $bg
wait $bg 2>/dev/null
bg=

echo "-- real interpreters: refused with a reason"
for py in /usr/bin/python3.11 /root/.pyenv/versions/3.13.0/bin/python3; do
	start_bg "$py" -c 'import time; print("ready", flush=True); time.sleep(5)'
	msg=$($T/trace_remote probe $bg 2>&1)
	expect "probe $py (EPROTONOSUPPORT)" 93 $?
	case "$msg" in
	*"older than 3.13"* | *"needs 3.14 or newer"*) ;;
	*) echo "FAIL: probe $py: unclear message: $msg"; fail=1 ;;
	esac
	kill $bg
	wait $bg 2>/dev/null
	bg=
done
$T/trace_remote probe $$ 2>/dev/null
expect "probe a process without Python (ENOENT)" 2 $?

echo "-- the loader script, run by each interpreter"
site=$(realpath $TRACE_SITE)
$T/trace_remote loader "$site" >"$tmp/loader.py"
expect "loader source" 0 $?
for py in $TRACE_PYTHONS; do
	out=$("$py" -S -c '
import sys
before = list(sys.path)
exec(open(sys.argv[1]).read(), {"__name__": "__remote__"})
m = sys.modules.get("linescope_usdt")
print(bool(m) and m.__file__.startswith(sys.argv[2] + "/"), sys.path == before,
      "_linescope_load" in globals())
' "$tmp/loader.py" "$site" 2>&1)
	expect "loader in $py" "True True False" "$out"
done
exit $fail
