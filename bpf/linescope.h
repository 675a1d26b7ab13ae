/* SPDX-License-Identifier: MIT */
/*
 * The BPF <-> userspace ABI: records in the `events` ring buffer, per-process configuration in
 * `procs`, interpreter layouts in `pylayouts`, and the `ls_stats` counters in .bss.
 * Only fixed-width types, explicit padding and _Static_asserts, so both sides agree byte for byte.
 */
#ifndef __LINESCOPE_H
#define __LINESCOPE_H

#ifndef __VMLINUX_H__
#include <linux/types.h> /* userspace; BPF gets the types from vmlinux.h */
#endif

#ifndef LS_MAX_FRAMES
#define LS_MAX_FRAMES 192 /* Python frames walked per sample; deeper stacks are cut and flagged */
#endif
#ifndef LS_MAX_PROCS
#define LS_MAX_PROCS 16384 /* target processes tracked at once */
#endif
/*
 * The `events` ring buffer, and the backlog past which frequent records wake its reader (BPF)
 * and the reader raises its priority (userspace/session_read.c)
 */
#define LS_RINGBUF_SIZE	  (32 << 20)
#define LS_RINGBUF_BEHIND (LS_RINGBUF_SIZE / 4)
/* wall mode: waits at least this long carry their time even when added up in the kernel */
#define LS_LONG_WAIT_NS 100000000ULL
#ifndef LS_MAX_LAYOUTS
#define LS_MAX_LAYOUTS 64 /* distinct interpreter layouts (one per CPython minor version/build) */
#endif
#ifndef LS_COMM_LEN
#define LS_COMM_LEN 16
#endif
#define LS_OFF_NONE 0xffff /* a layout field that this interpreter does not have */

enum ls_rec_type {
	LS_REC_SAMPLE = 1, /* ls_sample + nframes * ls_frame */
	LS_REC_PROC = 2,   /* ls_proc_event: fork, exec, exit, new process seen in the cgroup */
	LS_REC_OFFCPU = 3, /* ls_sample (kind LS_SAMPLE_OFFCPU) + frames: a thread blocked */
	/* 4 was LS_REC_RSS: RSS readings ride on samples (LS_XF_RSS, LS_SAMPLE_RSS) */
	LS_REC_TRACE = 5, /* ls_trace_batch: a python-usdt batch of line counts */
	LS_REC_GPU = 6,	  /* GPU records from gpu/ (see gpu/gpu_records.h) */
	LS_REC_CODE = 7,  /* ls_code_rec: a code object, captured the first time a walk meets it */
	LS_REC_EXEC = 8,  /* ls_exec_event: a process replaced its image (the kernel says so) */
	LS_REC_TICK = 9,  /* ls_tick: an added-up sample's time (--timeline) */
};

enum ls_sample_kind {
	LS_SAMPLE_ONCPU = 0,
	LS_SAMPLE_OFFCPU = 1,	 /* weight_ns = time the thread was off CPU */
	LS_SAMPLE_GPULAUNCH = 2, /* aux = CUDA correlation id; stack of the launching thread */
	LS_SAMPLE_SPAWN = 3,	 /* aux = new child pid; stack of the forking thread */
	LS_SAMPLE_RSS = 4,	 /* aux = RSS bytes after a change of at least mem_threshold */
};

/* ls_sample.xflags */
enum ls_sample_xflags {
	LS_XF_GIL_WAIT = 1 << 0,  /* off-CPU waiting for the GIL (futex on the GIL's state) */
	LS_XF_VOLUNTARY = 1 << 1, /* off-CPU because it blocked (not preempted) */
	LS_XF_WAITPID = 1 << 2,	  /* off-CPU in wait4/waitid; aux = the awaited pid (-1: any) */
	LS_XF_RSS = 1 << 3,	  /* an on-CPU sample whose aux is the process's RSS in bytes */
	/*
	 * a GPU launch by a thread with no Python frame, charged to the blocked Python thread that
	 * woke it (the sample's tid and stack; bpf/gpu.bpf.c, docs/gpu.md)
	 */
	LS_XF_FOR_WAITER = 1 << 4,
	/* an on-CPU sample read from another CPU (--sampler remote): its mode is not known */
	LS_XF_REMOTE = 1 << 5,
};

/* ls_sample.flags */
enum ls_sample_flags {
	LS_SF_KERNEL = 1 << 0,	   /* sampled in kernel mode (syscall or fault) */
	LS_SF_TRUNCATED = 1 << 1,  /* the Python stack was deeper than LS_MAX_FRAMES */
	LS_SF_NO_TSTATE = 1 << 2,  /* a Python process, but this thread has no thread state */
	LS_SF_READ_FAIL = 1 << 3,  /* a user memory read failed mid-walk (stack is partial) */
	LS_SF_NOT_PYTHON = 1 << 4, /* process not (yet) known to run a supported CPython */
	LS_SF_GIL_HELD = 1 << 5,   /* this thread's state is the GIL holder */
	LS_SF_GIL_KNOWN = 1 << 6,  /* LS_SF_GIL_HELD is meaningful for this interpreter */
	LS_SF_BAD_FRAME = 1 << 7,  /* walk stopped at a frame that failed a sanity check */
};

