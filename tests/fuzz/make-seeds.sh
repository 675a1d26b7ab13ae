#!/bin/bash
# SPDX-License-Identifier: MIT
# Rebuilds tests/fuzz/corpus/ (committed; run as root, once, when a format changes): real files
# for the file readers, tests/fuzz/seeds.c for the record parsers.
set -eu
cd "$(dirname "$0")/../.."
c=tests/fuzz/corpus
sid=${LS_SID_ROOT:-/var/cache/linescope/sid-root}
mkdir -p $c/{linetable,debug_offsets,elf,profile,pytok,pyindex,activity,trace,gpu_records,ipynb,ipyhistory,jobenv}
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
# and one with a timeline (on-CPU ticks, a sleep, RSS readings) for the Chrome trace
./linescope-bpf -q --timeline --memory -F 199 --profile "$c/profile/timeline.lsprof" \
	-o /tmp/seed.html -- /usr/bin/python3.11 -c 'import time
t = time.thread_time()
while time.thread_time() - t < 0.05: pass
time.sleep(0.05)
b = bytearray(1 << 22)'
# with two kernels on a device stream, as --gpu would add (a GPU cannot run here)
sqlite3 "$c/profile/timeline.lsprof" "INSERT INTO gpu_timeline VALUES
 (1, 0, 7, 1000000, 500000, 1, 'sm90_gemm', 1, 1, 0), (1, 0, 7, 1200000, 300000, 2, NULL, 1, 1, 4096)"
rm -f /tmp/seed.html
# a notebook: cpu.lsprof's script as a verified cell, a frozen module's file as an unverified one
# (a real nbconvert run stores megabytes of library sources)
cp "$c/profile/cpu.lsprof" "$c/profile/notebook.lsprof"
sqlite3 "$c/profile/notebook.lsprof" "INSERT INTO sources(id, hash, size, text) VALUES (100,
 'nbseed', 3, CAST('import time
t = time.thread_time()
while time.thread_time() - t < 0.2: pass' AS BLOB));
UPDATE files SET path = '/tmp/ipykernel_7/2701673649.py', source_id = 100 WHERE id = 4;
UPDATE files SET path = '/tmp/ipykernel_7/5.py', kind = 'python',
 unavailable = 'notebook cell 5: no text found' WHERE id = 3;
INSERT INTO notebooks VALUES (1, 1, 7, '/w/a.ipynb', NULL, 'a note', NULL, NULL, NULL);
INSERT INTO cells VALUES (3, 1, 1, NULL, NULL, 5), (4, 1, 2, 2, 'notebook', 2701673649);"
for f in "$c"/profile/*.lsprof; do sqlite3 "$f" "PRAGMA journal_mode=DELETE; VACUUM" >/dev/null; done
# notebook files and an IPython history database (its own schema, two cells)
/usr/bin/python3 tests/fixtures/make_notebooks.py "$c/ipynb"
rm -f "$c/ipyhistory/history.sqlite"
/usr/bin/python3 - "$c/ipyhistory/history.sqlite" <<'PYEOF'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript('''CREATE TABLE sessions (session integer primary key autoincrement, start
 timestamp, end timestamp, num_cmds integer, remark text);
CREATE TABLE history (session integer, line integer, source text, source_raw text,
 PRIMARY KEY (session, line));
CREATE TABLE output_history (session integer, line integer, output text,
 PRIMARY KEY (session, line));''')
db.execute("INSERT INTO history VALUES (1, 1, 'import time', 'import time')")
db.execute("INSERT INTO history VALUES (1, 2, ?, '%time x = 1')",
           ("get_ipython().run_line_magic('time', 'x = 1')",))
db.commit()
PYEOF
# environments: a torchrun worker's, and hostile values
printf 'PATH=/bin\0RANK=3\0LOCAL_RANK=1\0WORLD_SIZE=8\0MASTER_ADDR=10.0.0.1\0MASTER_PORT=29500' \
	>"$c/jobenv/torchrun"
printf 'RANK=99999999\0WORLD_SIZE=0\0RANK=-1' >"$c/jobenv/hostile"
# corpus/spark_codec: tests/fixtures/spark/make-compressed.sh writes it (Spark's codecs, in Java)
# Python sources: run.sh adds tests/fixtures/pysyms; corpus/pytok and corpus/pyindex hold only
# seeds of their own (signatures.py; two_files, split at "\0\0" as fuzz_pyindex.c does)
.output/fuzz/seeds "$c"
