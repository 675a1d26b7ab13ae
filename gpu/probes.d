/* SPDX-License-Identifier: MIT */
/*
 * USDT probes of liblinescope_cupti.so (provider linescope_gpu). Arguments and records are
 * documented in gpu/gpu_records.h; bpf/gpu.bpf.c attaches to both. Both have semaphores: the
 * library does no work for a probe that no tracer is attached to.
 */
provider linescope_gpu {
	/* exit of a followed CUDA API call, in the calling thread */
	probe api(uint32_t corr, int32_t cbid, uint32_t cls, uint64_t dur_ns, const char *name);
	/* one complete record (struct ls_gpu_hdr first) of len bytes */
	probe record(const void *rec, uint32_t len);
};
