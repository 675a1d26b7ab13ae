#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Verifies the CPython facts LineScope relies on against live interpreters (root needed):
#   1. the location-table decoder of pyoracle.py equals co_positions() in every interpreter;
#   2. pytls_check.py: autoTSSkey TSD slots and the _Py_tss_tstate TLS offset hold as documented;
#   3. pyoracle.py, walking each running pytarget.py from outside through /proc/PID/mem, prints
#      exactly the stacks the target reports for itself (and sees the GIL with the busy thread).
# Interpreters: Debian 3.11, pyenv 3.11.7 / 3.12.1 / 3.13.0, and Debian sid 3.13 / 3.14 / 3.15
# running chrooted in the root of tests/fixtures/pyroot.sh; sid 3.14 once more in its own pid and
# mount namespaces (pids shown as the host sees them, namespace pid beside them).
#
#   tests/tools/check_pyoracle.sh        # prints one line per check; exit 1 on any failure
set -u

here=$(cd "$(dirname "$0")" && pwd)
oracle="/usr/bin/python3.11 $here/pyoracle.py"
pyenv=${LS_PYENV_ROOT:-/root/.pyenv/versions}
if [ "$(id -u)" != 0 ]; then
	echo "check_pyoracle.sh: needs root (chroot, /proc/PID/mem of other processes)" >&2
	exit 1
fi
root=$("$here/../fixtures/pyroot.sh") || exit 1
work=$(mktemp -d "$root/tmp/lsoracle.XXXXXX")
inside=${work#"$root"} # the same directory as the chrooted target sees it
cp "$here/pytarget.py" "$here/pyoracle.py" "$here/pytls_check.py" "$work/"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

pass=0
fail=0
result() { # name rc
	if [ "$2" = 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAILED: $1"
	fi
}

# name | command prefix that runs a python (host paths, or chroot) | directory it sees our files in
runs=(
	"debian-3.11|/usr/bin/python3.11|$work"
	"pyenv-3.11.7|$pyenv/3.11.7/bin/python3.11|$work"
	"pyenv-3.12.1|$pyenv/3.12.1/bin/python3.12|$work"
	"pyenv-3.13.0|$pyenv/3.13.0/bin/python3.13|$work"
	"sid-3.13|chroot $root /usr/bin/python3.13|$inside"
	"sid-3.14|chroot $root /usr/bin/python3.14|$inside"
	"sid-3.15|chroot $root /usr/bin/python3.15|$inside"
	"sid-3.14-pidns|unshare --pid --mount --fork --mount-proc=$root/proc chroot $root /usr/bin/python3.14|$inside"
)

for r in "${runs[@]}"; do
	IFS='|' read -r name py dir <<<"$r"
	if [ "${name%-pidns}" = "$name" ]; then
		$py "$dir/pyoracle.py" --selftest-decoder
		result "$name decoder" $?
		$py "$dir/pytls_check.py" | tail -n 1
		result "$name tstate lookup" "${PIPESTATUS[0]}"
	fi

	out=$work/$name.json
	rm -f "$out"
	$py "$dir/pytarget.py" "$dir/$name.json" &
	launcher=$!
	pids+=("$launcher")
	for _ in $(seq 200); do
		[ -f "$out" ] && break
		sleep 0.05
	done
	# chroot execs python (same pid); unshare --fork leaves python as its child
	pid=$launcher
	child=$(pgrep -P "$launcher" | head -n 1)
	[ -n "$child" ] && pid=$child && pids+=("$child")
	if [ ! -f "$out" ]; then
		echo "$name: the target never wrote $out"
		result "$name walk" 1
		continue
	fi
	$oracle "$pid" --expect "$out" >"$work/$name.oracle" 2>&1
	rc=$?
	grep -E '^(MISMATCH|pyoracle)|^pid ' "$work/$name.oracle"
	result "$name walk" $rc
	kill -9 "$pid" "$launcher" 2>/dev/null
	wait "$launcher" 2>/dev/null
done

echo "check_pyoracle: $pass passed, $fail failed"
[ $fail = 0 ]
