/* SPDX-License-Identifier: MIT */
/*
 * CUPTI activity buffers -> normalised records (struct ls_gpu_act). Pure: no global state, no
 * CUPTI calls except the record iterator it is given, so tests walk hand-built buffers through the
 * real libcupti.so.13 iterator.
 *
 * The walk always goes through cuptiActivityGetNextRecord (never sizeof: the stride follows the
 * libcupti loaded at run time) and reads only fields whose offsets are the same in every record
 * version since CUDA 11 (checked at build time in activity.c).
 */
#ifndef LS_GPU_ACTIVITY_H
#define LS_GPU_ACTIVITY_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>
#include <cupti.h>

#include "gpu_records.h"

typedef CUptiResult(CUPTIAPI *ls_gpu_next_fn)(uint8_t *buf, size_t valid, CUpti_Activity **rec);

/* A CUPTI device record, reduced to what the report shows. */
struct ls_gpu_devinfo {
	__u32 ordinal; /* CUDA device ordinal (matches ls_gpu_act.device) */
	__u32 cc;      /* compute capability * 10 */
	__u64 mem_total;
	char name[96];
	char uuid[48]; /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML prints it */
};

struct ls_gpu_parse_ops {
	ls_gpu_next_fn next; /* cuptiActivityGetNextRecord */
	/*
	 * One record of a kind we use. kname is the kernel name (owned by CUPTI, valid until the
	 * buffer is freed) or NULL. act may be changed (name_id). A negative return stops the walk.
	 */
	int (*act)(void *ctx, struct ls_gpu_act *act, const char *kname);
	/* A device record; may be NULL. */
	int (*device)(void *ctx, const struct ls_gpu_devinfo *dev);
	void *ctx;
};

struct ls_gpu_parse_stats {
	__u64 records;	 /* records the iterator returned */
	__u64 used;	 /* records handed to ops->act */
	__u64 unknown;	 /* records of kinds we do not use (skipped) */
	__u64 no_timing; /* used records with a zero or inverted timestamp */
	__u64 bad;	 /* walks that stopped on an invalid or truncated record */
	__u64 devices;
};

/*
 * Walks buf[0..valid) and calls ops for every record. Stats accumulate into *st.
 * Returns the number of records walked; -EBADMSG when the walk stopped on an invalid or truncated
 * record (records before it were delivered, st->bad counts it); or the callback's negative value.
 */
int ls_gpu_activity__parse(const struct ls_gpu_parse_ops *ops, uint8_t *buf, size_t valid,
			   struct ls_gpu_parse_stats *st);

/*
 * Normalises one record into *out (name_id 0) and sets *kname for kernels.
 * Returns 1 for a kind we use, 0 for any other kind (out untouched).
 */
int ls_gpu_activity__normalize(const CUpti_Activity *rec, struct ls_gpu_act *out,
			       const char **kname);

/* Fills *dev from a CUPTI_ACTIVITY_KIND_DEVICE record; returns 1, or 0 for any other kind. */
int ls_gpu_activity__device(const CUpti_Activity *rec, struct ls_gpu_devinfo *dev);

/* True for NCCL's kernels (ncclDevKernel_*, ncclKernel_*): communication, not compute. */
int ls_gpu_activity__is_nccl(const char *kname);

/* Formats a CUDA UUID the way NVML does ("GPU-" 8-4-4-4-12 hex digits). */
void ls_gpu_activity__uuid_str(const unsigned char bytes[16], char *out, size_t size);

#endif
