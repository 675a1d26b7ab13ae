/* SPDX-License-Identifier: MIT */
/*
 * Stacks the kernel adds up (bpf/agg.bpf.h): what each (stack hash, pid) that BPF described by a
 * whole record resolved to, so that the counts drained from the kernel's maps land on the same
 * process row, stack and image as that record.
 */
#ifndef LS_KSTACKS_H
#define LS_KSTACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hashmap.h"

struct ls_kstack {
	uint64_t hash; /* BPF's stack hash (frames, walk flags, process start, image) */
	uint32_t pid;  /* tgid */
	uint32_t proc; /* index of the recorder's process */
	int64_t stack; /* interned stack id (0: no Python frame) */
	uint8_t flags; /* the walk's LS_SF_* flags */
	uint8_t image; /* index of the process image (exec) it belongs to */
	bool partial;  /* some frames were not resolved: the next record resolves it again */
};

struct ls_kstacks {
	struct ls_kstack *v;
	size_t n, cap;
	struct ls_hashmap index; /* hash of (hash, pid) -> index into v */
};

void ls_kstacks_init(struct ls_kstacks *t);
void ls_kstacks_release(struct ls_kstacks *t);

/* Records what (e->hash, e->pid) resolved to, replacing an earlier resolution. 0 or -ENOMEM. */
int ls_kstacks__set(struct ls_kstacks *t, const struct ls_kstack *e);
/* The resolution of (hash, pid), or NULL when its record never came. */
const struct ls_kstack *ls_kstacks__get(const struct ls_kstacks *t, uint64_t hash, uint32_t pid);

#endif
