#!/usr/bin/python3.11
# SPDX-License-Identifier: MIT
"""Userspace frame-walk oracle for CPython 3.11 to 3.15.

    pyoracle.py PID                 print every thread's Python stack (innermost first)
    pyoracle.py PID --json          the same as JSON
    pyoracle.py PID --expect F      compare with pytarget.py's own view; exit 1 on a mismatch
    pyoracle.py --selftest-decoder  check the location-table decoder against co_positions()
                                    of this interpreter (run it under each version)

Reads /proc/PID/mem (root, or ptrace rights over PID) the way the BPF walker does: finds
_PyRuntime in the ELF file of the interpreter (the python executable or libpython, opened through
/proc/PID/root so chroots and containers work), takes the layout from its own tables (3.11, 3.12)
or from the target's _Py_DebugOffsets (3.13+), walks interpreters -> threads -> frames, and turns
each (code object, instruction offset) into file:line with a CPython-exact location-table decoder.

This is an independent second implementation of userspace/pyversions.c on purpose: the lead's
BPF walker is cross-checked against it, and it is itself checked against the interpreters' own
traceback output by tests/tools/check_pyoracle.sh. Pure stdlib; no third-party modules.
"""
import argparse
import collections
import json
import os
import re
import struct
import sys
import time

# ---------------------------------------------------------------------------------------------
# target memory


class Mem:
    def __init__(self, pid):
        self.pid = pid
        self.fd = os.open("/proc/%d/mem" % pid, os.O_RDONLY)

    def read(self, addr, n):
        if addr <= 0 or n < 0:
            raise OSError("bad read at 0x%x" % addr)
        data = os.pread(self.fd, n, addr)
        if len(data) != n:
            raise OSError("short read at 0x%x" % addr)
        return data

    def u64(self, addr):
        return struct.unpack("<Q", self.read(addr, 8))[0]

    def i64(self, addr):
        return struct.unpack("<q", self.read(addr, 8))[0]

    def u32(self, addr):
        return struct.unpack("<I", self.read(addr, 4))[0]

    def i32(self, addr):
        return struct.unpack("<i", self.read(addr, 4))[0]

    def u8(self, addr):
        return self.read(addr, 1)[0]


# ---------------------------------------------------------------------------------------------
# ELF (64-bit little-endian only, as the tool)


class Elf:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise ValueError("%s: not a 64-bit little-endian ELF file" % path)
        (self.type,) = struct.unpack_from("<H", d, 16)
        phoff, shoff = struct.unpack_from("<QQ", d, 32)
        phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", d, 54)
        self.phdrs = [struct.unpack_from("<IIQQQQQQ", d, phoff + i * phentsize) for i in range(phnum)]
        self.shdrs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        shstr = self.shdrs[shstrndx]
        self.sections = {}
        for sh in self.shdrs:
            self.sections[self._str(shstr[4], sh[0])] = sh
        self.symbols = {}
        for sh in self.shdrs:
            if sh[1] not in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
                continue
            strtab = self.shdrs[sh[6]]
            for off in range(sh[4], sh[4] + sh[5], 24):
                name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", d, off)
                if shndx != 0 and name:
                    self.symbols.setdefault(self._str(strtab[4], name), (value, size))

    def _str(self, base, off):
        end = self.data.index(b"\0", base + off)
        return self.data[base + off:end].decode("utf-8", "replace")

    def first_load_vaddr(self):
        for p in self.phdrs:
            if p[0] == 1:  # PT_LOAD
                return p[3] & ~(p[7] - 1 if p[7] else 0)
        return 0


def parse_maps(pid):
    maps = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            maps.append((start, end, int(parts[2], 16), path))
    return maps


PY_FILE = re.compile(r"^(lib)?python3\.\d+t?(\.so.*|d)?$")


def find_interpreter(pid):
    """(elf, path, load bias) of the mapped file that holds _PyRuntime."""
    maps = parse_maps(pid)
    seen = []
    for start, end, off, path in maps:
        if not path.startswith("/") or path in seen or not PY_FILE.match(os.path.basename(path)):
            continue
        seen.append(path)
        elf = None
        # map_files opens exactly the mapped file whatever the namespaces; /proc/PID/maps
        # prints the path as *our* root sees it (a chrooted target's file shows with the
        # chroot prefix), so /proc/PID/root + path is only the fallback
        for cand in ("/proc/%d/map_files/%x-%x" % (pid, start, end), "/proc/%d/root%s" % (pid, path), path):
            try:
                elf = Elf(cand)
                break
            except (OSError, ValueError):
                continue
        if elf is None:
            continue
        if "_PyRuntime" not in elf.symbols and ".PyRuntime" not in elf.sections:
            continue
        bias = 0
        if elf.type == 3:  # ET_DYN: mapped at base - first PT_LOAD vaddr
            base = min(s for s, e, o, p in maps if p == path and o == 0)
            bias = base - elf.first_load_vaddr()
        return elf, path, bias
    raise SystemExit("pyoracle: pid %d maps no python executable or libpython with _PyRuntime" % pid)


