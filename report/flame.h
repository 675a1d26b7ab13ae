/* SPDX-License-Identifier: MIT */
/*
 * The call tree of a model's samples (LS_MODEL_STACKS), for the report's flame graph: one root
 * per process, identical paths merged, self values per node. Built once from the model and
 * read-only afterwards; it points into nothing, so it may outlive the model.
 */
#ifndef LS_FLAME_H
#define LS_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include "jbuf.h"
#include "model.h"

/* Nodes kept at most (the process roots and the "(other)" nodes included). */
#ifndef LS_FLAME_MAX_NODES
#define LS_FLAME_MAX_NODES 200000
#endif

/* ls_flame_node.func for the nodes that are not a Python frame */
enum ls_flame_special {
	LS_FLAME_ROOT = -1,   /* a process */
	LS_FLAME_NATIVE = -2, /* samples without a Python frame (the exporters' [native]) */
	LS_FLAME_OTHER = -3,  /* the nodes below this parent that the cap left out, summed */
};

struct ls_flame_node {
	int parent; /* index of the parent (always lower), -1 for a process root */
	int proc;   /* index into the model's procs */
	int func;   /* index into the model's funcs, or enum ls_flame_special */
	int line;
	int64_t count; /* self on-CPU samples */
	int64_t ns[4]; /* self time by enum ls_sample_class, on-CPU scaled as the lines are */
};

struct ls_flame {
	struct ls_flame_node *nodes;
	size_t n;
	size_t folded; /* nodes of the full tree counted into "(other)" nodes */
};

/* Builds the tree of m (loaded with LS_MODEL_STACKS), at most max_nodes (>= 2 per process). */
int ls_flame__new(const struct ls_model *m, size_t max_nodes, struct ls_flame **out);
void ls_flame__free(struct ls_flame *f);

/* The report data's "flame" object (docs/report-data.md), or null without stacks. */
void ls_flame__json(struct ls_jbuf *b, const struct ls_model *m, const struct ls_flame *f);

#endif
