/* SPDX-License-Identifier: MIT */
/*
 * Maps, settings and counters shared by every BPF source file. Each is a __weak definition so that
 * bpftool's static linker merges the copies of all files into one object and one skeleton.
 */
#ifndef __LS_MAPS_BPF_H
#define __LS_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "linescope.h"

/* Every record for userspace, tagged by a leading enum ls_rec_type. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps") __weak;

/* The target set: tgid -> how to walk its interpreter. Userspace and fork tracking add entries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct ls_proc);
} procs SEC(".maps") __weak;

#endif /* __LS_MAPS_BPF_H */