# ---------------------------------------------------------------------------------------------
# layouts

# 3.11 and 3.12 (x86-64, GIL builds), checked against the headers of Debian 3.11.2, pyenv 3.11.7
# and pyenv 3.12.1 (tests/tools/pylayout_dump.c)
TABLES = {
    11: dict(runtime_size=166688, interp_head=40, threads_head=16, interp_next=0,
             tstate_next=8, native_tid=160, tstate_frame=56, cframe_current=8,
             frame_code=32, frame_previous=48, frame_instr=56, frame_owner=69,
             code_filename=112, code_name=120, code_qualname=128, code_linetable=136,
             code_firstlineno=72, code_adaptive=184, ascii_data=48, compact_data=72,
             unicode_length=16, unicode_state=32, bytes_size=16, bytes_data=32,
             owner_native=256, tag_mask=0, gil_runtime_holder=576),
    12: dict(runtime_size=459944, interp_head=40, threads_head=72, interp_next=0,
             tstate_next=8, native_tid=144, tstate_frame=56, cframe_current=0,
             frame_code=0, frame_previous=8, frame_instr=56, frame_owner=70,
             code_filename=112, code_name=120, code_qualname=128, code_linetable=136,
             code_firstlineno=68, code_adaptive=192, ascii_data=40, compact_data=56,
             unicode_length=16, unicode_state=32, bytes_size=16, bytes_data=32,
             owner_native=3, tag_mask=0, interp_ceval_gil=384, gil_holder=8, gil_locked=16),
}

# _Py_DebugOffsets, field by field in declaration order (each entry one uint64_t); "+N" skips N
# fields we do not use. From Include/internal/pycore_runtime.h (3.13) and
# pycore_debug_offsets.h (3.14, 3.15).
_RT = ["rt.size", "rt.finalizing", "rt.interpreters_head"]
_TAIL_313 = ["+2", "+4", "+3", "+3", "+3", "+2", "+3",
             "by.size", "by.ob_size", "by.ob_sval", "un.size", "un.state", "un.length", "un.ascii_size", "+2"]
DEBUG_FIELDS = {
    13: ["cookie", "version", "free_threaded"] + _RT
    + ["is.size", "is.id", "is.next", "is.threads_head", "+4", "is.ceval_gil", "is.gil_state", "+1",
       "is.gil_locked", "is.gil_holder"]
    + ["ts.size", "ts.prev", "ts.next", "ts.interp", "ts.current_frame", "ts.thread_id",
       "ts.native_thread_id", "+2"]
    + ["fr.size", "fr.previous", "fr.executable", "fr.instr_ptr", "fr.localsplus", "fr.owner"]
    + ["co.size", "co.filename", "co.name", "co.qualname", "co.linetable", "co.firstlineno",
       "co.argcount", "+2", "co.adaptive"]
    + _TAIL_313,
    14: ["cookie", "version", "free_threaded"] + _RT
    + ["is.size", "is.id", "is.next", "is.threads_head", "is.threads_main", "+4", "is.ceval_gil",
       "is.gil_state", "+1", "is.gil_locked", "is.gil_holder", "+2"]
    + ["ts.size", "ts.prev", "ts.next", "ts.interp", "ts.current_frame", "ts.thread_id",
       "ts.native_thread_id", "+2"]
    + ["fr.size", "fr.previous", "fr.executable", "fr.instr_ptr", "fr.localsplus", "fr.owner", "+2"]
    + ["co.size", "co.filename", "co.name", "co.qualname", "co.linetable", "co.firstlineno",
       "co.argcount", "+2", "co.adaptive", "+1"]
    + ["+2", "+4", "+3", "+3", "+4", "+3", "+2", "+3",  # pyobject type tuple list set dict float long
       "by.size", "by.ob_size", "by.ob_sval", "un.size", "un.state", "un.length", "un.ascii_size",
       "+2", "+4", "+2", "+6"],  # gc gen llist debugger_support
    15: ["cookie", "version", "free_threaded"] + _RT
    + ["is.size", "is.id", "is.next", "is.threads_head", "is.threads_main", "+4", "is.ceval_gil",
       "is.gil_state", "+1", "is.gil_locked", "is.gil_holder", "+2"]
    + ["ts.size", "ts.prev", "ts.next", "ts.interp", "ts.current_frame", "+3", "ts.thread_id",
       "ts.native_thread_id", "+2", "ts.holds_gil", "+3"]
    + ["+1"]  # err_stackitem
    + ["fr.size", "fr.previous", "fr.executable", "fr.instr_ptr", "fr.localsplus", "fr.owner", "+2"]
    + ["co.size", "co.filename", "co.name", "co.qualname", "co.linetable", "co.firstlineno",
       "co.argcount", "+2", "co.adaptive", "+1"]
    + ["+2", "+6", "+2", "+3", "+3", "+4", "+3", "+2", "+3",  # pyobject type heap_type tuple ... long
       "by.size", "by.ob_size", "by.ob_sval", "un.size", "un.state", "un.length", "un.ascii_size",
       "un.compact_size", "+5", "+4", "+2", "+6"],  # gc gen llist debugger_support
}
DEBUG_SIZES = {13: 584, 14: 760, 15: 888}


