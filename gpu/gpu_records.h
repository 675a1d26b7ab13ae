/* SPDX-License-Identifier: MIT */
/*
 * GPU records: what liblinescope_cupti.so (the CUDA injection library) hands to BPF through its
 * USDT probes, and what bpf/gpu.bpf.c puts in the `events` ring buffer as LS_REC_GPU records.
 *
 * Two probes, provider `linescope_gpu` (gpu/probes.d):
 *
 *   api(u32 corr, s32 cbid, u32 cls, u64 dur_ns, const char *name)
 *	Fired on the EXIT of every CUDA API call the library follows (launches, graph launches,
 *	copies, sets, allocations, synchronisations), in the calling thread. corr is the CUPTI
 *	correlation id (kernels, copies and sets launched by the call carry the same id), cbid is
 *	the CUPTI callback id (positive: runtime API, negative: driver API), cls an enum
 *	ls_gpu_api_class in bits 0-7 and, when launches are sampled (LINESCOPE_GPU_SAMPLE=2^k), k in
 *	bits 8-12: this launch stands for 2^k launches; dur_ns the CPU time spent inside the call
 *	(CLOCK_MONOTONIC; 0 when the entry was not seen), name the kernel name for launches, else
 *	the API function name.
 *	BPF turns it into an ls_sample (kind LS_SAMPLE_GPULAUNCH, aux = LS_GPU_AUX(...),
 *	weight_ns = dur_ns) carrying the launching thread's Python stack.
 *	A kernel launch from a Python thread is probed only when the library cannot tell its
 *	location itself (gpu/pyloc.h): otherwise it goes into an LS_GPU_LAUNCHES record, either
 *	under the launch that had the same location before it (its reference; the collector gives
 *	it the reference's stack) or, from a new location, with the frames the library walked.
 *
 *   record(const void *rec, u32 len)
 *	Everything else. rec points to one complete record below, starting with struct ls_gpu_hdr;
 *	len is its size in bytes (<= LS_GPU_REC_MAX). BPF copies it into the ring buffer verbatim
 *	after writing the header fields marked "BPF" (host tgid, tid, ktime).
 *
 * The library never exposes CUPTI's own record layouts: they change with every CUDA minor
 * release (Kernel10 in 13.0, Kernel11 in 13.1, ...). It normalises them into ls_gpu_act.
 *
 * Only fixed-width types with explicit padding; the includer provides __u8..__u64 (vmlinux.h in
 * BPF, <linux/types.h> in userspace), as for bpf/linescope.h.
 */
#ifndef __LS_GPU_RECORDS_H
#define __LS_GPU_RECORDS_H

#define LS_GPU_PROVIDER	   linescope_gpu
#define LS_GPU_ABI_VERSION 1

#ifndef LS_GPU_BATCH_MAX
#define LS_GPU_BATCH_MAX 64 /* activity records per LS_GPU_ACTIVITY record */
#endif
#define LS_GPU_NAME_MAX	   1024 /* kernel-name bytes kept (longer names are cut, flagged) */
#define LS_GPU_REC_MAX	   4096 /* largest record the record probe carries */
#define LS_GPU_MAX_DEVICES 16	/* devices per LS_GPU_MEMSAMPLE record */

/* Classes of CUDA API calls, from the callback name (cls argument of the api probe). */
enum ls_gpu_api_class {
	LS_GPU_API_NONE = 0,
	LS_GPU_API_LAUNCH = 1, /* kernel launch: cudaLaunchKernel*, cuLaunchKernel*, cooperative */
	LS_GPU_API_GRAPH = 2,  /* graph launch: one correlation id, many kernels */
	LS_GPU_API_MEMCPY = 3,
	LS_GPU_API_MEMSET = 4,
	LS_GPU_API_ALLOC = 5, /* cudaMalloc*, cuMemAlloc*, cuMemCreate, pools */
	LS_GPU_API_FREE = 6,
	LS_GPU_API_SYNC = 7, /* *Synchronize: the CPU waits for the GPU */
	LS_GPU_API_NCLASS,
};

