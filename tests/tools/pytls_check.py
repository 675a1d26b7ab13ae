# SPDX-License-Identifier: MIT
"""Checks, inside a live interpreter, the ways a sampler can find a thread's PyThreadState.

    python3.X pytls_check.py

For the main thread and for a second thread that is parked in time.sleep() (so it has released
the GIL and is detached), compares the thread's real tstate with:
  - the pthread TSD slot of _PyRuntime's autoTSSkey, read the way BPF does through fsbase
    (glibc x86-64: fsbase + 0x310 + key * 16 + 8) (3.11 - 3.14);
  - the _Py_tss_tstate thread-local at fsbase + tpoff, tpoff decoded from the exported
    _PyThreadState_GetCurrent (static builds only; shared libpython calls __tls_get_addr).
Prints one line per check and exits 1 if any fact in docs/cpython-layouts.md does not hold here.
x86-64 glibc only (arch_prctl).
"""
import ctypes
import struct
import sys
import threading
import time

# offsetof(_PyRuntimeState, autoTSSkey._key) per minor version (userspace/pyversions.c)
TSS_KEY = {11: 596, 12: 1548, 13: 2164, 14: 2340}
GLIBC_TSD_BASE, GLIBC_TSD_STRIDE, GLIBC_TSD_DATA = 0x310, 16, 8

libc = ctypes.CDLL(None, use_errno=True)
api = ctypes.pythonapi
api.PyThreadState_Get.restype = ctypes.c_void_p
minor = sys.version_info[1]
failed = []


def fsbase():
    out = ctypes.c_ulong()
    # arch_prctl(ARCH_GET_FS, &out)
    if libc.syscall(158, 0x1003, ctypes.byref(out)) != 0:
        raise OSError(ctypes.get_errno(), "arch_prctl")
    return out.value


def ptr(addr):
    return ctypes.c_void_p.from_address(addr).value or 0


def tls_tpoff():
    try:
        fn = ctypes.cast(api._PyThreadState_GetCurrent, ctypes.c_void_p).value
    except AttributeError:
        return None
    code = ctypes.string_at(fn, 16)
    if code[:4] == b"\xf3\x0f\x1e\xfa":
        code = code[4:]
    if code[:5] != b"\x64\x48\x8b\x04\x25" or code[9] != 0xC3:
        return None
    return struct.unpack("<i", code[5:9])[0]


def check(what, ok, detail):
    print("%-52s %s  %s" % (what, "ok  " if ok else "FAIL", detail))
    if not ok:
        failed.append(what)


def main():
    runtime = ctypes.addressof(ctypes.c_char.in_dll(api, "_PyRuntime"))
    tpoff = tls_tpoff()
    key = None
    if minor in TSS_KEY:
        initialized, key = struct.unpack("<ii", ctypes.string_at(runtime + TSS_KEY[minor] - 4, 8))
        check("autoTSSkey is initialized", initialized == 1 and 0 <= key < 32,
              "_is_initialized=%d key=%d" % (initialized, key))

    info = {}
    parked = threading.Event()

    def worker():
        info["fs"] = fsbase()
        info["tstate"] = api.PyThreadState_Get()
        parked.set()
        time.sleep(3600)

    threading.Thread(target=worker, daemon=True).start()
    parked.wait()
    time.sleep(0.2)  # the worker is inside time.sleep now: GIL released, detached

    me_fs, me_ts = fsbase(), api.PyThreadState_Get()
    for who, fs, ts, attached in (("main", me_fs, me_ts, True), ("sleeping thread", info["fs"], info["tstate"], False)):
        if key is not None:
            slot = ptr(fs + GLIBC_TSD_BASE + key * GLIBC_TSD_STRIDE + GLIBC_TSD_DATA)
            check("%s: TSD slot of autoTSSkey" % who, slot == ts, "0x%x vs tstate 0x%x" % (slot, ts))
        if tpoff is not None:
            val = ptr(fs + tpoff)
            want = ts if attached else 0
            check("%s: _Py_tss_tstate at fsbase%+d" % (who, tpoff), val == want,
                  "0x%x, want 0x%x (%s)" % (val, want, "attached" if attached else "detached"))
    if minor >= 15:
        check("3.15 has no autoTSSkey", minor not in TSS_KEY, "thread list or TLS only")
    print("pytls_check %s: tss key %s, tls tpoff %s: %s" % (
        sys.version.split()[0], key, tpoff, "FAILED " + ", ".join(failed) if failed else "all ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
