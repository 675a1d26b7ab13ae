/* SPDX-License-Identifier: MIT */
/*
 * Kernel-name interning for the injection library: each distinct kernel name gets a small id that
 * activity records carry (ls_gpu_act.name_id); the name itself crosses to BPF once per process and
 * attach (LS_GPU_NAME). CUPTI shares one name string among all records of a kernel, so a
 * pointer-keyed cache answers almost every lookup without hashing (it still compares the text,
 * as an address can be reused for another name).
 * Not thread-safe: the caller serialises.
 */
#ifndef LS_GPU_KNAME_H
#define LS_GPU_KNAME_H

#include <linux/types.h>

#define LS_KNAME_MAX_IDS (1u << 20) /* distinct names per process; later ones get id 0 */

struct ls_kname;

struct ls_kname_entry {
	const char *name; /* our copy, NUL-terminated, cut at LS_GPU_NAME_MAX bytes */
	__u32 len;
	__u32 flags;	  /* LS_GPU_AF_NCCL, LS_GPU_AF_NAME_CUT */
	__u32 sent_epoch; /* attach epoch in which the name was last announced */
};

int ls_kname__new(struct ls_kname **out);
void ls_kname__free(struct ls_kname *t);

/*
 * The id of name (>= 1), interning it on first sight; 0 when name is NULL, memory ran out or the
 * table is full. *entry is set when the id is not 0; it stays valid until the next call.
 */
__u32 ls_kname__intern(struct ls_kname *t, const char *name, struct ls_kname_entry **entry);

/* Names interned so far. */
__u32 ls_kname__count(const struct ls_kname *t);

#endif