def debug_slots(minor):
    slots, i = {}, 0
    for name in DEBUG_FIELDS[minor]:
        if name.startswith("+"):
            i += int(name[1:])
        else:
            slots[name] = i
            i += 1
    if i * 8 != DEBUG_SIZES[minor]:
        raise AssertionError("DEBUG_FIELDS[%d] has %d slots, want %d" % (minor, i, DEBUG_SIZES[minor] // 8))
    return slots


def layout_from_debug_offsets(mem, runtime, version):
    minor = (version >> 16) & 0xFF
    slots = debug_slots(minor)
    raw = mem.read(runtime, DEBUG_SIZES[minor])
    val = {k: struct.unpack_from("<Q", raw, 8 * s)[0] for k, s in slots.items()}
    if raw[:8] != b"xdebugpy":
        raise SystemExit("pyoracle: _PyRuntime has no xdebugpy cookie")
    if val["version"] != version:
        raise SystemExit("pyoracle: _Py_DebugOffsets version 0x%x != Py_Version 0x%x" % (val["version"], version))
    if val["free_threaded"]:
        raise SystemExit("pyoracle: free-threaded CPython %d.%dt is not supported" % (3, minor))

    def off(key, struct_size_key, width=8):
        o = val[key]
        if o + width > val[struct_size_key]:
            raise SystemExit("pyoracle: debug offset %s=%d outside its struct" % (key, o))
        return o

    L = dict(
        runtime_size=val["rt.size"],
        interp_head=off("rt.interpreters_head", "rt.size"),
        threads_head=off("is.threads_head", "is.size"),
        interp_next=off("is.next", "is.size"),
        tstate_next=off("ts.next", "ts.size"),
        native_tid=off("ts.native_thread_id", "ts.size"),
        tstate_frame=off("ts.current_frame", "ts.size"),
        cframe_current=None,
        frame_code=off("fr.executable", "fr.size"),
        frame_previous=off("fr.previous", "fr.size"),
        frame_instr=off("fr.instr_ptr", "fr.size"),
        frame_owner=off("fr.owner", "fr.size", 1),
        code_filename=off("co.filename", "co.size"),
        code_name=off("co.name", "co.size"),
        code_qualname=off("co.qualname", "co.size"),
        code_linetable=off("co.linetable", "co.size"),
        code_firstlineno=off("co.firstlineno", "co.size", 4),
        code_adaptive=off("co.adaptive", "co.size", 0),
        ascii_data=val["un.ascii_size"],
        compact_data=val.get("un.compact_size", val["un.ascii_size"] + 16),
        unicode_length=off("un.length", "un.size"),
        unicode_state=off("un.state", "un.size", 4),
        bytes_size=off("by.ob_size", "by.size"),
        bytes_data=off("by.ob_sval", "by.size", 0),
        # FRAME_OWNED_BY_CSTACK (3.13) / _INTERPRETER and _CSTACK (3.14+) are not Python frames
        owner_native=3,
        # 3.14+: f_executable is a _PyStackRef; the GIL build tags its low two bits
        tag_mask=3 if minor >= 14 else 0,
        interp_ceval_gil=off("is.ceval_gil", "is.size"),
        gil_holder=val["is.gil_holder"] - val["is.gil_state"],
        gil_locked=val["is.gil_locked"] - val["is.gil_state"],
    )
    if "ts.holds_gil" in val:
        L["holds_gil"] = off("ts.holds_gil", "ts.size", 4)
    return L


def version_str(v):
    level = {0xA: "a", 0xB: "b", 0xC: "rc"}.get((v >> 4) & 0xF)
    s = "%d.%d.%d" % (v >> 24, (v >> 16) & 0xFF, (v >> 8) & 0xFF)
    return s + ("%s%d" % (level, v & 0xF) if level else "")


# ---------------------------------------------------------------------------------------------
# location table (Objects/locations.md): CPython-exact line for a byte offset


def _varint(tbl, i):
    b = tbl[i]
    i += 1
    val, shift = b & 63, 6
    while b & 64:
        b = tbl[i]
        i += 1
        val |= (b & 63) << shift
        shift += 6
    return val, i


def _svarint(tbl, i):
    v, i = _varint(tbl, i)
    return (-(v >> 1) if v & 1 else v >> 1), i


def addr2line(tbl, firstlineno, addr):
    """Line of the instruction at byte offset @addr, as PyCode_Addr2Line: None for "no line"."""
    if addr < 0:
        return firstlineno
    line, start, i = firstlineno, 0, 0
    while i < len(tbl):
        b = tbl[i]
        i += 1
        code, end = (b >> 3) & 15, start + ((b & 7) + 1) * 2
        if code == 15:  # NONE: no line here; the running line is kept
            delta = None
        elif code == 14:  # LONG: line delta, end line delta, column + 1, end column + 1
            delta, i = _svarint(tbl, i)
            for _ in range(3):
                _, i = _varint(tbl, i)
        elif code == 13:  # NO_COLUMNS
            delta, i = _svarint(tbl, i)
        elif code >= 10:  # ONE_LINE0..2: line delta in the code, two column bytes
            delta, i = code - 10, i + 2
        else:  # SHORT0..9: same line, one column byte
            delta, i = 0, i + 1
        if delta is not None:
            line += delta
        if start <= addr < end:
            return None if delta is None else line
        start = end
    return None


def selftest_decoder(modules):
    """Compare addr2line() with co_positions() for every code unit of @modules' code objects."""
    import importlib

    units = mismatches = codes = 0
    for name in modules:
        mod = importlib.import_module(name)
        with open(mod.__file__, encoding="utf-8") as f:
            top = compile(f.read(), mod.__file__, "exec")
        todo = [top]
        while todo:
            co = todo.pop()
            codes += 1
            todo.extend(c for c in co.co_consts if hasattr(c, "co_linetable"))
            for k, pos in enumerate(co.co_positions()):
                units += 1
                if addr2line(co.co_linetable, co.co_firstlineno, 2 * k) != pos[0]:
                    mismatches += 1
    print("decoder %s: %d code objects, %d code units, %d mismatches"
          % (sys.version.split()[0], codes, units, mismatches))
    return mismatches == 0 and units > 10000


# ---------------------------------------------------------------------------------------------
# the walk


class Walker:
    def __init__(self, pid):
        self.pid = pid
        self.mem = Mem(pid)
        self.elf, self.path, self.bias = find_interpreter(pid)
        sym = self.elf.symbols
        if "_PyRuntime" in sym:
            self.runtime = self.bias + sym["_PyRuntime"][0]
            self.runtime_symsize = sym["_PyRuntime"][1]
        else:  # stripped: the section starts with _PyRuntime
            sh = self.elf.sections[".PyRuntime"]
            self.runtime, self.runtime_symsize = self.bias + sh[3], sh[5]
        self.version = self.mem.u64(self.bias + sym["Py_Version"][0]) & 0xFFFFFFFF
        self.minor = (self.version >> 16) & 0xFF
        if self.version >> 24 != 3 or not 11 <= self.minor <= 15:
            raise SystemExit("pyoracle: CPython %s is not supported (3.11 to 3.15)" % version_str(self.version))
        if self.minor <= 12:
            self.L = TABLES[self.minor]
        else:
            self.L = layout_from_debug_offsets(self.mem, self.runtime, self.version)
        if self.runtime_symsize != self.L["runtime_size"]:
            print("pyoracle: warning: _PyRuntime is %d bytes, the layout expects %d"
                  % (self.runtime_symsize, self.L["runtime_size"]), file=sys.stderr)
        self.code_type = self.bias + sym["PyCode_Type"][0]
        self.build = "%s%s" % ("shared" if self.elf.type == 3 and ".so" in self.path else "static",
                                ", probes" if ".note.stapsdt" in self.elf.sections else "")
        self.strings = {}
        self.stats = collections.Counter()  # frames seen by owner, tagged code references

    # -- objects

    def unicode(self, addr):
        if addr in self.strings:
            return self.strings[addr]
        m, L = self.mem, self.L
        state = m.u32(addr + L["unicode_state"])
        kind, compact, ascii_ = (state >> 2) & 7, (state >> 5) & 1, (state >> 6) & 1
        n = m.i64(addr + L["unicode_length"])
        if not compact or kind not in (1, 2, 4) or not 0 <= n <= 4096:
            return "<?>"
        data = addr + (L["ascii_data"] if ascii_ else L["compact_data"])
        raw = m.read(data, n * kind) if n else b""
        s = raw.decode({1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}[kind])
        self.strings[addr] = s
        return s

    def bytes_(self, addr):
        n = self.mem.i64(addr + self.L["bytes_size"])
        if not 0 <= n <= 1 << 20:
            raise OSError("implausible bytes size %d" % n)
        return self.mem.read(addr + self.L["bytes_data"], n)

    # -- frames

    def frames(self, tstate):
        m, L = self.mem, self.L
        frame = m.u64(tstate + L["tstate_frame"])
        if L["cframe_current"] is not None:  # 3.11/3.12: tstate->cframe->current_frame
            frame = m.u64(frame + L["cframe_current"]) if frame else 0
        out, seen = [], set()
        while frame and len(out) < 4096 and frame not in seen:
            seen.add(frame)
            owner = m.u8(frame + L["frame_owner"])
            raw = m.u64(frame + L["frame_code"])
            code = raw & ~L["tag_mask"]
            is_code = bool(code) and m.u64(code + 8) == self.code_type
            self.stats["owner %d%s" % (owner, "" if is_code else " (not code)")] += 1
            if raw & 7:
                self.stats["f_executable low bits %d" % (raw & 7)] += 1
            if owner < L["owner_native"] and is_code:
                instr = m.u64(frame + L["frame_instr"])
                offset = instr - (code + L["code_adaptive"])  # bytes; -2 for a 3.11/3.12 fresh frame
                first = m.i32(code + L["code_firstlineno"])
                line = addr2line(self.bytes_(m.u64(code + L["code_linetable"])), first, offset)
                out.append(dict(
                    file=self.unicode(m.u64(code + L["code_filename"])),
                    line=line,
                    name=self.unicode(m.u64(code + L["code_name"])),
                    qualname=self.unicode(m.u64(code + L["code_qualname"])),
                    code=code, offset=offset))
            frame = m.u64(frame + L["frame_previous"])
        return out

    def gil(self, interp):
        """tstate address holding the GIL of @interp, or 0."""
        m, L = self.mem, self.L
        if "gil_runtime_holder" in L:  # 3.11: _PyRuntime.gilstate.tstate_current
            return m.u64(self.runtime + L["gil_runtime_holder"])
        gil = m.u64(interp + L["interp_ceval_gil"])
        if not gil or not m.i32(gil + L["gil_locked"]):
            return 0
        return m.u64(gil + L["gil_holder"])

    def threads(self):
        m, L = self.mem, self.L
        out = []
        interp = m.u64(self.runtime + L["interp_head"])
        for _ in range(64):
            if not interp:
                break
            holder = self.gil(interp)
            tstate = m.u64(interp + L["threads_head"])
            for _ in range(4096):
                if not tstate:
                    break
                t = dict(tstate=tstate, tid=m.u64(tstate + L["native_tid"]), gil=tstate == holder,
                         frames=self.frames(tstate))
                if "holds_gil" in L:
                    t["holds_gil"] = m.i32(tstate + L["holds_gil"])
                out.append(t)
                tstate = m.u64(tstate + L["tstate_next"])
            interp = m.u64(interp + L["interp_next"])
        return out


def ns_ids(pid):
    """NSpid of @pid and a map from namespace TID to host TID."""
    def nspid(path):
        with open(path) as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return [int(x) for x in line.split()[1:]]
        return []

    tids = {}
    for t in os.listdir("/proc/%d/task" % pid):
        ids = nspid("/proc/%d/task/%s/status" % (pid, t))
        if ids:
            tids[ids[-1]] = ids[0]
    return nspid("/proc/%d/status" % pid), tids


# ---------------------------------------------------------------------------------------------
# comparison with pytarget.py's own view


def compare(w, threads, expect):
    problems = []
    got = {t["tid"]: [[f["file"], f["line"], f["name"]] for f in t["frames"]] for t in threads}
    want = {int(k): v for k, v in expect["threads"].items()}
    want[expect["main"]["tid"]] = expect["main"]["frames"]
    for tid, frames in want.items():
        if tid not in got:
            problems.append("thread %d: missing" % tid)
        elif got[tid] != frames:
            problems.append("thread %d:\n  oracle: %s\n  target: %s" % (tid, got[tid], frames))
    busy = expect["busy"]
    b = got.get(busy["tid"])
    if not b:
        problems.append("busy thread %d: missing" % busy["tid"])
    elif b[1:] != busy["frames"][1:] or b[0][2] != "spin" or b[0][1] not in busy["leaf_lines"]:
        problems.append("busy thread %d: %s, want leaf spin in %s then %s"
                        % (busy["tid"], b, busy["leaf_lines"], busy["frames"][1:]))
    extra = set(got) - set(want) - {busy["tid"]}
    if extra:
        problems.append("threads the target does not have: %s" % sorted(extra))
    # The GIL: only the spinning thread ever takes it, and it holds it nearly all the time.
    m, L = w.mem, w.L
    interp = m.u64(w.runtime + L["interp_head"])
    tid_of = {t["tstate"]: t["tid"] for t in threads}
    held = other = 0
    for _ in range(200):
        holder = w.gil(interp)
        if holder:
            if tid_of.get(holder) == busy["tid"]:
                held += 1
            else:
                other += 1
        if "holds_gil" in L:  # 3.15: the per-thread flag must agree
            for ts, tid in tid_of.items():
                if m.i32(ts + L["holds_gil"]) and tid != busy["tid"]:
                    other += 1
        time.sleep(0.001)
    if other or held < 100:
        problems.append("GIL: busy thread held it in %d/200 reads, others in %d" % (held, other))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pid", type=int, nargs="?")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--expect", metavar="FILE")
    ap.add_argument("--selftest-decoder", action="store_true")
    ap.add_argument("--stats", action="store_true", help="count frames by owner and tag bits")
    args = ap.parse_args()
    if args.selftest_decoder:
        ok = selftest_decoder(["threading", "json.decoder", "argparse", "dataclasses", "ast",
                               "inspect", "pathlib", "typing", "enum", "traceback"])
        return 0 if ok else 1
    if args.pid is None:
        ap.error("a pid is needed")
    try:
        w = Walker(args.pid)
        threads = w.threads()
    except OSError as e:
        print("pyoracle: pid %d: %s" % (args.pid, e), file=sys.stderr)
        return 1
    nspid, tids = ns_ids(args.pid)
    for t in threads:
        t["host_tid"] = tids.get(t["tid"])
    head = dict(pid=args.pid, nspid=nspid, version=version_str(w.version), binary=w.path,
                build=w.build, runtime="0x%x" % w.runtime)
    if args.json:
        print(json.dumps(dict(head, threads=threads), indent=1))
    else:
        ns = " (ns pid %d)" % nspid[-1] if len(nspid) > 1 else ""
        print("pid %d%s: CPython %s, %s, %s" % (args.pid, ns, head["version"], w.build, w.path))
        for t in threads:
            tid = "%d" % t["tid"] if t["host_tid"] in (None, t["tid"]) else "%d (ns %d)" % (t["host_tid"], t["tid"])
            print("thread %s%s" % (tid, " [GIL]" if t["gil"] else ""))
            for f in t["frames"]:
                print("  %s:%s %s" % (f["file"], f["line"], f["qualname"]))
    if args.stats:
        for k, n in sorted(w.stats.items()):
            print("stats: %s: %d" % (k, n))
    if args.expect:
        with open(args.expect) as f:
            expect = json.load(f)
        problems = compare(w, threads, expect)
        if nspid and nspid[-1] != expect["pid"]:
            problems.append("pid: target says %d, /proc says %s" % (expect["pid"], nspid))
        if head["version"] != expect["version"]:
            problems.append("version: oracle %s, target %s" % (head["version"], expect["version"]))
        for p in problems:
            print("MISMATCH " + p)
        print("pyoracle: CPython %s pid %d: %d threads, %d frames, %s"
              % (head["version"], args.pid, len(threads), sum(len(t["frames"]) for t in threads),
                 "matches the target" if not problems else "%d mismatches" % len(problems)))
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
