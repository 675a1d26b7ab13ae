# SPDX-License-Identifier: MIT
"""Checks a gpu-capture of real CUDA work against the workload's own CUDA-event timings.

    check_h200.py c|torch CAPTURE.json EXPECT.json

Every kernel must be charged to the thread (here: the line) that launched it, and each thread's
GPU time must match the device time its stream took, measured with CUDA events, within 5 %.
Prints one line per check, "ok" or "FAIL", and a JSON summary line; exits 1 on any failure.
"""
import json
import sys

TOL = 0.05
results = []


def check(ok, what):
    results.append((bool(ok), what))
    print(("ok   " if ok else "FAIL ") + what)
    return ok


def near(got, want, what):
    rel = abs(got - want) / want if want else float("inf")
    return check(rel <= TOL, f"{what}: captured {got / 1e6:.3f} ms, events {want / 1e6:.3f} ms "
                             f"({rel * 100:.2f} % apart, limit {TOL * 100:.0f} %)")


def common(cap, pid):
    for k in ("rb_drops", "read_fail", "bad_len", "launch_fail"):
        check(cap["bpf"][k] == 0, f"bpf.{k} = {cap['bpf'][k]}")
    check(cap["agg"]["orphans"] == 0,
          f"every kernel, copy and set joined to its launch (orphans: {cap['agg']['orphans']})")
    check(cap["agg"]["lost_records"] == 0, f"no records lost ({cap['agg']['lost_records']})")
    check(cap["duplicate_launch_corrs"] == 0, "one launch probe per correlation id")
    # launches the library did not probe (batched under the launch before them from the same
    # Python location, or with their frames): each one a launch of its own; none lost
    print(f"     {cap['agg']['same_loc']} of {cap['agg']['launches']} launches batched "
          f"({cap['agg']['walked']} with the frames walked in process), "
          f"{cap['bpf']['api_calls']} probed")
    check(cap["agg"]["same_loc_lost"] == 0,
          f"batched launches whose reference was never seen: {cap['agg']['same_loc_lost']}")
    check(cap["bpf"]["api_calls"] + cap["agg"]["same_loc"] == cap["agg"]["launches"],
          "every API call probed or batched, once")
    check(cap["exit_status"] == 0, f"workload exit status {cap['exit_status']}")
    procs = [p for p in cap["procs"] if p["pid"] == pid]
    if not check(len(procs) == 1, f"records from the workload (pid {pid})"):
        return None
    p = procs[0]
    h = p["hello"]
    if check(h is not None, "library said hello"):
        check(h["status"] == 0, f"library status {h['status']} {h['message']!r}, CUPTI "
                                f"{h['cupti_version']} from {h['cupti_path']}")
    st = p["status"]
    if check(st is not None, "library status record"):
        check(st["dropped"] == 0, f"CUPTI dropped {st['dropped']} records")
        check(st["bad_buffers"] == 0, f"{st['bad_buffers']} activity buffers stopped early")
    for d in p["devices"]:
        print(f"     device {d['ordinal']}: {d['name'] or '-'}, {d['mem_total'] / 2**30:.1f} GiB, "
              f"driver {d['driver'] or '-'}, CUDA {d['cuda_driver'] or '-'}, cc {d['cc']}")
    check(len(p["devices"]) >= 1, "device card")
    if "kernels" in cap:
        unattributed = [k for k in cap["kernels"] if k[1] == 0]
        check(not unattributed, f"{len(cap['kernels'])} kernels, "
                                f"{len(unattributed)} not attributed to a launching thread")
    return p


def thread(p, tid):
    for t in p["threads"]:
        if t["tid"] == tid:
            return t
    check(False, f"nothing attributed to thread {tid}")
    return None


def check_c(cap, exp):
    p = common(cap, exp["pid"])
    if not p:
        return
    for j in exp["jobs"]:
        t = thread(p, j["tid"])
        if t:
            check(t["kernels"] == j["kernels"],
                  f"{j['label']}: {t['kernels']} kernels attributed, {j['kernels']} launched")
            near(t["gpu_ns"], j["event_ns"], f"{j['label']}: GPU time")
    g = exp["graph"]
    t = thread(p, g["tid"])
    if t:
        check(t["graph_kernels"] == g["kernels"],
              f"graph: {t['graph_kernels']} graph kernels attributed, {g['kernels']} ran")
        near(t["graph_ns"], g["event_ns"], "graph: GPU time")
        m = exp["memory"]
        check(t["copy_bytes"] == m["copy_bytes"], f"copies: {t['copy_bytes']} bytes")
        check(t["set_bytes"] == m["set_bytes"], f"sets: {t['set_bytes']} bytes")
        check(t["alloc_bytes"] >= m["alloc_bytes"], f"allocations: {t['alloc_bytes']} bytes")
        check(t["mem_peak"] >= m["alloc_bytes"], f"memory peak of the allocating thread: "
                                                 f"{t['mem_peak']}")
    check(p["peak_alloc"] >= exp["memory"]["alloc_bytes"], f"process peak {p['peak_alloc']}")
    print(f"     NVML: {p['nvml_samples']} samples, peak {p['peak_nvml'] / 2**20:.0f} MiB, "
          f"not listed {p['nvml_not_listed']} times")


def check_torch(cap, exp):
    p = common(cap, exp["pid"])
    if not p:
        return
    for label, e in exp["lines"].items():
        t = thread(p, e["tid"])
        if not t:
            continue
        what = f"line {e['line']} ({label})"
        if label == "graph_replay":
            check(t["graph_kernels"] > 0, f"{what}: {t['graph_kernels']} graph kernels")
            near(t["graph_ns"], e["event_ns"], f"{what}: GPU time")
        else:
            check(t["kernels"] >= e["iterations"], f"{what}: {t['kernels']} kernels")
            near(t["gpu_ns"], e["event_ns"], f"{what}: GPU time")
            print(f"     {what}: kernels {t['kernel_names']}")
    print(f"     torch {exp['torch']} (CUDA {exp['cuda']}), max reserved "
          f"{exp['max_reserved'] / 2**20:.0f} MiB; captured peak {p['peak_alloc'] / 2**20:.0f} "
          f"MiB allocated, NVML {p['peak_nvml'] / 2**20:.0f} MiB")


def main():
    kind, cap_path, exp_path = sys.argv[1:4]
    with open(cap_path) as f:
        cap = json.load(f)
    with open(exp_path) as f:
        exp = json.load(f)
    (check_c if kind == "c" else check_torch)(cap, exp)
    failed = [w for ok, w in results if not ok]
    print(json.dumps({"check": kind, "passed": len(results) - len(failed),
                      "failed": len(failed)}))
    sys.exit(1 if failed else 0)


main()