/* The api probe's cls argument: class in bits 0-7, log2 of the sampling period in bits 8-12. */
#define LS_GPU_CLS_CLASS(cls) ((cls)&0xff)
#define LS_GPU_CLS_SHIFT(cls) (((cls) >> 8) & 0x1f)

/*
 * ls_sample.aux of an LS_SAMPLE_GPULAUNCH sample: bits 0-31 correlation id, 32-39 api class,
 * 40-55 callback id, 56 set for a driver-API call, 57-61 log2 of the sampling period (0: every
 * launch was probed; k: this launch stands for 2^k launches).
 */
#define LS_GPU_AUX(corr, cls, cbid, driver)                                   \
	((__u64)(__u32)(corr) | ((__u64)LS_GPU_CLS_CLASS(cls) << 32) |        \
	 ((__u64)((cbid)&0xffff) << 40) | ((__u64)((driver) ? 1 : 0) << 56) | \
	 ((__u64)LS_GPU_CLS_SHIFT(cls) << 57))
#define LS_GPU_AUX_CORR(aux)   ((__u32)(aux))
#define LS_GPU_AUX_CLASS(aux)  ((__u32)(((aux) >> 32) & 0xff))
#define LS_GPU_AUX_CBID(aux)   ((__u32)(((aux) >> 40) & 0xffff))
#define LS_GPU_AUX_DRIVER(aux) ((__u32)(((aux) >> 56) & 1))
#define LS_GPU_AUX_SHIFT(aux)  ((__u32)(((aux) >> 57) & 0x1f))

/* ls_gpu_hdr.sub: which record follows the header. */
enum ls_gpu_sub {
	LS_GPU_HELLO = 1,     /* struct ls_gpu_hello: library state, once per attach */
	LS_GPU_ACTIVITY = 2,  /* hdr.count x struct ls_gpu_act */
	LS_GPU_NAME = 3,      /* struct ls_gpu_name + hdr.count bytes of name (no NUL) */
	LS_GPU_DEVICE = 4,    /* struct ls_gpu_device */
	LS_GPU_MEMSAMPLE = 5, /* struct ls_gpu_memsample: NVML memory of this process */
	LS_GPU_STATUS = 6,    /* struct ls_gpu_status: drops and errors since the last one */
	LS_GPU_EXIT = 7,      /* struct ls_gpu_status: final flush done; no more records follow */
	LS_GPU_LAUNCHES = 8,  /* struct ls_gpu_launches + hdr.count x struct ls_gpu_launch_ent */
};

/* Leads every record of the record probe (and so every LS_REC_GPU ring-buffer record). */
struct ls_gpu_hdr {
	__u32 type;	/* LS_REC_GPU (BPF) */
	__u32 pid;	/* host tgid (BPF) */
	__u32 tid;	/* host tid of the thread that fired the probe (BPF) */
	__u16 sub;	/* enum ls_gpu_sub */
	__u16 count;	/* entries (ACTIVITY, MEMSAMPLE) or name bytes (NAME) that follow */
	__u64 ts;	/* bpf_ktime_get_ns() at the probe (BPF) */
	__u64 cupti_ts; /* cuptiGetTimestamp() just before the probe: ts - cupti_ts maps clocks */
	__u32 seq;	/* per-process record number from 1: a gap means lost records */
	__u32 lib_pid;	/* getpid() in the library (differs from pid inside a pid namespace) */
};

/* enum ls_gpu_status_code: why the library collects less than everything. */
enum ls_gpu_status_code {
	LS_GPU_ST_OK = 0,
	LS_GPU_ST_NO_CUPTI = 1,	   /* no usable libcupti could be loaded */
	LS_GPU_ST_CONFLICT = 2,	   /* another CUPTI subscriber (torch.profiler, Nsight) */
	LS_GPU_ST_CUPTI_ERROR = 3, /* a CUPTI call failed; cupti_err says which result */
	LS_GPU_ST_NO_ACTIVITY = 4, /* callbacks work, activity tracing could not be enabled */
	LS_GPU_ST_DISABLED = 5,	   /* LINESCOPE_GPU=0 in the environment */
};

