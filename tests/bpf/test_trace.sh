#!/bin/bash
# SPDX-License-Identifier: MIT
# Exact line counts, end to end: tests/fixtures/trace/loops.py runs under trace_loader with
# python-usdt (Debian python3.11 and pyenv 3.11.7 / 3.12.1 / 3.13.0) and with CPython's native
# USDT probes (Debian python3.11). trace_check.py asserts exact hits per line, threads counted
# apart, calls per function, an os.fork() child and a subprocess traced, library time folded into
# the calling line, and no lost or malformed batches.
set -u
cd "$(dirname "$0")/../.."
. tests/bpf/trace_lib.sh

export LS_N_MAIN=20000 LS_N_THREADS=3000,5000,7000 LS_N_CALLS=2000 LS_N_GEN=500
export LS_N_FORK=700 LS_N_CHILD=900 LS_SLEEP_MS=150 LS_N_LIB=20000 LS_N_EXC=50
export LS_STATE_OUT=$tmp/state
for py in $TRACE_PYTHONS; do
	echo "-- python-usdt, $py"
	if ! PYTHONPATH=$TRACE_SITE $TRACE_LOADER -o "$tmp/out" $(trace_usdt_args) -- \
		"$py" tests/fixtures/trace/loops.py; then
		echo "FAIL: trace_loader with $py"
		fail=1
		continue
	fi
	/usr/bin/python3.11 tests/bpf/trace_check.py usdt "$tmp/out" tests/fixtures/trace/loops.py ||
		fail=1
done

# native probes are per process (attached to the command's pid only): no children here
echo "-- native python:line / function__entry / function__return, /usr/bin/python3.11"
rm -f "$LS_STATE_OUT"
if LS_N_FORK=0 LS_N_CHILD=0 $TRACE_LOADER -o "$tmp/out" --native /usr/bin/python3.11 -- \
	/usr/bin/python3.11 tests/fixtures/trace/loops.py; then
	LS_N_FORK=0 LS_N_CHILD=0 /usr/bin/python3.11 tests/bpf/trace_check.py native "$tmp/out" \
		tests/fixtures/trace/loops.py || fail=1
else
	echo "FAIL: trace_loader --native"
	fail=1
fi
exit $fail