struct ls_frame {
	__u64 code;  /* PyCodeObject address */
	__s32 instr; /* byte offset of the current instruction from co_code_adaptive (-2: none) */
	__u32 fp;    /* fingerprint of code-object fields; detects address reuse */
};

struct ls_sample {
	__u32 type; /* LS_REC_SAMPLE or LS_REC_OFFCPU */
	__u32 pid;  /* tgid, as the host sees it */
	__u32 tid;
	__u16 cpu;
	__u8 kind;	 /* enum ls_sample_kind */
	__u8 flags;	 /* enum ls_sample_flags */
	__u64 ts;	 /* bpf_ktime_get_ns() */
	__u64 user_ip;	 /* user-mode instruction pointer of the thread */
	__u64 weight_ns; /* on-CPU: sample period; off-CPU: blocked time */
	__u64 aux;	 /* kind-specific (GPU correlation id) */
	__u16 nframes;
	__u16 xflags; /* enum ls_sample_xflags */
	__u32 pad1;
	/*
	 * Non-zero: the first sample of this thread with this stack; later ones are added up in the
	 * kernel under the same key (struct ls_agg_key.stack): remember what it resolves to.
	 */
	__u64 stack;
	/*
	 * Non-zero: ls_view_key() of how the thread saw files when sampled (only in a record with
	 * frames): a view userspace knows under the same key is used with no /proc read.
	 */
	__u64 view;
	char comm[LS_COMM_LEN]; /* thread name; nframes struct ls_frame follow, innermost first */
};

/* Classes of time, as the profile's samples.kind stores them. */
enum ls_sample_class {
	LS_CLASS_CPU = 0,      /* on-CPU samples */
	LS_CLASS_WAIT = 1,     /* off-CPU: blocked (sleep, I/O, locks, children) */
	LS_CLASS_GIL_WAIT = 2, /* off-CPU: blocked waiting for the GIL */
	LS_CLASS_RUNQ = 3,     /* off-CPU: preempted, runnable, waiting for a CPU */
};

/* CPU modes, as samples.mode stores them. */
enum ls_cpu_mode {
	LS_MODE_PYTHON = 0, /* user mode inside the interpreter */
	LS_MODE_NATIVE = 1, /* user mode in an extension or library */
	LS_MODE_KERNEL = 2,
	LS_MODE_UNKNOWN = 3,
};

/*
 * Samples added up in the kernel (agg.bpf.h), per thread, stack, class and mode. The stack is a
 * hash of its frames, its walk flags, the process's start time and the image generation (so it
 * names one process image even when the pid is reused), described to userspace by a sample
 * record carrying the same hash.
 */
struct ls_agg_key {
	__u64 stack;
	__u32 pid;
	__u32 tid;
	__u8 cls;  /* enum ls_sample_class */
	__u8 mode; /* enum ls_cpu_mode */
	__u16 pad0;
	__u32 pad1;
};

struct ls_agg_val {
	__u64 count;
	__u64 weight_ns;
};

/*
 * --timeline: a sample or off-CPU interval that the kernel added up (struct ls_agg_key), with
 * when it happened; its stack is the hash an earlier whole record described. Whole records carry
 * their own time, so they need none.
 */
struct ls_tick {
	__u32 type; /* LS_REC_TICK */
	__u32 pid;
	__u32 tid;
	__u8 cls;  /* enum ls_sample_class */
	__u8 mode; /* enum ls_cpu_mode */
	__u16 pad;
	__u64 ts;	 /* bpf_ktime_get_ns() when it was taken: the end of what it stands for */
	__u64 weight_ns; /* on-CPU: the period; off-CPU: the interval */
	__u64 stack;
};

/* Key of `agg_known`: a (process, thread, stack) userspace has been given whole. */
struct ls_known_key {
	__u64 stack;
	__u32 pid;
	__u32 tid;
};

enum ls_proc_event_kind {
	LS_PE_FORK = 1, /* pid is the new process, ppid its parent */
	/* 2 was the exec event: exec is an LS_REC_EXEC record of its own */
	LS_PE_EXIT = 3,	       /* last thread of pid exited; exit_code as in wait(2) */
	LS_PE_SEEN = 4,	       /* pid found in the target cgroup on its first sample */
	LS_PE_THREAD_EXIT = 5, /* thread tid of pid exited; cpu_ns is its CPU time as accounted */
	/* pid's libpython started: its entry was set from lib_images[exit_code], cpu_ns its bias */
	LS_PE_LIB = 6,
};

