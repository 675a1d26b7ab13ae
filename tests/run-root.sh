#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs the tests/<suite>/test_*.sh scripts that need root and a BPF-capable kernel.
# Fails (never skips) when not root: CI is root, so a skip would hide a broken suite.
set -u
suite=$1
if [ "$(id -u)" != 0 ]; then
	echo "test-$suite: needs root (CAP_BPF, CAP_PERFMON); run as root" >&2
	exit 1
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "test-$suite: kernel has no BTF (/sys/kernel/btf/vmlinux); cannot load BPF programs" >&2
	exit 1
fi
fail=0
n=0
for t in tests/$suite/test_*.sh; do
	[ -e "$t" ] || continue
	n=$((n + 1))
	echo "== $t"
	if ! bash "$t"; then
		echo "FAILED: $t"
		fail=1
	fi
done
echo "test-$suite: $n scripts, $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
