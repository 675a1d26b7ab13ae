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
#include "hashmap.h"
#include "python.h"

#define LS_IMAGES_MAX 256 /* as many as BPF's `images` map holds */

struct ls_image_ent {
	struct ls_pyinfo pi; /* as found in one process (its load bias included) */
	bool published;	     /* BPF has it, with the thread-state lookup published_tsd */
	uint32_t published_tsd;
};

struct ls_images {
	struct ls_image_ent *v;
	size_t n, cap;
	/* executables found not to be Python (no interpreter in them, none they need) */
	struct ls_image_key *none;
	size_t nnone, nonecap;
	struct ls_hashmap none_index; /* hash of the key -> index into none */
};

void ls_images_init(struct ls_images *m);
void ls_images_release(struct ls_images *m);

/* The image named k, or NULL. */
const struct ls_pyinfo *ls_images__find(const struct ls_images *m, const struct ls_image_key *k);

/* Forgets the image named k (its file changed under the same name). */
void ls_images__forget(struct ls_images *m, const struct ls_image_key *k);

/*
 * Learns (or refreshes) pi's image: pi must be in_exe. Returns the entry when BPF should get it
 * now, with the lookup in published_tsd (new: the thread-list walk until a process has checked
 * glibc's; or that lookup got settled or changed); NULL otherwise.
 */
struct ls_image_ent *ls_images__learn(struct ls_images *m, const struct ls_pyinfo *pi);

/*
 * Executables that are not Python: a process of one, seen alive, had no interpreter mapped and
 * its file neither holds one nor needs a libpython. A later process of the file is known not to
 * be Python from its exec record, also one gone before /proc could be read. At most
 * LS_IMAGES_NONE_MAX; 0 or -ENOMEM/-ENOSPC.
 */
#define LS_IMAGES_NONE_MAX 65536
int ls_images__mark_none(struct ls_images *m, const struct ls_image_key *k);
bool ls_images__is_none(const struct ls_images *m, const struct ls_image_key *k);

#endif