struct ls_proc_event {
	__u32 type; /* LS_REC_PROC */
	__u32 kind; /* enum ls_proc_event_kind */
	__u32 pid;
	__u32 ppid;
	__u32 tid; /* thread that caused the event */
	__s32 exit_code;
	__u64 ts;
	__u64 cgroup_id;
	__u64 cpu_ns; /* LS_PE_THREAD_EXIT: the thread's se.sum_exec_runtime */
	char comm[LS_COMM_LEN];
	__u64 start_ns; /* LS_PE_FORK, LS_PE_SEEN: the process's task start_time (monotonic) */
	__u32 nspid;	/* LS_PE_FORK, LS_PE_SEEN: pid in its own pid namespace */
	__u32 gen; /* LS_PE_FORK: the new `procs` entry's generation (copied from the parent) */
};

/*
 * How a target sees files (struct ls_task_view): its mount namespace, its root and its rights.
 * At its exec, in the exec record: its first opens use it while it is fresh instead of /proc.
 * At its last thread's exit, in `exit_views` by pid: a short process's records are often read
 * after it is gone from /proc; its sources are then read with these (userspace/recorder_view.c).
 */
#define LS_VIEW_GROUPS 32
struct ls_task_view {
	__u64 start_ns; /* the process's task start_time: which process of that pid */
	__u64 mntns; /* its mount namespace's inode number as /proc/PID/ns/mnt names it; 0: none */
	__u64 root_dev; /* its root's s_dev, kernel encoding (major << 20 | minor) */
	__u64 root_ino;
	__u32 fsuid;
	__u32 fsgid;
	__u32 euid; /* /proc/PID's owner: the credential cache's check */
	__u32 egid;
	__u32 ngroups; /* more than LS_VIEW_GROUPS: groups[] holds the first ones only */
	__u32 pad;
	__u32 groups[LS_VIEW_GROUPS];
};

