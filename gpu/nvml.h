/* SPDX-License-Identifier: MIT */
/*
 * NVML through dlopen("libnvidia-ml.so.1"): the library ships with the NVIDIA driver, not the
 * toolkit, so there is no header or link-time library for it. Only the few functions used here are
 * declared (nvml.c), with the layouts of NVML API version 13.
 *
 * Used by the injection library (device cards, this process's memory) and usable by the collector.
 * A missing library, a missing driver or an old one is not an error of ours: ls_nvml__open() fails
 * with a one-line reason for the report, and callers carry on without NVML.
 * Not thread-safe: one caller at a time per handle.
 */
#ifndef LS_GPU_NVML_H
#define LS_GPU_NVML_H

#include <stddef.h>
#include <linux/types.h>

struct ls_nvml;

struct ls_nvml_dev {
	__u32 index;
	__u32 mig;	 /* 1: MIG mode on (per-process numbers need privileges) */
	__u64 mem_total; /* 0 when unknown */
	__u64 mem_used;	 /* device-wide, every process; 0 when unknown */
	char name[96];
	char uuid[48];
};

/*
 * Loads the library (LINESCOPE_NVML_LIB overrides the name) and initialises it.
 * Returns 0, or -ENOENT (no library: no driver), -ENODEV (the library refused: driver not loaded,
 * mismatch) with a reason in why[]; *out untouched on failure.
 */
int ls_nvml__open(struct ls_nvml **out, char *why, size_t why_size);
void ls_nvml__close(struct ls_nvml *nvml);

/* Devices NVML sees (all of them, regardless of CUDA_VISIBLE_DEVICES); 0 on failure. */
int ls_nvml__count(struct ls_nvml *nvml);
int ls_nvml__device(struct ls_nvml *nvml, __u32 index, struct ls_nvml_dev *out);

/* Driver version text ("580.126.09") and the CUDA version it supports (13000); "" / 0 unknown. */
void ls_nvml__driver(struct ls_nvml *nvml, char *buf, size_t size, __u32 *cuda_version);

/*
 * Device memory NVML charges to host pid on device index (context, allocator caches and all).
 * Returns 1 and sets *used when the pid is listed, 0 when it is not, negative errno on failure.
 */
int ls_nvml__proc_used(struct ls_nvml *nvml, __u32 index, __u32 pid, __u64 *used);

#endif
