/* SPDX-License-Identifier: MIT */
/*
 * Interned resolved stacks: arrays of (function id, line) pairs, innermost first, each stored once
 * and numbered from 1 (0 is the empty stack: no Python frame). Not thread-safe.
 */
#ifndef LS_STACKS_H
#define LS_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hashmap.h"

struct ls_stack {
	uint32_t *frames; /* 2 * depth u32: function id, line */
	int depth;
	bool truncated;
};

struct ls_stacks {
	struct ls_stack *v; /* v[0] unused */
	size_t n, cap;
	size_t flushed; /* stacks [1, flushed) are in the store */
	struct ls_hashmap
		index; /* hash -> id of the first stack with that hash; chained via next */
	uint32_t *next;
};

void ls_stacks_init(struct ls_stacks *s);
void ls_stacks_release(struct ls_stacks *s);

/* Returns the id of the stack (interning a copy), or a negative errno. */
int64_t ls_stacks__intern(struct ls_stacks *s, const uint32_t *frames, int depth, bool truncated);

static inline const struct ls_stack *ls_stacks__get(const struct ls_stacks *s, int64_t id)
{
	return id > 0 && (size_t)id < s->n ? &s->v[id] : NULL;
}

#endif
