#!/bin/bash
# SPDX-License-Identifier: MIT
# The GPU check: real kernels, copies, allocations and CUDA graphs, from C and from PyTorch, on a
# machine with an NVIDIA GPU (written for an H200; any GPU with an R580+ driver works for the C
# part). It asserts that every kernel is charged to the thread that launched it (each workload
# thread launches from exactly one line, so thread = line here; line attribution through the
# Python-stack walker is the collector's e2e test) and that each thread's GPU time matches its
# stream's device time measured with CUDA events within 5 %, and prints the per-launch overhead
# with and without the injection library.
#
# Prepare on the build machine:  make gpu-check-bundle       (builds .output/gpu-check: the
#                                library, a static gpu-capture, the CUDA workload, libcupti.so.13)
# Run there, from the repository root, as root (BPF), with .output/gpu-check carried along:
#     bash tests/gpu/h200-check.sh            (logs and JSON to $OUT, or a temporary directory)
# At most 8 minutes: every step has a time limit taken from what is left of 460 s.
# Exit status: 0 all checks passed, 1 a check failed, 2 the machine cannot run the check.
set -u
cd "$(dirname "$0")/../.."
B=.output/gpu-check
OUT=${OUT:-$(mktemp -d /tmp/h200-check.XXXXXX)}
mkdir -p "$OUT"
exec > >(tee "$OUT/h200-check.log") 2>&1
t0=$SECONDS
budget=460
status=0
summary=()

step() { echo; echo "== $* (at $((SECONDS - t0)) s)"; }
left() {
	local l=$((budget - (SECONDS - t0)))
	[ "$l" -gt "$1" ] && l=$1
	[ "$l" -lt 5 ] && l=5
	echo "$l"
}
note() { summary+=("$1"); }
fail() { echo "FAIL: $*"; note "FAIL: $*"; status=1; }

step "machine"
if ! nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; then
	echo "no NVIDIA GPU or driver here (nvidia-smi failed): nothing to check"
	exit 2
fi
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1 | tr -d ' ')
echo "kernel $(uname -r); uid $(id -u); driver $driver; $(nvidia-smi | grep -o 'CUDA Version: [0-9.]*')"
for f in liblinescope_cupti.so gpu-capture cuda_workload libcupti.so.13; do
	if [ ! -e "$B/$f" ]; then
		echo "missing $B/$f: run 'make gpu-check-bundle' and carry .output/gpu-check"
		exit 2
	fi
done
LIB=$PWD/$B/liblinescope_cupti.so
CAP=$B/gpu-capture
root=0
[ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] && root=1
[ $root = 1 ] || echo "not root or no BTF: BPF capture cannot run; only the idle overhead is measured"
c_ok=1
if [ "${driver%%.*}" -lt 580 ] 2>/dev/null; then
	echo "driver $driver is older than R580: CUDA 13 (the C workload, libcupti.so.13) cannot run"
	c_ok=0
