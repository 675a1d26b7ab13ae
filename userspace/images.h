/* SPDX-License-Identifier: MIT */
/*
 * Interpreter executables already discovered, by the kernel's name for the file (device, inode,
 * mtime). A process that execs one is resolved from its exec record alone, without /proc, and BPF
 * gets the image too (`images`), so the process is walked from its first sample.
 */
#ifndef LS_IMAGES_H
#define LS_IMAGES_H

#include <stdbool.h>
#include <stddef.h>
#include "python.h"

#define LS_IMAGES_MAX 256 /* as many as BPF's `images` map holds */

struct ls_image_ent {
	struct ls_pyinfo pi; /* as found in one process (its load bias included) */
	bool published;	     /* BPF has it, with pi's current thread-state lookup */
	uint32_t published_tsd;
};

struct ls_images {
	struct ls_image_ent *v;
	size_t n, cap;
};

void ls_images_init(struct ls_images *m);
void ls_images_release(struct ls_images *m);

/* The image named k, or NULL. */
const struct ls_pyinfo *ls_images__find(const struct ls_images *m, const struct ls_image_key *k);

/* Forgets the image named k (its file changed under the same name). */
void ls_images__forget(struct ls_images *m, const struct ls_image_key *k);

/*
 * Learns (or refreshes) pi's image: pi must be in_exe. Returns the entry when BPF should get it
 * now (new, or its thread-state lookup got settled or changed); NULL otherwise.
 */
struct ls_image_ent *ls_images__learn(struct ls_images *m, const struct ls_pyinfo *pi);

#endif
