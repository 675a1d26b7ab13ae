# SPDX-License-Identifier: MIT
"""A CUDA "training job" on the fake driver (tests/gpu/fake), for the GPU end-to-end tests.

Several Python threads launch kernels with known device times from known lines (each marked
with a LAUNCH comment), a native thread with no Python frame launches too, the main thread
allocates, copies, sets and synchronises, and a child process started with subprocess does its
own work (it inherits CUDA_INJECTION64_PATH, as torchrun's ranks do). What every thread and line
should be charged is written as JSON to the path given, for the test to compare with what was
collected.

    python3 gpu_app.py EXPECT.json [--attach-on FILE]     (FAKECUDA_LIB = the fake libcupti)
    python3 gpu_app.py --child EXPECT.json
"""
import ctypes
import json
import os
import subprocess
import sys
import threading
import time

from marks import marks

MS = 1_000_000
HERE = os.path.abspath(__file__)

lib = ctypes.CDLL(os.environ["FAKECUDA_LIB"])
lib.fakecuda_launch.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int]
lib.fakecuda_graph_launch.argtypes = [ctypes.c_uint32, ctypes.c_uint32, ctypes.c_char_p,
                                      ctypes.c_uint64]
lib.fakecuda_memcpy.argtypes = [ctypes.c_uint64, ctypes.c_int, ctypes.c_uint64]
lib.fakecuda_memset.argtypes = [ctypes.c_uint64, ctypes.c_uint64]
lib.fakecuda_malloc.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)]
lib.fakecuda_free.argtypes = [ctypes.c_uint64]
lib.fakecuda_synchronize.argtypes = [ctypes.c_uint64]
lib.fakecuda_launch_native_thread.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint32]
lib.fakecuda_launch_native_thread.restype = ctypes.c_uint32
lib.fakecuda_engine_start.argtypes = [ctypes.c_uint32]
lib.fakecuda_engine_start.restype = ctypes.c_uint32
lib.fakecuda_engine_run.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_uint64,
                                    ctypes.c_uint32, ctypes.c_uint64]
lib.fakecuda_engine_run.restype = ctypes.c_uint32

RT, RT_EX, DRV, DRV_EX = 0, 1, 2, 3


LINES = marks(HERE, "LAUNCH")
threads = {}  # tid -> expectation
BY_LINE = {}  # line -> expectation, for a thread that launches from several lines
CALLERS = {}  # caller's line -> GPU ns of the kernels launched below it
lock = threading.Lock()


def expect(label, **kw):
    tid = threading.get_native_id()
    with lock:
        t = threads.setdefault(tid, {"label": label, "line": LINES.get(label), "kernels": 0,
                                      "gpu_ns": 0, "nccl_ns": 0, "native_ns": 0, "graph_kernels": 0,
                                      "copy_bytes": 0, "set_bytes": 0, "alloc_bytes": 0,
                                      "launches": 0, "names": {}, "worker": None})
        for k, v in kw.items():
            if k == "worker":
                t[k] = v  # the native thread that launched this thread's work
            elif k == "name":
                t["names"][v] = t["names"].get(v, 0) + kw.get("kernels", 0)
            elif k == "names":
                for name, count in v.items():
                    t["names"][name] = t["names"].get(name, 0) + count
            else:
                t[k] += v


def forward(n, dur):
    for _ in range(n):
        lib.fakecuda_launch(b"sm90_gemm_fwd", dur, 1, RT)  # LAUNCH:forward
    expect("forward", kernels=n, gpu_ns=n * dur, launches=n, name="sm90_gemm_fwd")


def backward(n, dur):
    for _ in range(n):
        lib.fakecuda_launch(b"triton_bwd_fused", dur, 2, DRV_EX)  # LAUNCH:backward
    expect("backward", kernels=n, gpu_ns=n * dur, launches=n, name="triton_bwd_fused")


def allreduce(n, dur):
    name = b"ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    for _ in range(n):
        lib.fakecuda_launch(name, dur, 9, RT_EX)  # LAUNCH:allreduce
    expect("allreduce", kernels=n, gpu_ns=n * dur, nccl_ns=n * dur, launches=n,
           name=name.decode())


def alternate(n, dur_a, dur_b):
    """Each launch from another line than the one before, so none is batched with the last: the
    lines' work must not mix (checked per line through BY_LINE)."""
    for _ in range(n):
        lib.fakecuda_launch(b"alt_a", dur_a, 3, RT)  # LAUNCH:alt_a
        lib.fakecuda_launch(b"alt_b", dur_b, 3, RT)  # LAUNCH:alt_b
    expect("alternate", kernels=2 * n, gpu_ns=n * (dur_a + dur_b), launches=2 * n,
           names={"alt_a": n, "alt_b": n})
    BY_LINE[LINES["alt_a"]] = {"gpu_ns": n * dur_a, "names": {"alt_a": n}}
    BY_LINE[LINES["alt_b"]] = {"gpu_ns": n * dur_b, "names": {"alt_b": n}}


def layer(dur):
    lib.fakecuda_launch(b"layer_kernel", dur, 4, RT)  # LAUNCH:layer