/* ls_gpu_hello.kinds: activity kinds enabled. */
enum ls_gpu_kind_bits {
	LS_GPU_KB_KERNEL = 1 << 0, /* CONCURRENT_KERNEL (never the serialising KERNEL kind) */
	LS_GPU_KB_MEMCPY = 1 << 1,
	LS_GPU_KB_MEMCPY2 = 1 << 2, /* peer-to-peer copies */
	LS_GPU_KB_MEMSET = 1 << 3,
	LS_GPU_KB_MEMORY2 = 1 << 4, /* allocation and release records */
	LS_GPU_KB_DEVICE = 1 << 5,
};

struct ls_gpu_hello {
	struct ls_gpu_hdr hdr;
	__u32 abi;	     /* LS_GPU_ABI_VERSION */
	__u32 cupti_version; /* cuptiGetVersion(); 0 when unknown */
	__u32 status;	     /* enum ls_gpu_status_code */
	__s32 cupti_err;     /* CUptiResult of the call that failed; 0 when none */
	__u32 kinds;	     /* enum ls_gpu_kind_bits */
	__u32 ncallbacks;    /* CUPTI callbacks enabled */
	__u32 epoch;	     /* attach count in this process (1 on the first attach) */
	__u32 nvml;	     /* 1: NVML already opened (it opens after the first records) */
	char cupti_path[128];
	char message[192]; /* one line for the report, "" when status is OK */
};

/* ls_gpu_act.kind */
enum ls_gpu_act_kind {
	LS_GPU_ACT_KERNEL = 1,
	LS_GPU_ACT_MEMCPY = 2,
	LS_GPU_ACT_MEMSET = 3,
	LS_GPU_ACT_ALLOC = 4, /* a MEMORY2 allocation */
	LS_GPU_ACT_FREE = 5,  /* a MEMORY2 release */
};

/* ls_gpu_act.flags */
enum ls_gpu_act_flags {
	LS_GPU_AF_NO_TIMING = 1 << 0, /* CUPTI gave a zero start or end: no device time */
	LS_GPU_AF_NCCL = 1 << 1,      /* an NCCL kernel (communication; includes peer waits) */
	LS_GPU_AF_GRAPH = 1 << 2,     /* part of a graph launch (graph_id set) */
	LS_GPU_AF_DEVMEM = 1 << 3,    /* alloc/free of device memory (counts toward the peak) */
	LS_GPU_AF_P2P = 1 << 4,	      /* a peer-to-peer copy (MEMCPY2) */
	LS_GPU_AF_NAME_CUT = 1 << 5,  /* the kernel name was longer than LS_GPU_NAME_MAX */
};

/* One normalised CUPTI activity record. Times are CUPTI timestamps (ns, CLOCK_REALTIME). */
struct ls_gpu_act {
	__u64 start;   /* 0 with LS_GPU_AF_NO_TIMING */
	__u64 end;     /* alloc/free: == start (the record's timestamp) */
	__u64 bytes;   /* copy, set, alloc, free size; 0 for kernels */
	__u64 addr;    /* alloc/free: device address; kernel/copy/set: graph node id */
	__u32 corr;    /* correlation id of the launching API call (0: none known) */
	__u32 name_id; /* kernel: id of an LS_GPU_NAME record of this process; 0: none */
	__u32 graph_id;
	__u32 stream;
	__u16 device; /* CUDA device ordinal as the process sees it */
	__u8 kind;    /* enum ls_gpu_act_kind */
	__u8 flags;   /* enum ls_gpu_act_flags */
	__u8 detail;  /* memcpy: CUpti_ActivityMemcpyKind; memset/alloc/free: memory kind */
	__u8 pad[3];
};