fi
py=$(command -v python3 || true)
torch_ok=0
if [ -n "$py" ] && timeout "$(left 90)" "$py" -c 'import torch, sys
print("torch", torch.__version__, "CUDA", torch.version.cuda, "device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)
sys.exit(0 if torch.cuda.is_available() else 1)'; then
	torch_ok=1
else
	echo "no PyTorch with CUDA here: the PyTorch part is skipped"
fi

# per-launch cost: NAME CMD... -> prints and records "<ns>" from the workload's "*_ns N" line
measure() {
	local name=$1 v
	shift
	v=$("$@" 2>"$OUT/$name.err" | awk '/_ns /{print $2}' | tail -1)
	[ -n "$v" ] || echo "  $name: no measurement: $(tail -2 "$OUT/$name.err" | tr '\n' ' ')" >&2
	echo "$v"
}

overhead_report() { # LABEL NONE IDLE TRACED SAMPLED [PROBED]
	local label=$1 none=$2 idle=$3 traced=$4 sampled=$5 probed=${6:-}
	"${py:-python3}" - "$label" "$none" "$idle" "$traced" "$sampled" "$probed" <<'EOF' || echo "  $label: none=$2 idle=$3 traced=$4 sampled=$5 probed=$probed ns"
import sys
label, *vals = sys.argv[1:]
names = ["without the library", "library loaded, no tracer", "library traced (BPF attached)",
         "traced, LINESCOPE_GPU_SAMPLE=16", "traced, every launch probed"]
base = float(vals[0]) if vals[0] else None
print(f"  {label}: per launch")
for n, v in zip(names, vals):
    if not v:
        print(f"    {n:34s}         -")
    elif base:
        v = float(v)
        print(f"    {n:34s} {v:9.1f} ns  ratio {v / base:5.2f}x  {v - base:+8.1f} ns")
    else:
        print(f"    {n:34s} {float(v):9.1f} ns")
EOF
}

if [ $c_ok = 1 ]; then
	export_cupti="LINESCOPE_CUPTI_LIB=$PWD/$B/libcupti.so.13"
	if [ $root = 1 ]; then
		step "C workload: runtime, driver (cuLaunchKernelEx) and graph launches, copies, sets, allocations"
		if timeout "$(left 120)" "$CAP" --lib "$LIB" --kernels -o "$OUT/c.json" -- \
			env "$export_cupti" "$B/cuda_workload" work "$OUT/c-expect.json" &&
			[ -s "$OUT/c-expect.json" ]; then
			if "${py:-python3}" tests/gpu/h200/check_h200.py c "$OUT/c.json" "$OUT/c-expect.json"; then
				note "C workload: passed"
			else
				fail "C workload checks"
			fi
		else
			fail "C workload did not run under gpu-capture (see above)"
		fi
	fi
	step "C per-launch overhead (20000 empty kernels)"
	n=20000
	none=$(measure c-none timeout "$(left 60)" "$B/cuda_workload" overhead $n)
	idle=$(measure c-idle timeout "$(left 60)" env CUDA_INJECTION64_PATH="$LIB" "$export_cupti" \
		"$B/cuda_workload" overhead $n)
	traced=""
	sampled=""
	if [ $root = 1 ]; then
		traced=$(measure c-traced timeout "$(left 60)" "$CAP" --lib "$LIB" -o "$OUT/c-overhead.json" -- \
			env "$export_cupti" "$B/cuda_workload" overhead $n)
		sampled=$(measure c-sampled timeout "$(left 60)" "$CAP" --lib "$LIB" -o "$OUT/c-sampled.json" -- \
			env "$export_cupti" LINESCOPE_GPU_SAMPLE=16 "$B/cuda_workload" overhead $n)
	fi
	overhead_report "C cudaLaunchKernel" "$none" "$idle" "$traced" "$sampled" | tee -a "$OUT/overhead.txt"
	[ -n "$none" ] && [ -n "$idle" ] || fail "C overhead could not be measured"
fi

if [ $torch_ok = 1 ]; then
	# the CUPTI PyTorch ships with, if any, so that the process has exactly one libcupti
	tcupti=$(timeout "$(left 60)" "$py" -c 'import glob, os, torch
base = os.path.dirname(os.path.dirname(torch.__file__))
hits = sorted(glob.glob(os.path.join(base, "nvidia", "**", "libcupti.so.1[23]*"), recursive=True))
print(os.path.dirname(hits[-1]) if hits else "")' 2>/dev/null)
	tenv=()
	if [ -n "$tcupti" ]; then
		echo "PyTorch's CUPTI: $tcupti"
		tenv=(LD_LIBRARY_PATH="$tcupti${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
	elif [ $c_ok = 1 ]; then
		tenv=(LD_LIBRARY_PATH="$PWD/$B${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
	fi
	if [ $root = 1 ]; then
		step "PyTorch: matmuls and elementwise ops from three threads and lines, a CUDA graph replay"
		if timeout "$(left 180)" "$CAP" --lib "$LIB" --kernels -o "$OUT/torch.json" -- \
			env "${tenv[@]}" "$py" tests/gpu/h200/torch_workload.py work "$OUT/torch-expect.json" &&
			[ -s "$OUT/torch-expect.json" ]; then
			if "$py" tests/gpu/h200/check_h200.py torch "$OUT/torch.json" "$OUT/torch-expect.json"; then
				note "PyTorch workload: passed"
			else
				fail "PyTorch workload checks"
			fi
		else
			fail "PyTorch workload did not run under gpu-capture (see above)"
		fi
	fi
	step "PyTorch per-op overhead (20000 x.add_(1) on a small tensor)"
	n=20000
	none=$(measure t-none timeout "$(left 60)" env "${tenv[@]}" "$py" tests/gpu/h200/torch_workload.py overhead $n)
	idle=$(measure t-idle timeout "$(left 60)" env "${tenv[@]}" CUDA_INJECTION64_PATH="$LIB" \
		"$py" tests/gpu/h200/torch_workload.py overhead $n)
	traced=""
	sampled=""
	probed=""
	if [ $root = 1 ]; then
		traced=$(measure t-traced timeout "$(left 60)" "$CAP" --lib "$LIB" -o "$OUT/t-overhead.json" -- \
			env "${tenv[@]}" "$py" tests/gpu/h200/torch_workload.py overhead $n)
		sampled=$(measure t-sampled timeout "$(left 60)" "$CAP" --lib "$LIB" -o "$OUT/t-sampled.json" -- \
			env "${tenv[@]}" LINESCOPE_GPU_SAMPLE=16 "$py" tests/gpu/h200/torch_workload.py overhead $n)
		# one line launches them all: traced batches them under the first; this probes each
		probed=$(measure t-probed timeout "$(left 60)" "$CAP" --lib "$LIB" -o "$OUT/t-probed.json" -- \
			env "${tenv[@]}" LINESCOPE_GPU_SAME_LOCATION=0 "$py" tests/gpu/h200/torch_workload.py overhead $n)
	fi
	overhead_report "PyTorch add_" "$none" "$idle" "$traced" "$sampled" "${probed:-}" | tee -a "$OUT/overhead.txt"
	[ -n "$none" ] && [ -n "$idle" ] || fail "PyTorch overhead could not be measured"

	step "a second CUPTI subscriber: torch.profiler inside a process that has the library"
	if timeout "$(left 60)" env "${tenv[@]}" CUDA_INJECTION64_PATH="$LIB" "$py" -c '
import torch
x = torch.ones(8, device="cuda")
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    x.add_(1)
    torch.cuda.synchronize()
print("profiler events:", len(prof.events()))' >"$OUT/conflict.log" 2>&1; then
		note "second subscriber: the application ran on"
	else
		fail "second subscriber: the application failed ($(tail -1 "$OUT/conflict.log"))"
	fi
	sed 's/^/  | /' "$OUT/conflict.log" | tail -8
fi

step "summary"
for s in "${summary[@]}"; do echo "  $s"; done
echo "  logs and captures: $OUT"
exit $status
