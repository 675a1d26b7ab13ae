#!/bin/bash
# SPDX-License-Identifier: MIT
# The injection library inside an application on the fake driver, without a tracer (no root):
# every failure must leave the application running to a normal exit with at most one clear
# stderr line, and success must be silent. Run from the repository root after `make gpu`.
set -u
out=.output/tests/gpu
app=$out/fake_app
lib=$PWD/.output/gpu/liblinescope_cupti.so
fail=0
n=0

# expect NAME MODE STDERR-PATTERN|- [ENV=VALUE...]: exit 0, the app's ok line, and stderr
# matching the pattern ("-": stderr must be empty)
expect() {
	local name=$1 mode=$2 pat=$3 err rc outp
	shift 3
	n=$((n + 1))
	err=$(mktemp)
	outp=$(env CUDA_INJECTION64_PATH="$lib" "$@" "$app" "$mode" 2>"$err")
	rc=$?
	if [ $rc != 0 ] || ! grep -q "^fake_app: $mode ok init=1 " <<<"$outp"; then
		echo "FAIL $name: exit $rc, stdout: $outp, stderr: $(cat "$err")"
		fail=1
	elif [ "$pat" = - ] && [ -s "$err" ]; then
		echo "FAIL $name: unexpected stderr: $(cat "$err")"
		fail=1
	elif [ "$pat" != - ] && ! grep -Eq "$pat" "$err"; then
		echo "FAIL $name: stderr does not match /$pat/: $(cat "$err")"
		fail=1
	elif [ "$pat" != - ] && [ "$(wc -l <"$err")" != 1 ]; then
		echo "FAIL $name: more than one stderr line: $(cat "$err")"
		fail=1
	else
		echo "ok   $name"
	fi
	rm -f "$err"
}

expect "loaded, no tracer: silent" run -
expect "initialised three times: idempotent" twice -
expect "fork: child carries on" fork -
expect "another CUPTI subscriber" run \
	'^linescope-gpu\[[0-9]+\]: GPU collection is off: CUPTI is already used by Nsight Systems' \
	FAKE_CUPTI_HOLDER="Nsight Systems"
expect "CUPTI refuses (old driver)" run \
	'GPU collection is off: cuptiSubscribe failed: CUPTI_ERROR_UNKNOWN \(error 999\); is the NVIDIA driver new enough' \
	FAKE_CUPTI_SUBSCRIBE_ERR=999
expect "no libcupti" run \
	'GPU collection is off: LINESCOPE_CUPTI_LIB=/nonexistent/libcupti.so.13 cannot be loaded' \
	LINESCOPE_CUPTI_LIB=/nonexistent/libcupti.so.13
expect "disabled by LINESCOPE_GPU=0" run - LINESCOPE_GPU=0
expect "bad setting ignored" run 'ignoring LINESCOPE_GPU_BUFFER_KB=abc \(expected 16\.\.65536\)' \
	LINESCOPE_GPU_BUFFER_KB=abc
expect "no NVML (no driver)" run - LINESCOPE_NVML_LIB=/nonexistent/libnvidia-ml.so.1
expect "quiet" run - LINESCOPE_GPU_LOG=0 FAKE_CUPTI_HOLDER="Nsight Systems"

echo "inject_failures: $n cases, $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
