#!/bin/bash
# SPDX-License-Identifier: MIT
# With no tracer attached, python-usdt stays off: sitecustomize loads linescope_usdt, yet no
# hook is installed (sys.settrace / C trace function / sys.monitoring tool ids / threading hook),
# no per-thread state is created, and the next sitecustomize on sys.path still runs (Debian's
# own, or a user's). Overhead with the module loaded is measured by bench/trace, not here.
set -u
cd "$(dirname "$0")/../.."
. tests/bpf/trace_lib.sh

mkdir -p "$tmp/user"
printf 'import builtins\nbuiltins.LS_USER_SITECUSTOMIZE = True\n' >"$tmp/user/sitecustomize.py"
for py in $TRACE_PYTHONS; do
	echo "-- $py"
	chained=()
	# Debian's interpreter ships a sitecustomize of its own, which must still run
	[ "$py" = /usr/bin/python3.11 ] && chained=(/usr/lib/python3.11/sitecustomize.py)
	PYTHONPATH=$TRACE_SITE "$py" tests/fixtures/trace/idle.py "${chained[@]}" || fail=1
	PYTHONPATH=$TRACE_SITE:$tmp/user "$py" tests/fixtures/trace/idle.py \
		"$tmp/user/sitecustomize.py" || fail=1
	PYTHONPATH=$TRACE_SITE:$tmp/user "$py" -c \
		'import builtins, sys; sys.exit(0 if getattr(builtins, "LS_USER_SITECUSTOMIZE", 0) else 1)' ||
		{ echo "FAIL: the user's sitecustomize did not run"; fail=1; }
done
# an interpreter with no build (here Python 3.10) starts normally, untraced
py310=/root/.pyenv/versions/3.10.13/bin/python3
if [ -x $py310 ]; then
	echo "-- $py310 (no build)"
	out=$(PYTHONPATH=$TRACE_SITE:$tmp/user $py310 -c 'import sys, builtins
print("linescope_usdt" in sys.modules, getattr(builtins, "LS_USER_SITECUSTOMIZE", 0))' 2>&1)
	[ "$out" = "False True" ] || { echo "FAIL: python 3.10 with the site directory: $out"; fail=1; }
fi
exit $fail
