#!/bin/bash
# SPDX-License-Identifier: MIT
#
# For every CPython build we test, compiles tests/tools/pylayout_dump.c against that build's own
# internal headers and writes OUTDIR/<id>.txt: "binary PATH" (the ELF holding _PyRuntime) followed
# by the "name value" lines of the dump. tests/unit/test_pyversions.c compares these header truths
# with what userspace/pyversions.c derives from the binaries.
#
#   tests/tools/pylayouts.sh .output/tests/pylayouts
#
# The sid root (3.13, 3.14, 3.15) comes from tests/fixtures/pyroot.sh when run as root (it builds
# the root on first use); otherwise an already built root at $LS_SID_ROOT is used. Every build
# must be present: a missing one is an error, not a skip.
set -euo pipefail

out=${1:?usage: pylayouts.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
src=$here/pylayout_dump.c
cc=${CC:-cc}
pyenv=${LS_PYENV_ROOT:-/root/.pyenv/versions}

sid=${LS_SID_ROOT:-/var/cache/linescope/sid-root}
if [ "$(id -u)" = 0 ]; then
	sid=$("$here/../fixtures/pyroot.sh") # validates, builds on first use
elif [ ! -f "$sid/.linescope-sid-root" ]; then
	echo "pylayouts.sh: no sid root at $sid; run tests/fixtures/pyroot.sh as root once" >&2
	exit 1
fi

mkdir -p "$out"
rm -f "$out"/*.txt

# id | binary holding _PyRuntime | -I flags for that build's headers
builds=(
	"debian-3.11|/usr/bin/python3.11|-I/usr/include/python3.11"
	"pyenv-3.11.7|$pyenv/3.11.7/lib/libpython3.11.so.1.0|-I$pyenv/3.11.7/include/python3.11"
	"pyenv-3.12.1|$pyenv/3.12.1/lib/libpython3.12.so.1.0|-I$pyenv/3.12.1/include/python3.12"
	"pyenv-3.13.0|$pyenv/3.13.0/lib/libpython3.13.so.1.0|-I$pyenv/3.13.0/include/python3.13"
	"sid-3.13|$sid/usr/bin/python3.13|-I$sid/usr/include/python3.13 -idirafter $sid/usr/include"
	"sid-3.14|$sid/usr/bin/python3.14|-I$sid/usr/include/python3.14 -idirafter $sid/usr/include"
	"sid-3.15|$sid/usr/bin/python3.15|-I$sid/usr/include/python3.15 -idirafter $sid/usr/include"
)
for b in "${builds[@]}"; do
	IFS='|' read -r id bin inc <<<"$b"
	[ -f "$bin" ] || {
		echo "pylayouts.sh: $id: $bin not found" >&2
		exit 1
	}
	# shellcheck disable=SC2086 # $inc holds several flags
	$cc -DPy_BUILD_CORE $inc "$src" -o "$out/dump-$id" || {
		echo "pylayouts.sh: $id: cannot compile $src against its headers ($inc)" >&2
		exit 1
	}
	{
		echo "binary $bin"
		"$out/dump-$id"
	} >"$out/$id.txt.tmp"
	mv "$out/$id.txt.tmp" "$out/$id.txt"
	rm -f "$out/dump-$id"
done
echo "pylayouts.sh: ${#builds[@]} builds in $out" >&2
