# SPDX-License-Identifier: MIT
"""gpu_ticks.py EXPECT.json N: a job long enough to be cut by --rotate, on the fake driver. It
holds one 64 MiB allocation throughout and launches N kernels of 1 ms device time from its
LAUNCH line, one every 2 ms of CPU; then writes what the line and the process should be charged
over the whole run."""
import ctypes
import json
import os
import sys
import time

MS = 1_000_000
lib = ctypes.CDLL(os.environ["FAKECUDA_LIB"])
lib.fakecuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int]
lib.fakecuda_malloc.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)]
lib.fakecuda_free.argtypes = [ctypes.c_uint64]


def spin():
    t = time.thread_time()
    while time.thread_time() - t < 0.002:
        pass


def line_of(mark):
    with open(__file__) as f:
        return next(n for n, text in enumerate(f, 1) if mark in text and "line_of" not in text)


n = int(sys.argv[2])
lib.fakecuda_init()
addr = ctypes.c_uint64()
lib.fakecuda_malloc(64 << 20, ctypes.byref(addr))
for _ in range(n):
    lib.fakecuda_launch(b"tick_kernel", 1 * MS, 0, 0)  # LAUNCH
    spin()
lib.fakecuda_free(addr.value)
with open(sys.argv[1], "w") as f:
    json.dump({"pid": os.getpid(), "line": line_of("# LAUNCH"), "kernels": n, "gpu_ns": n * MS,
               "alloc": 64 << 20}, f)
