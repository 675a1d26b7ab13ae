#!/bin/bash
# SPDX-License-Identifier: MIT
# Rebuilds tests/fuzz/corpus/ (committed; run as root, once, when a format changes): real files
# for the file readers, tests/fuzz/seeds.c for the record parsers.
set -eu
cd "$(dirname "$0")/../.."
c=tests/fuzz/corpus
sid=${LS_SID_ROOT:-/var/cache/linescope/sid-root}
mkdir -p $c/{linetable,debug_offsets,elf,profile,pytok,pyindex,activity,trace,gpu_records}
# location tables of real code objects, each after its co_firstlineno (3.11 and 3.13 formats)
for py in /usr/bin/python3.11 /root/.pyenv/versions/3.13.0/bin/python3; do
	"$py" - "$c/linetable" <<'PYEOF'
import struct, sys, json, os
def walk(co):
    yield co
    for k in co.co_consts:
        if hasattr(k, "co_code"):
            yield from walk(k)
src = open(json.__file__.replace("__init__.py", "decoder.py")).read()
for i, co in enumerate(list(walk(compile(src, "decoder.py", "exec")))[:6]):
    open(os.path.join(sys.argv[1], "py%d%d-%d" % (sys.version_info[:2] + (i,))), "wb").write(
        struct.pack("<i", co.co_firstlineno) + co.co_linetable)
PYEOF
done
# _PyRuntime as 3.13-3.15 lay it out: Py_Version, the section's size, then the section
for v in 3.13 3.14 3.15; do
	exe=$sid/usr/bin/python$v
	objcopy -O binary --only-section=.PyRuntime "$exe" /tmp/pyruntime.$$
	hex=$(chroot "$sid" "/usr/bin/python$v" -c 'import sys; print("%08x" % sys.hexversion)')
	size=$(stat -c %s /tmp/pyruntime.$$)
	{
		"$PYTHON3" -c "import struct,sys; sys.stdout.buffer.write(struct.pack('<II', 0x$hex, $size))"
		head -c 4096 /tmp/pyruntime.$$
	} >"$c/debug_offsets/py$v"
	rm -f /tmp/pyruntime.$$
done
# a small ELF with a .PyRuntime section and SDT notes
cp .output/tests/bpf/fake_python_runtime "$c/elf/fake_python_runtime"
cc -O1 -o "$c/elf/tiny" -x c - <<'CEOF'
#include <sys/sdt.h>
int Py_Version = 0x030b02f0;
int main(void) { DTRACE_PROBE(python, line); return 0; }
CEOF
# a real profile of a short run, and of one with two processes
./linescope-bpf -q --mode cpu --profile "$c/profile/cpu.lsprof" -o /tmp/seed.html -- \
	/usr/bin/python3.11 -c 'import time
t = time.thread_time()
while time.thread_time() - t < 0.2: pass'
./linescope-bpf -q --profile "$c/profile/wall.lsprof" -o /tmp/seed.html -- \
	/usr/bin/python3.11 -c 'import os, time
if os.fork() == 0:
    time.sleep(0.1)
    os._exit(0)
t = time.thread_time()
while time.thread_time() - t < 0.1: pass
os.wait()'
rm -f /tmp/seed.html
for f in "$c"/profile/*.lsprof; do sqlite3 "$f" "PRAGMA journal_mode=DELETE; VACUUM" >/dev/null; done
# Python sources: run.sh adds tests/fixtures/pysyms; corpus/pytok and corpus/pyindex hold only
# seeds of their own (signatures.py; two_files, split at "\0\0" as fuzz_pyindex.c does)
.output/fuzz/seeds "$c"
