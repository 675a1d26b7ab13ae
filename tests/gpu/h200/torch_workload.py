# SPDX-License-Identifier: MIT
"""PyTorch work with known per-line device time, for tests/gpu/h200-check.sh.

    python3 torch_workload.py work EXPECT.json    threads on their own CUDA streams run matmuls
                                                  from known lines (one line per thread), and the
                                                  main thread replays a CUDA graph; each stream's
                                                  device time is measured with CUDA events, apart
                                                  from CUPTI
    python3 torch_workload.py overhead N          N small ops from one thread; prints
                                                  "op_ns <ns per op>"
"""
import json
import os
import sys
import threading
import time

import torch

HERE = os.path.abspath(__file__)


def line_of(label):
    with open(HERE) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# LINE:" + label):
                return n
    return None


def run_stream(label, fn, n, result):
    s = torch.cuda.Stream()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    with torch.cuda.stream(s):
        start.record(s)
        for _ in range(n):
            fn()
        stop.record(s)
    stop.synchronize()
    result[label] = {"tid": threading.get_native_id(), "event_ns": start.elapsed_time(stop) * 1e6,
                     "line": line_of(label), "iterations": n}


def main_work(path):
    dev = torch.device("cuda")
    a = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.float16)
    c = torch.randn(4096, 4096, device=dev, dtype=torch.float32)
    x = torch.randn(1 << 26, device=dev)
    outs = {}
    torch.cuda.synchronize()

    def matmul_half():
        outs["h"] = a @ b  # LINE:matmul_half

    def matmul_float():
        outs["f"] = c @ c  # LINE:matmul_float

    def elementwise():
        outs["e"] = torch.sin(x) * 2.0 + 1.0  # LINE:elementwise

    # warm up cuBLAS and the allocator on the same shapes, outside the measured region
    for fn in (matmul_half, matmul_float, elementwise):
        fn()
    torch.cuda.synchronize()
    result = {}
    threads = [threading.Thread(target=run_stream, args=("matmul_half", matmul_half, 40, result)),
               threading.Thread(target=run_stream, args=("matmul_float", matmul_float, 40, result)),
               threading.Thread(target=run_stream, args=("elementwise", elementwise, 40, result))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    # a CUDA graph captured once and replayed from one line
    static_in = torch.randn(4096, 4096, device=dev, dtype=torch.float16)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            static_out = (static_in @ static_in).relu()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = (static_in @ static_in).relu()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(20):
        g.replay()  # LINE:graph_replay
    stop.record()
    stop.synchronize()
    result["graph_replay"] = {"tid": threading.get_native_id(), "event_ns": start.elapsed_time(stop) * 1e6,
                              "line": line_of("graph_replay"), "iterations": 20}
    del static_out
    with open(path, "w") as f:
        json.dump({"pid": os.getpid(), "torch": torch.__version__, "cuda": torch.version.cuda,
                   "lines": result, "max_reserved": torch.cuda.max_memory_reserved()}, f, indent=1)
    print("torch_workload: ok")


def overhead(n):
    x = torch.zeros(16, device="cuda")
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter_ns()
    for _ in range(n):
        x.add_(1)
    torch.cuda.synchronize()
    print(f"op_ns {(time.perf_counter_ns() - t0) / n:.1f}")


if __name__ == "__main__":
    if sys.argv[1] == "overhead":
        overhead(int(sys.argv[2]))
    else:
        main_work(sys.argv[2])