/* One step of the view key's hash: a multiply and shift mix (MurmurHash3's finalizer). */
static inline __u64 ls_view_mix(__u64 h, __u64 w)
{
	h ^= w;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

/*
 * A key for a view's content, computed alike by BPF from the task and by userspace from /proc:
 * its mount namespace, root, fsuid, fsgid and every group (not its start time, euid or egid).
 * 0 when the view is not whole (unread, or more groups than LS_VIEW_GROUPS). Equal keys mean
 * the same view but for a 64-bit collision: the content, not a pointer that could be reused.
 */
static inline __u64 ls_view_key(const struct ls_task_view *v)
{
	__u64 h = 0x9e3779b97f4a7c15ULL;

	if (!v->mntns || v->ngroups > LS_VIEW_GROUPS)
		return 0;
	h = ls_view_mix(h, v->mntns);
	h = ls_view_mix(h, v->root_dev);
	h = ls_view_mix(h, v->root_ino);
	h = ls_view_mix(h, (__u64)v->fsuid << 32 | v->fsgid);
	h = ls_view_mix(h, v->ngroups);
	for (__u32 i = 0; i < LS_VIEW_GROUPS; i++)
		h = ls_view_mix(h, i < v->ngroups ? v->groups[i] : 0);
	return h | 1;
}

/*
 * An executable image as the kernel names it: a known interpreter executable is keyed by this in
 * `images`, so that a new process of it is walked from its first sample.
 */
struct ls_image_key {
	__u64 dev; /* the inode's s_dev, kernel encoding (major << 20 | minor) */
	__u64 ino;
	__s64 mtime_sec;
	__u32 mtime_nsec;
	__u32 pad;
};

#ifndef LS_EXEC_ARGS_MAX
#define LS_EXEC_ARGS_MAX 2048 /* bytes of the argument pages captured at exec */
#endif
#define LS_EXEC_PATH_MAX 256 /* bytes of the path given to execve (or the script's interpreter) */

/* ls_exec_event.flags */
enum ls_exec_flags {
	LS_EF_KNOWN_IMAGE = 1 << 0, /* BPF set it from `images`: walked from its first tick */
	LS_EF_ARGS_CUT = 1 << 1,    /* the arguments were longer than LS_EXEC_ARGS_MAX */
	LS_EF_ARGS_FAIL = 1 << 2,   /* the argument pages could not be read */
};

/* What naming a process needs, read in the kernel at exec: /proc only adds to it. */
struct ls_exec_event {
	__u32 type; /* LS_REC_EXEC */
	__u32 pid;
	__u32 ppid;
	__u32 old_tid; /* the thread that called execve (a non-leader thread exec takes the pid) */
	__u32 nspid;
	__u32 flags; /* enum ls_exec_flags */
	__u64 ts;
	__u64 start_ns; /* task start_time of the pid (its fork), monotonic */
	__u64 cgroup_id;
	struct ls_image_key image;
	__u64 start_code;  /* mm->start_code: the new image's load bias follows from it */
	__u32 gen;	   /* the `procs` entry's generation after this exec */
	__u16 args_len;	   /* bytes in args (NUL-separated, as /proc/PID/cmdline) */
	__u16 path_len;	   /* bytes in path, without NUL */
	__u32 pidns_level; /* depth of its pid namespace */
	__u32 exe_ctime_nsec;
	/* mm->env_start, env_end: the new image's environment, as /proc/PID/environ reads it */
	__u64 env_start, env_end;
	/* the executable's inode change time (0: not read): every write to the file moves it, and
	 * no call sets it back, unlike the mtime the image key holds */
	__s64 exe_ctime_sec;
	struct ls_task_view view; /* as the new image starts (mntns 0: not read) */
	char comm[LS_COMM_LEN];
	char path[LS_EXEC_PATH_MAX];
	char args[LS_EXEC_ARGS_MAX];
};

#define LS_CODE_NAME_MAX 512  /* raw bytes of co_filename / co_qualname captured */
#define LS_CODE_LTAB_MAX 4096 /* bytes of co_linetable captured */

/* ls_code_rec.flags */
enum ls_code_flags {
	LS_CF_FNAME_CUT = 1 << 0, /* the file name was longer than LS_CODE_NAME_MAX bytes */
	LS_CF_QNAME_CUT = 1 << 1,
	LS_CF_LTAB_CUT = 1 << 2,  /* the line table was longer than LS_CODE_LTAB_MAX */
	LS_CF_READ_FAIL = 1 << 3, /* a field could not be read */
};

/*
 * A code object as the walker first met it: names as raw str data (kind 1, 2 or 4 bytes per code
 * point) and the location table, so lines resolve even after the process is gone.
 */
struct ls_code_rec {
	__u32 type; /* LS_REC_CODE */
	__u32 pid;
	__u64 code;
	__u32 fp;
	__s32 firstlineno;
	__u32 fname_len; /* bytes in fname */
	__u32 qname_len;
	__u32 ltab_len;	 /* bytes in ltab */
	__u32 ltab_size; /* full size of co_linetable */
	__u8 fname_kind;
	__u8 qname_kind;
	__u8 flags; /* enum ls_code_flags */
	__u8 pad0;
	__u32 pad1;
	/*
	 * fname_len bytes of the file name, then qname_len of the qualified name, then ltab_len of
	 * the table: the record ends there (LS_CODE_REC_SIZE), most are a few hundred bytes.
	 */
	__u8 data[2 * LS_CODE_NAME_MAX + LS_CODE_LTAB_MAX];
};

#define LS_CODE_REC_HDR	    __builtin_offsetof(struct ls_code_rec, data)
#define LS_CODE_REC_SIZE(r) (LS_CODE_REC_HDR + (r)->fname_len + (r)->qname_len + (r)->ltab_len)

/*
 * Exact line tracing (python-usdt/, bpf/pyusdt.bpf.c; python-usdt/README.md has the semantics).
 * The extension builds a message in its own memory and fires a USDT probe with (pointer, length);
 * BPF prepends ls_trace_rec and copies the message into `events` unchanged. Messages come from
 * the traced process: userspace checks every count against ls_trace_rec.size.
 */
#ifndef LS_TRACE_MAX_MSG
#define LS_TRACE_MAX_MSG 8192 /* largest message; the extension splits batches to fit */
#endif
#define LS_TRACE_CALLS (-1) /* ls_trace_line.line of a code object's calls entry */

enum ls_trace_msg_kind {
	LS_TM_STATE = 1, /* ls_trace_state: tracing turned on or off, or cannot start */
	LS_TM_CODE = 2,	 /* ls_trace_code + file name + qualname: names a code id */
	LS_TM_BATCH = 3, /* ls_trace_batch + nlines * ls_trace_line: one thread's counts */
	LS_TM_CELL = 4,	 /* ls_trace_cell + a part of its texts: an IPython cell (linescope:code) */
};

struct ls_trace_rec {
	__u32 type; /* LS_REC_TRACE */
	__u32 pid;  /* tgid that fired the probe */
	__u32 tid;  /* thread that fired it (a batch names the thread it counts) */
	__u32 size; /* bytes of message that follow, at most LS_TRACE_MAX_MSG */
	__u64 ts;   /* bpf_ktime_get_ns() */
	/* followed by the message, which starts with __u32 kind (enum ls_trace_msg_kind) */
};

enum ls_trace_state_kind {
	LS_TRACE_ON = 1,
	LS_TRACE_OFF = 2,
	LS_TRACE_UNAVAILABLE = 3, /* the tracer is attached but this process cannot trace */
};

enum ls_trace_reason {
	LS_TR_NONE = 0,
	LS_TR_BUSY = 1,		 /* another tracer holds sys.settrace / every sys.monitoring id */
	LS_TR_FREE_THREADED = 2, /* free-threaded builds are not supported */
	LS_TR_ERROR = 3,	 /* an interpreter call failed (out of memory, API error) */
	LS_TR_DETACHED = 4,	 /* OFF: the last tracer detached */
};

enum ls_trace_mech {
	LS_TMECH_SETTRACE = 1,	 /* 3.11: a C trace function on every thread */
	LS_TMECH_MONITORING = 2, /* 3.12+: sys.monitoring callbacks */
};

struct ls_trace_state {
	__u32 kind;	  /* LS_TM_STATE */
	__u32 state;	  /* enum ls_trace_state_kind */
	__u32 reason;	  /* enum ls_trace_reason */
	__u32 hexversion; /* PY_VERSION_HEX of the interpreter */
	__u32 mech;	  /* enum ls_trace_mech */
	__u32 tool_id;	  /* sys.monitoring tool id (3.12+), else 0 */
	__u64 session;	  /* counts the times tracing turned on in this process */
};

enum ls_trace_code_flags {
	LS_TCF_LIBRARY = 1 << 0, /* library code: not traced, its time folds into the caller line */
	LS_TCF_TRUNCATED = 1 << 1, /* a name was cut to fit LS_TRACE_MAX_MSG */
};

struct ls_trace_code {
	__u32 kind;	    /* LS_TM_CODE */
	__u32 code;	    /* id used by ls_trace_line.code, unique within the process */
	__s32 firstlineno;  /* co_firstlineno */
	__u32 flags;	    /* enum ls_trace_code_flags */
	__u16 filename_len; /* bytes of co_filename (UTF-8, no NUL) right after this struct */
	__u16 qualname_len; /* bytes of co_qualname right after the file name */
	__u32 pad;
	__u64 addr; /* address of the code object (matches sampled ls_frame.code) */
};

/*
 * An IPython cell as the kernel compiled it: its compile name (the code's co_filename), the text
 * as typed (run_cell's raw_cell), the text compiled (after IPython's transforms) and the
 * front end's id of the notebook cell it ran from (execute_request's metadata.cellId, which
 * JupyterLab and Notebook 7 send; empty when none came), sent as name + raw + text + id in parts
 * of at most LS_TRACE_MAX_MSG, in order, that share seq. Userspace keeps a text only when it
 * hashes to the name, as for every other way a cell is found.
 */
#define LS_TRACE_CELL_MAX (1u << 20) /* largest name + raw + text + id announced */
#define LS_TRACE_CELL_ID  128	     /* longest cell id sent (a longer one is left out) */

enum ls_trace_cell_flags {
	LS_TCELL_NO_RAW = 1 << 0, /* the raw text is not known (a cell cached before the attach) */
};

struct ls_trace_cell {
	__u32 kind;	/* LS_TM_CELL */
	__u32 seq;	/* the announcement within the process; its parts share it */
	__u32 off;	/* where this part starts in name + raw + text + id */
	__u32 part_len; /* bytes of that right after this struct */
	__u32 name_len; /* UTF-8, no NUL */
	__u32 raw_len;
	__u32 text_len;
	__s32 number; /* the execution count IPython cached it under */
	__u32 flags;  /* enum ls_trace_cell_flags */
	__u32 id_len; /* the cell id, after the text */
};

enum ls_trace_batch_flags {
	LS_TBF_THREAD_END = 1 << 0,  /* the thread's last batch */
	LS_TBF_PROCESS_END = 1 << 1, /* flushed at interpreter exit */
};

struct ls_trace_batch {
	__u32 kind;   /* LS_TM_BATCH */
	__u32 tid;    /* thread whose events are counted */
	__u32 nlines; /* ls_trace_line entries that follow */
	__u32 flags;  /* enum ls_trace_batch_flags */
	__u64 seq;    /* per-process batch number from 0; a gap means batches were lost */
};

/* Counts since the previous batch of the same thread; userspace adds them up. */
struct ls_trace_line {
	__u32 code;	/* id from an LS_TM_CODE message of the same process */
	__s32 line;	/* source line, or LS_TRACE_CALLS */
	__u64 hits;	/* line events; for LS_TRACE_CALLS, calls (starts, not resumes) */
	__u64 own_ns;	/* wall time from the line's events to the thread's next traced event */
	__u64 total_ns; /* wall time to the frame's next line (callees included); for
			 * LS_TRACE_CALLS, time spent inside the code object */
};

/* Native CPython probes (python:line, function__entry/return): the `native_lines` map. */
#ifndef LS_NATIVE_STR
#define LS_NATIVE_STR 256 /* bytes kept of a file or function name */
#endif

enum ls_native_kind {
	LS_NK_LINE = 0, /* python:line */
	LS_NK_CALL = 1, /* python:function__entry; line = the function's line at entry */
};

/*
 * Names are keyed by a hash of their text, not by the char * the probe passes: CPython frees and
 * reuses those buffers, so one address can name several files over a run.
 */
struct ls_native_key {
	__u32 pid;
	__u32 tid;
	__u64 file; /* hash of the file name (probe argument 1), a native_strs key */
	__u64 func; /* hash of the function name (argument 2) */
	__s32 line;
	__u32 kind; /* enum ls_native_kind */
};

struct ls_native_val {
	__u64 hits;
	__u64 own_ns; /* wall time from these events to the thread's next native probe event */
};

/* Key of `native_strs` (value char[LS_NATIVE_STR]): the text behind a name hash. */
struct ls_native_str_key {
	__u32 pid;
	__u32 pad;
	__u64 hash;
};

/* Counters of bpf/pyusdt.bpf.c in .bss (`trace_stats`). */
struct ls_trace_stats {
	__u64 msgs;	     /* messages copied into `events` */
	__u64 not_target;    /* probes fired by processes outside `procs` */
	__u64 bad_size;	     /* messages shorter than 4 bytes or over LS_TRACE_MAX_MSG */
	__u64 read_fail;     /* bpf_probe_read_user of a message failed */
	__u64 ringbuf_drops; /* `events` full */
	__u64 native_events; /* native probe events counted */
	__u64 native_full;   /* native_lines, native_strs or native_threads full */
	__u64 native_str_fail;
};

_Static_assert(sizeof(struct ls_trace_rec) == 24, "ls_trace_rec layout");
_Static_assert(sizeof(struct ls_trace_state) == 32, "ls_trace_state layout");
_Static_assert(sizeof(struct ls_trace_code) == 32, "ls_trace_code layout");
_Static_assert(sizeof(struct ls_trace_batch) == 24, "ls_trace_batch layout");
_Static_assert(sizeof(struct ls_trace_line) == 32, "ls_trace_line layout");
_Static_assert(sizeof(struct ls_native_key) == 32, "ls_native_key layout");
_Static_assert(sizeof(struct ls_native_val) == 16, "ls_native_val layout");
_Static_assert(sizeof(struct ls_native_str_key) == 16, "ls_native_str_key layout");

/*
 * Where CPython keeps what the walker needs, for one interpreter build. Userspace fills it from a
 * per-version table (3.11, 3.12) or from the target's _Py_DebugOffsets (3.13+). Offsets in bytes;
 * LS_OFF_NONE where the field does not exist.
 */
struct ls_pylayout {
	__u16 tstate_frame;   /* 3.11/12: PyThreadState.cframe; 3.13+: .current_frame */
	__u16 cframe_current; /* _PyCFrame.current_frame, or NONE when tstate_frame is the frame */
	__u16 tstate_native_tid;    /* PyThreadState.native_thread_id */
	__u16 tstate_next;	    /* PyThreadState.next */
	__u16 frame_code;	    /* f_code / f_executable */
	__u16 frame_previous;	    /* previous */
	__u16 frame_instr;	    /* prev_instr / instr_ptr */
	__u16 frame_owner;	    /* owner (u8) */
	__u16 code_adaptive;	    /* offsetof(PyCodeObject, co_code_adaptive) */
	__u16 code_firstlineno;	    /* co_firstlineno (int) */
	__u16 code_filename;	    /* co_filename pointer, used in the fingerprint */
	__u16 code_qualname;	    /* co_qualname pointer, used in the fingerprint */
	__u16 code_linetable;	    /* co_linetable pointer, used in the fingerprint */
	__u16 interp_threads_head;  /* PyInterpreterState.threads.head */
	__u16 runtime_interp_head;  /* _PyRuntimeState.interpreters.head */
	__u16 runtime_gil_holder;   /* 3.11: _PyRuntime.gilstate.tstate_current; NONE if absent */
	__u8 owner_cstack;	    /* owners >= this are C-stack/interpreter frames (0xff: none) */
	__u8 code_tag_mask;	    /* low bits to clear from f_executable (3.14 _PyStackRef) */
	__u16 unicode_length;	    /* PyASCIIObject.length */
	__u16 unicode_state;	    /* PyASCIIObject.state (u32 bit field) */
	__u16 unicode_ascii_data;   /* data of a compact ASCII str */
	__u16 unicode_compact_data; /* data of a compact non-ASCII str */
	__u16 bytes_size;	    /* PyBytesObject.ob_size */
	__u16 bytes_data;	    /* PyBytesObject.ob_sval */
	__u8 unicode_kind_shift;    /* state: 3-bit kind at this bit */
	__u8 unicode_compact_bit;
	__u8 unicode_ascii_bit;
	__u8 pad;
	__u16 pad2;
};

/* How a thread finds its PyThreadState. */
enum ls_tstate_mode {
	LS_TS_NONE = 0,
	LS_TS_GLIBC_TSD = 1,   /* pthread_getspecific(autoTSSkey) through fsbase (glibc layout) */
	LS_TS_THREAD_LIST = 2, /* walk interp->threads matching native_thread_id (any libc) */
};

/* ls_proc.flags */
enum ls_proc_flags {
	LS_PF_PYTHON = 1 << 0,	/* interpreter found and layout set: walk frames */
	LS_PF_PENDING = 1 << 1, /* target, but userspace has not finished discovery */
};

/* Value of the `procs` map, keyed by tgid. */
struct ls_proc {
	__u32 flags;	   /* enum ls_proc_flags */
	__u32 layout_id;   /* index into `pylayouts` */
	__u64 runtime;	   /* address of _PyRuntime */
	__u64 tss_addr;	   /* address of the Py_tss_t holding the thread-state key */
	__u64 code_type;   /* &PyCode_Type: frames whose code has another type are skipped */
	__u32 tsd_mode;	   /* enum ls_tstate_mode */
	__u16 tsd_base;	   /* glibc: offsetof(struct pthread, specific_1stblock) */
	__u16 tsd_stride;  /* glibc: sizeof(struct pthread_key_data) */
	__u16 tsd_data;	   /* glibc: offsetof(struct pthread_key_data, data) */
	__u16 tsd_2nd;	   /* glibc: offsetof(struct pthread, specific) (second-level table) */
	__u32 gen;	   /* bumped by exec: code objects seen before belong to the old image */
	__u64 gil_lo;	   /* [gil_lo, gil_hi): the GIL's state; a futex wait in it waits for the */
	__u64 gil_hi;	   /* GIL. Both 0 when unknown */
	__u32 pidns_level; /* depth of its pid namespace: native_thread_id is the tid there */
	__u32 pad;
	__u64 text_lo; /* [text_lo, text_hi): the interpreter's code; an ip in it is LS_MODE_PYTHON */
	__u64 text_hi;
};

/*
 * A libpython interpreter (a shared build), for its processes that exec: its entry at load bias 0,
 * and the address of a function every start of it runs before its first frame
 * (_PyRuntime_Initialize). A uprobe there (cookie: the index in `lib_images`) gives the
 * process's bias, which an exec cannot: ld.so maps libpython after it.
 */
#define LS_LIB_IMAGES 8
#define LS_LIB_START  "_PyRuntime_Initialize"
struct ls_lib_image {
	struct ls_proc proc;
	__u64 start_vaddr; /* LS_LIB_START's address at bias 0 */
};

/*
 * Moves an entry's addresses by delta (another load bias); 0 stays 0: a field this interpreter
 * does not have. Shared by BPF (the exec of a known image) and userspace.
 */
static inline void ls_proc_move(struct ls_proc *p, __s64 delta)
{
	p->runtime += p->runtime ? delta : 0;
	p->tss_addr += p->tss_addr ? delta : 0;
	p->code_type += p->code_type ? delta : 0;
	p->gil_lo += p->gil_lo ? delta : 0;
	p->gil_hi += p->gil_hi ? delta : 0;
	p->text_lo += p->text_lo ? delta : 0;
	p->text_hi += p->text_hi ? delta : 0;
}

/*
 * Whether generation a is of a later exec than b. They only grow, but userspace replaces whole
 * entries: a write that raced with an exec leaves the kernel's one behind userspace's.
 */
static inline int ls_gen_newer(__u32 a, __u32 b)
{
	return (__s32)(a - b) > 0;
}

/*
 * Value of `images`: the `procs` entry of a process running the image, with every address
 * relative to the load bias. At exec, bias = mm->start_code - x_vaddr for ET_DYN, 0 otherwise.
 */
struct ls_image {
	struct ls_proc proc;
	__u64 x_vaddr; /* lowest p_vaddr of the executable PT_LOAD segments */
	__u32 dyn;     /* ET_DYN (PIE): the image is relocated */
	__u32 pad;
};

/*
 * The walker reads a frame and a code object as one window each; every layout offset it uses
 * must leave room for an 8-byte read inside these windows (userspace checks).
 */
#define LS_FRAME_WIN 96
#define LS_CODE_WIN  168

/*
 * Each CPU's sampling clock, in .bss (`cpu_clocks`, by CPU number). Userspace notes the period it
 * draws and when, then sets it (userspace/loader_jitter.c); the sampler notes every tick. A tick
 * weighs the period in force, plus the part of the previous one a change cut off, less the time
 * the CPU was stolen since its last tick (tick_weight() in sample.bpf.c): the kernel reports the
 * event's first period whatever was set since, a new period restarts the timer, and a
 * hypervisor can take the CPU between two ticks. 32 bytes: no entry straddles two cache lines.
 */
#define LS_CLOCK_CPUS 1024
struct ls_cpu_clock {
	__u64 period_ns;  /* the period drawn last; 0: the event's own */
	__u64 changed_ns; /* when it was drawn (CLOCK_MONOTONIC); 0: never */
	__u64 last_ns;	  /* this CPU's last tick, whichever task it interrupted */
	__u64 off_ns;	  /* the most seen of the time since boot the CPU did not run its tasks */
};

/* Counters in .bss; every failure path in BPF bumps one. Userspace reports them. */
struct ls_stats {
	__u64 samples;	     /* samples of target threads emitted */
	__u64 ringbuf_drops; /* records lost because the ring buffer was full */
	__u64 truncated;     /* stacks cut at LS_MAX_FRAMES */
	__u64 read_fail;     /* user memory reads that failed */
	__u64 no_tstate;     /* threads of Python processes without a thread state */
	__u64 proc_events;
	__u64 procs_full; /* could not add a process: `procs` map full */
	__u64 offcpu;
	__u64 rss_events;
	__u64 trace_batches;
	__u64 gpu_records;
	__u64 bad_frames;
	__u64 code_records;   /* code objects described to userspace */
	__u64 offcpu_dropped; /* short off-CPU intervals not sampled (by design, weighted) */
	__u64 pending_full;   /* off-CPU intervals lost: the pending map was full */
	__u64 taken;	      /* on-CPU samples the kernel took of target threads */
	__u64 sample_drops;   /* of those, lost because the ring buffer was full */
	__u64 exec_events;
	__u64 images_known;   /* execs of a known interpreter image: walked from the first tick */
	__u64 scratch_busy;   /* records dropped: a preempted program on this CPU held the buffer */
	__u64 offcpu_opened;  /* threads already off the CPU when the recording began */
	__u64 offcpu_closed;  /* intervals still pending when it stopped, reported then */
	__u64 agg_added;      /* samples and intervals added up in the kernel */
	__u64 agg_full;	      /* of the others, went by the ring buffer: the map was full */
	__u64 agg_first;      /* first sights of a (thread, stack), described by a record */
	__u64 timeline_drops; /* --timeline: ticks refused by a full ring buffer (still summed) */
	__u64 agg_unset;      /* went whole: the first aggregate map was not set yet (the start) */
	__u64 resume_late;    /* no task work at a switch: the interval is reported at the thread's
			       * next switch or its exit, with the stack it has then */
	__u64 task_works;     /* task works scheduled to report an interval (offcpu.bpf.c) */
	__u64 lost_at_exit;   /* intervals whose thread exited before reporting them */
	__u64 long_wait_drops; /* times of long waits (LS_LONG_WAIT_NS) a full ring buffer refused */
	__u64 unseen_in;       /* intervals whose switch back in no tracepoint showed: ended when
			       * their thread was next seen running (offcpu.bpf.h) */
	__u64 tick_lost_ns;    /* target threads' ticks: time their CPU was stolen (hypervisor,
			       * interrupts), left out of the ticks' weight */
	__u64 agg_in_exec;     /* went whole: taken inside execve() (emit.bpf.h in_execve) */
};

#define LS_SAMPLE_MAX_SIZE (sizeof(struct ls_sample) + LS_MAX_FRAMES * sizeof(struct ls_frame))

_Static_assert(sizeof(struct ls_frame) == 16, "ls_frame layout");
_Static_assert(sizeof(struct ls_sample) == 88, "ls_sample layout");
_Static_assert(sizeof(struct ls_agg_key) == 24, "ls_agg_key layout");
_Static_assert(sizeof(struct ls_tick) == 40, "ls_tick layout");
_Static_assert(sizeof(struct ls_proc_event) == 80, "ls_proc_event layout");
_Static_assert(sizeof(struct ls_image_key) == 32, "ls_image_key layout");
_Static_assert(sizeof(struct ls_image) == 104, "ls_image layout");
_Static_assert(sizeof(struct ls_task_view) == 184, "ls_task_view layout");
_Static_assert(sizeof(struct ls_exec_event) == 144 + 184 + LS_EXEC_PATH_MAX + LS_EXEC_ARGS_MAX,
	       "ls_exec_event layout");
_Static_assert(sizeof(struct ls_code_rec) == 48 + 2 * LS_CODE_NAME_MAX + LS_CODE_LTAB_MAX,
	       "ls_code_rec layout");
_Static_assert(sizeof(struct ls_pylayout) == 52, "ls_pylayout layout");
_Static_assert(sizeof(struct ls_proc) == 88, "ls_proc layout");

#endif /* __LINESCOPE_H */