/* A kernel name, sent once per process and attach before the first record that uses its id. */
struct ls_gpu_name {
	struct ls_gpu_hdr hdr; /* count = name bytes that follow */
	__u32 id;
	__u32 flags; /* LS_GPU_AF_NCCL, LS_GPU_AF_NAME_CUT */
	char name[];
};

/*
 * One thread's kernel launches that the api probe did not carry, in the order they were made.
 * Each entry is either
 *   - a launch from the Python location of a reference launch (ref != 0): its stack is the
 *     reference's; or
 *   - a reference itself (ref == 0), a launch from a new location: nframes struct ls_frame follow
 *     the entry, innermost first, walked by the library in process as the BPF walker walks them
 *     (code object, instruction offset, fingerprint).
 * A reference is either one of these or a launch the api probe carried. Sent by the launching
 * thread before its next probe, when full or a few ms old, before every activity record (by
 * whichever thread sends those), at thread exit and at process exit, so a launch's entry always
 * comes before its device work.
 */
struct ls_gpu_launch_ent {
	__u32 corr;    /* correlation id of the launch */
	__u32 api_ns;  /* CPU time inside the call (capped at ~4.3 s) */
	__u64 t_mono;  /* its API exit, CLOCK_MONOTONIC as the library reads it */
	__u32 ref;     /* correlation id of the reference launch; 0: this is one, frames follow */
	__u16 nframes; /* frames that follow (ref == 0), at most LS_MAX_FRAMES */
	__u16 pad;
};

struct ls_gpu_launches {
	struct ls_gpu_hdr hdr; /* count = entries that follow (with their frames) */
	__u32 ident_corr; /* a launch of the same thread that the api probe carried: names it */
	__u32 pad;
	__u64 mono; /* CLOCK_MONOTONIC at the probe: hdr.ts - mono maps t_mono onto hdr.ts's clock */
	__u8 data[]; /* count entries, each followed by its frames */
};

#define LS_GPU_LAUNCHES_MAX 160 /* entries per LS_GPU_LAUNCHES record */

/* ls_gpu_device.flags: which fields are known */
enum ls_gpu_device_flags {
	LS_GPU_DF_CUPTI = 1 << 0, /* ordinal, name, memory from a CUPTI device record */
	LS_GPU_DF_NVML = 1 << 1,  /* nvml_index, driver version from NVML */
	LS_GPU_DF_MIG = 1 << 2,
};

struct ls_gpu_device {
	struct ls_gpu_hdr hdr;
	__u32 flags;	   /* enum ls_gpu_device_flags */
	__u32 ordinal;	   /* CUDA device ordinal (ls_gpu_act.device); ~0 when unknown */
	__u32 nvml_index;  /* ~0 when unknown */
	__u32 cc;	   /* compute capability * 10 (90 for Hopper); 0 when unknown */
	__u64 mem_total;   /* bytes; 0 when unknown */
	__u32 cuda_driver; /* CUDA version the driver supports, 13000 = 13.0; 0 unknown */
	__u32 pad;
	char name[96];	 /* "" when unknown */
	char driver[32]; /* NVIDIA driver version, "" when unknown */
	char uuid[48];	 /* "GPU-xxxxxxxx-...", "" when unknown */
};

/* NVML's view of this process's device memory (includes context and allocator caches). */
struct ls_gpu_memsample_dev {
	__u32 ordinal; /* CUDA ordinal when known, else ~0 */
	__u32 nvml_index;
	__u64 used; /* bytes NVML charges to this process on the device */
};

struct ls_gpu_memsample {
	struct ls_gpu_hdr hdr; /* count = entries in dev[] */
	__u64 total;	       /* sum of dev[].used */
	__u32 found; /* 0: NVML does not list this pid (pid namespace, or no context yet) */
	__u32 pad;
	struct ls_gpu_memsample_dev dev[];
};

