# SPDX-License-Identifier: MIT
"""A training loop on the fake driver (tests/gpu/fake) whose GPU is idle while known lines run,
for tests/e2e/test_gpu_idle.sh.

Each step launches a kernel (and, overlapping it, a copy and an NCCL kernel on other streams),
waits for it on the CPU (the device is busy), then runs host-side preprocessing (on a CPU, the
device idle; its own thread_time measured) and waits for data (blocked in a sleep, the device idle). A bystander thread that
never launches sleeps in a loop all along: none of the idle time may go to its line. What the
loop measured itself (time.time_ns, the clock the fake driver stamps its records with) is
written as JSON to the path given.

    python3 gpu_idle.py OUT.json      (FAKECUDA_LIB = the fake libcupti)
"""
import ctypes
import json
import os
import sys
import threading
import time

from marks import marks

MS = 1_000_000
STEPS = 12
KERNEL_NS, COPY_NS, NCCL_NS = 20 * MS, 4 * MS, 6 * MS
PRE_NS, LOAD_S = 40 * MS, 0.03

lib = ctypes.CDLL(os.environ["FAKECUDA_LIB"])
lib.fakecuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int]
lib.fakecuda_memcpy.argtypes = [ctypes.c_uint64, ctypes.c_int, ctypes.c_uint64]
HERE = os.path.abspath(__file__)


def preprocess(ns):
    """Spins for ns; returns how long it took, and the thread's CPU time in it."""
    c, t = time.thread_time_ns(), time.time_ns()
    end = t + ns
    while time.time_ns() < end: pass  # MARK:pre
    return time.time_ns() - t, time.thread_time_ns() - c


def bystander(stop):
    while not stop.is_set():
        time.sleep(0.005)  # MARK:bystander


def main():
    out = sys.argv[1]
    lib.fakecuda_init()
    stop = threading.Event()
    th = threading.Thread(target=bystander, args=(stop,))
    th.start()
    launches, pre, load, pre_cpu = [], [], [], []
    for _ in range(STEPS):
        t0 = time.time_ns()
        lib.fakecuda_launch(b"train_step", KERNEL_NS, 3, 0)  # MARK:launch
        lib.fakecuda_memcpy(64 << 20, 1, COPY_NS)
        lib.fakecuda_launch(b"ncclDevKernel_AllReduce_Sum_f32", NCCL_NS, 5, 0)
        t1 = time.time_ns()
        launches.append((t0, t1))
        end = t1 + KERNEL_NS + MS // 5
        while time.time_ns() < end: pass  # MARK:wait
        ns, c = preprocess(PRE_NS)
        pre.append(ns)
        pre_cpu.append(c)
        t = time.time_ns()
        time.sleep(LOAD_S)  # MARK:load
        load.append(time.time_ns() - t)
    stop.set()
    th.join()
    # idle inside the device's window: from each kernel's end to the next one's start; each
    # bound is known to within its launch call
    idle_lo = sum(b0 - (a1 + KERNEL_NS) for (_, a1), (b0, _) in zip(launches, launches[1:]))
    idle_hi = sum(b1 - (a0 + KERNEL_NS) for (a0, _), (_, b1) in zip(launches, launches[1:]))
    with open(out, "w") as f:
        json.dump({"pid": os.getpid(), "lines": marks(HERE, "MARK"), "steps": STEPS,
                   "kernel_ns": KERNEL_NS, "copy_ns": COPY_NS, "nccl_ns": NCCL_NS,
                   "pre_ns": sum(pre[:-1]), "pre_cpu_ns": sum(pre_cpu[:-1]),
                   "load_ns": sum(load[:-1]), "idle_lo_ns": idle_lo,
                   "idle_hi_ns": idle_hi, "process_cpu_ns": time.process_time_ns()}, f)


if __name__ == "__main__":
    main()
