#!/bin/bash
# SPDX-License-Identifier: MIT
# The GPU data path end to end, as root, on the fake CUDA driver: injection library -> USDT ->
# bpf/gpu.bpf.c -> ring buffer -> userspace/gpu_agg.c, driven by a real Python process whose threads
# launch kernels of known device time (tests/gpu/gpu_app.py), and by the fake C application for the
# failure paths, also under Debian sid's 3.13-3.15. tests/gpu/check_capture.py compares what
# arrived with what the application did.
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
# Debian sid's 3.13, 3.14 and 3.15, chrooted: the library reads each launching thread's Python
# location through that interpreter's own _Py_DebugOffsets (gpu/pyloc.c), and batches launches
# from one location under the first; every launch must still be charged to its thread, exactly.
root=$(tests/fixtures/pyroot.sh) || { echo "FAIL: cannot build the sid root"; exit 1; }
in=/tmp/ls-gpu-sid
mkdir -p "$root$in/fake"
cp "$lib" tests/gpu/gpu_app.py tests/gpu/marks.py "$root$in/"
cp "$out"/fake/*.so* "$root$in/fake/"
# a sanitizer build's libraries need its runtimes, which the sid root does not have
for so in $(ldd "$lib" "$out/fake/libcupti.so.13" | awk '/(asan|ubsan)[^ ]* => \//{print $3}' | sort -u); do
	cp "$so" "$root$in/fake/"
done
mountpoint -q "$root/proc" || mount -t proc proc "$root/proc" || { echo "FAIL: mount proc"; exit 1; }
for v in 3.13 3.14 3.15; do
	if ! "$capture" --lib "$root$in/liblinescope_cupti.so" -o "$tmp/sid$v.json" -- \
		chroot "$root" env CUDA_INJECTION64_PATH="$in/liblinescope_cupti.so" \
		FAKECUDA_LIB="$in/fake/libcupti.so.13" LD_LIBRARY_PATH="$in/fake" \
		"/usr/bin/python$v" "$in/gpu_app.py" "$in/exp$v.json" >"$tmp/sid$v.log" 2>&1; then
		echo "FAIL sid $v: gpu-capture failed:"
		sed 's/^/  /' "$tmp/sid$v.log"
		fail=1
		continue
	fi
	# the expectations name the child's file as the chroot sees it
	"$py" -c 'import json, sys; e = json.load(open(sys.argv[1])); e["child"] = sys.argv[2] + e["child"]; json.dump(e, open(sys.argv[3], "w"))' \
		"$root$in/exp$v.json" "$root" "$tmp/sid$v-exp.json"
	if "$py" tests/gpu/check_capture.py main "$tmp/sid$v.json" "$tmp/sid$v-exp.json"; then
		echo "ok   sid $v (chrooted)"
	else
		echo "FAIL sid $v (capture: $tmp/sid$v.json)"
		fail=1
	fi
done
umount "$root/proc" 2>/dev/null
rm -rf "${root:?}$in"
[ $fail = 0 ] || trap - EXIT
exit $fail