def model(n):
    """Three lines call one function that launches, as model lines call F.linear: the innermost
    frame and instruction are the same for all three (frame memory is reused), only the callers
    differ, and each caller's stack must get exactly its own kernels (checked through CALLERS)."""
    for _ in range(n):
        layer(1 * MS)  # LAUNCH:model1
        layer(2 * MS)  # LAUNCH:model2
        layer(3 * MS)  # LAUNCH:model3
    expect("model", kernels=3 * n, gpu_ns=6 * n * MS, launches=3 * n, names={"layer_kernel": 3 * n})
    for k in (1, 2, 3):
        CALLERS[LINES["model%d" % k]] = k * n * MS


def graph_replay(replays, nodes, dur):
    for _ in range(replays):
        lib.fakecuda_graph_launch(4, nodes, b"graph_node", dur)  # LAUNCH:graph
    expect("graph", kernels=replays * nodes, gpu_ns=replays * nodes * dur,
           graph_kernels=replays * nodes, launches=replays, name="graph_node")


def asleep(tid):
    """Until native thread tid waits in the kernel (its condition variable's futex): work handed
    to it now wakes it, as autograd's device thread is woken."""
    for _ in range(10_000_000):
        with open("/proc/self/task/%d/stat" % tid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "S":
                return
    sys.exit("gpu_app: engine thread %d never went to sleep" % tid)


def engine_backward(e, runs, n, dur, barrier):
    """A Python thread that hands each backward pass to its engine's native thread and waits for
    it (as loss.backward() does): the engine's launches are charged to the waiting line."""
    barrier.wait()  # both threads wait for their engines at once
    for _ in range(runs):
        if e == 0:
            w = lib.fakecuda_engine_run(0, b"autograd_bwd_a", dur, n, 200_000)  # LAUNCH:engine0
        else:
            w = lib.fakecuda_engine_run(1, b"autograd_bwd_b", dur, n, 200_000)  # LAUNCH:engine1
    expect("engine%d" % e, kernels=runs * n, gpu_ns=runs * n * dur, native_ns=runs * n * dur,
           launches=runs * n, name="autograd_bwd_" + "ab"[e], worker=w)


def main_thread_work():
    addr = ctypes.c_uint64()
    lib.fakecuda_malloc(256 << 20, ctypes.byref(addr))  # LAUNCH:malloc
    lib.fakecuda_memcpy(64 << 20, 1, 2 * MS)  # LAUNCH:memcpy
    lib.fakecuda_memset(8 << 20, 1 * MS)  # LAUNCH:memset
    lib.fakecuda_synchronize(30 * MS)  # LAUNCH:sync
    lib.fakecuda_free(addr.value)  # LAUNCH:free
    expect("main", gpu_ns=3 * MS, copy_bytes=64 << 20, set_bytes=8 << 20,
           alloc_bytes=256 << 20, launches=5)


def child(path):
    lib.fakecuda_init()
    for _ in range(7):
        lib.fakecuda_launch(b"child_kernel", 3 * MS, 0, RT)  # LAUNCH:child
    expect("child", kernels=7, gpu_ns=21 * MS, launches=7, name="child_kernel")
    write(path, {"native": None, "phase1": None, "sync_busy_ns": None, "peak_alloc": None})


def write(path, extra):
    out = {"pid": os.getpid(), "file": HERE, "lines": LINES,
           "threads": {str(k): v for k, v in threads.items()}, "by_line": BY_LINE,
           "callers": CALLERS}
    out.update(extra)
    with open(path, "w") as f:
        json.dump(out, f, indent=1)


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    path = sys.argv[1]
    attach_on = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--attach-on" else None
    lib.fakecuda_init()
    phase1 = None
    if attach_on:
        # before the tracer attaches: must cost nothing and appear nowhere
        for _ in range(50):
            lib.fakecuda_launch(b"before_attach", 5 * MS, 0, RT)
        phase1 = {"kernels": 50, "gpu_ns": 250 * MS}
        open(attach_on, "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists(attach_on + ".attached"):
            if time.monotonic() > deadline:
                sys.exit("gpu_app: the tracer never attached")
            time.sleep(0.01)
    workers = [
        threading.Thread(target=forward, args=(40, 2 * MS)),
        threading.Thread(target=backward, args=(25, 4 * MS)),
        threading.Thread(target=allreduce, args=(10, 7 * MS)),
        threading.Thread(target=graph_replay, args=(6, 5, 300_000)),
        threading.Thread(target=alternate, args=(15, 1 * MS, 2 * MS)),
        threading.Thread(target=model, args=(12,)),
    ]
    for w in workers:
        w.start()
    main_thread_work()
    for w in workers:
        w.join()
    native_tid = lib.fakecuda_launch_native_thread(b"native_kernel", 1 * MS, 9)
    for e in (0, 1):
        asleep(lib.fakecuda_engine_start(e))
    barrier = threading.Barrier(2)
    engines = [threading.Thread(target=engine_backward, args=(e, 3, 20, (e + 1) * MS, barrier))
               for e in (0, 1)]
    for t in engines:
        t.start()
    for t in engines:
        t.join()
    sub = None
    if not attach_on:
        sub = subprocess.run([sys.executable, HERE, "--child", path + ".child"], check=True)
    write(path, {"native": {"tid": native_tid, "kernels": 9, "gpu_ns": 9 * MS},
                 "phase1": phase1, "sync_busy_ns": 30 * MS, "peak_alloc": 256 << 20,
                 "child": path + ".child" if sub else None})


main()
