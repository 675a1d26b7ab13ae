/* SPDX-License-Identifier: MIT */
/*
 * Verified programs and their maps kept in bpffs across runs (loader_keep.c): a run with the same
 * configuration binds to them instead of verifying again.
 */
#ifndef LS_LOADER_KEEP_H
#define LS_LOADER_KEEP_H

#include <stdbool.h>
#include <stdint.h>

struct linescope_bpf;
struct ls_keep;

/* The key of an opened and configured skeleton: its object, .rodata, map sizes and programs. */
uint64_t ls_keep__key(const struct linescope_bpf *skel);

/*
 * Binds skel (opened and configured, not loaded) to the load kept under key: every map of skel
 * takes the kept map's descriptor, its contents reset to what a fresh load holds (.bss from
 * skel's own image, which skel->bss then maps), and ls_keep__prog_fd gives the programs. The
 * entry is locked until ls_keep__free. 0; -ENOENT when nothing usable is kept for key or another
 * run holds it (skel is then untouched: load it); another negative errno when skel is left
 * half-bound (a reset failed: do not use it).
 */
int ls_keep__bind(struct linescope_bpf *skel, uint64_t key, struct ls_keep **out);

/* The descriptor of a bound program by its index in the object, or -1 when it is not loaded. */
int ls_keep__prog_fd(const struct ls_keep *k, int index);

/*
 * Keeps a load for the runs after this one under key: every created map of skel and every loaded
 * program of skel or second (the same object, loaded in two shares; may be NULL), pinned
 * whole, replacing whatever else is kept and not in use. 0 or a negative errno.
 */
int ls_keep__store(const struct linescope_bpf *skel, const struct linescope_bpf *second,
		   uint64_t key);

/* The kernel's answer to taskwork_probe.c's question, kept for the boot (bpffs ends with it). */
struct ls_keep_probe {
	int err;
	bool rseq, task_work;
	char why[256];
};

/* 0 with *p filled, or -ENOENT when nothing is kept. */
int ls_keep__probe_get(struct ls_keep_probe *p);
void ls_keep__probe_put(const struct ls_keep_probe *p);

/* Every kept load nobody holds removed, and the kept probe (--unload). */
void ls_keep__drop_all(void);

/* Unlocks the entry and unmaps skel's .bss (call before destroying skel). NULL is a no-op. */
void ls_keep__free(struct ls_keep *k);

#endif
