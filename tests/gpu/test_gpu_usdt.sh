#!/bin/bash
# SPDX-License-Identifier: MIT
# The GPU data path end to end, as root, on the fake CUDA driver: injection library -> USDT ->
# bpf/gpu.bpf.c -> ring buffer -> userspace/gpu_agg.c, driven by a real Python process whose threads
# launch kernels of known device time (tests/gpu/gpu_app.py), and by the fake C application for the
# failure paths. tests/gpu/check_capture.py compares what arrived with what the application did.
set -u
cd "$(dirname "$0")/../.."
out=.output/tests/gpu
capture=$out/gpu-capture
lib=$PWD/.output/gpu/liblinescope_cupti.so
py=${PYTHON311:-/usr/bin/python3.11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FAKECUDA_LIB=$PWD/$out/fake/libcupti.so.13
export LD_LIBRARY_PATH=$PWD/$out/fake # the fake libnvidia-ml.so.1
fail=0

run() { # NAME CHECK-ARGS... -- CAPTURE-ARGS...
	local name=$1 checkargs=() capargs=()
	shift
	while [ "$1" != -- ]; do
		checkargs+=("$1")
		shift
	done
	shift
	if ! "$capture" --lib "$lib" -o "$tmp/$name.json" "$@" >"$tmp/$name.log" 2>&1; then
		echo "FAIL $name: gpu-capture failed:"
		sed 's/^/  /' "$tmp/$name.log"
		fail=1
		return
	fi
	if "$py" tests/gpu/check_capture.py "${checkargs[@]}"; then
		echo "ok   $name"
	else
		echo "FAIL $name (capture: $tmp/$name.json)"
		sed 's/^/  | /' "$tmp/$name.log"
		fail=1
	fi
}

run main main "$tmp/main.json" "$tmp/main-exp.json" -- \
	-- "$py" tests/gpu/gpu_app.py "$tmp/main-exp.json"
run late late "$tmp/late.json" "$tmp/late-exp.json" -- --attach-on "$tmp/phase1" \
	-- "$py" tests/gpu/gpu_app.py "$tmp/late-exp.json" --attach-on "$tmp/phase1"
run conflict conflict "$tmp/conflict.json" -- \
	-- env FAKE_CUPTI_HOLDER="Nsight Systems" "$out/fake_app" run
run noactivity noactivity "$tmp/noactivity.json" -- \
	-- env FAKE_CUPTI_ENABLE_ERR=999 "$out/fake_app" run
run zerots zerots "$tmp/zerots.json" -- -- env FAKE_CUPTI_ZERO_TS=2 "$out/fake_app" run
run fork fork "$tmp/fork.json" -- -- "$out/fake_app" fork
run sampled sampled "$tmp/sampled.json" -- -- env LINESCOPE_GPU_SAMPLE=4 "$out/fake_app" many
run nonvml nonvml "$tmp/nonvml.json" -- \
	-- env LINESCOPE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 "$out/fake_app" run
run hiddenpid hiddenpid "$tmp/hiddenpid.json" -- -- env FAKE_NVML_HIDE_PID=1 "$out/fake_app" run
[ $fail = 0 ] || trap - EXIT
exit $fail