struct ls_gpu_status {
	struct ls_gpu_hdr hdr;
	__u64 dropped;	   /* activity records CUPTI dropped (cuptiActivityGetNumDroppedRecords) */
	__u64 declined;	   /* buffers refused while no profiler was attached */
	__u64 records;	   /* activity records parsed since the library loaded */
	__u64 unknown;	   /* records of kinds the library does not use */
	__u64 no_timing;   /* records with zero timestamps */
	__u64 bad_buffers; /* buffers whose walk stopped on an invalid record */
	__u64 probe_skipped; /* api probes fired without an entry timestamp (attached mid-call) */
	__u64 unsampled;     /* activity records of launches left out by sampling (dropped) */
	__s32 last_err;	     /* last CUptiResult that failed, 0 when none */
	__u32 nvml;	     /* 1: NVML answers for this process; 0: nvml_note says why not */
	char nvml_note[128]; /* "" when NVML works */
};

/*
 * BPF-side counters for the GPU probes (.bss `gpu_stats` in bpf/gpu.bpf.c). Every failure path in
 * bpf/gpu.bpf.c bumps one of these; userspace reads them from the skeleton.
 */
struct ls_gpu_bpf_stats {
	__u64 api_calls;   /* api probes from target processes */
	__u64 records;	   /* record probes copied to the ring buffer */
	__u64 bad_len;	   /* record probes with a length out of range */
	__u64 read_fail;   /* bpf_probe_read_user of a record failed */
	__u64 rb_drops;	   /* ring buffer full */
	__u64 not_target;  /* probes from processes not in `procs` */
	__u64 bad_sub;	   /* record with an unknown ls_gpu_hdr.sub */
	__u64 launch_fail; /* the launch-stack hook returned an error */
	__u64 for_waiter;  /* launches of native threads charged to the Python thread waiting */
};

_Static_assert(sizeof(struct ls_gpu_hdr) == 40, "ls_gpu_hdr layout");
_Static_assert(sizeof(struct ls_gpu_act) == 56, "ls_gpu_act layout");
_Static_assert(sizeof(struct ls_gpu_hello) == 40 + 32 + 128 + 192, "ls_gpu_hello layout");
_Static_assert(sizeof(struct ls_gpu_name) == 48, "ls_gpu_name layout");
_Static_assert(sizeof(struct ls_gpu_device) == 40 + 32 + 96 + 32 + 48, "ls_gpu_device layout");
_Static_assert(sizeof(struct ls_gpu_memsample_dev) == 16, "ls_gpu_memsample_dev layout");
_Static_assert(sizeof(struct ls_gpu_memsample) == 56, "ls_gpu_memsample layout");
_Static_assert(sizeof(struct ls_gpu_status) == 40 + 72 + 128, "ls_gpu_status layout");
_Static_assert(sizeof(struct ls_gpu_hdr) + LS_GPU_BATCH_MAX * sizeof(struct ls_gpu_act) <=
		       LS_GPU_REC_MAX,
	       "an activity batch fits the record probe");
_Static_assert(sizeof(struct ls_gpu_name) + LS_GPU_NAME_MAX <= LS_GPU_REC_MAX,
	       "a name record fits the record probe");
_Static_assert(sizeof(struct ls_gpu_memsample) +
			       LS_GPU_MAX_DEVICES * sizeof(struct ls_gpu_memsample_dev) <=
		       LS_GPU_REC_MAX,
	       "a memory sample fits the record probe");
_Static_assert(sizeof(struct ls_gpu_launches) == 56, "ls_gpu_launches layout");
_Static_assert(sizeof(struct ls_gpu_launch_ent) == 24, "ls_gpu_launch_ent layout");
_Static_assert(sizeof(struct ls_gpu_launches) +
			       LS_GPU_LAUNCHES_MAX * sizeof(struct ls_gpu_launch_ent) <=
		       LS_GPU_REC_MAX,
	       "a launches record fits the record probe");
_Static_assert((LS_GPU_REC_MAX & (LS_GPU_REC_MAX - 1)) == 0, "LS_GPU_REC_MAX is a power of two");

#endif /* __LS_GPU_RECORDS_H */
