// SPDX-License-Identifier: MIT
/* Stack interning keyed by an XXH3 hash of the frame array; equal hashes are chained and compared.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "stacks.h"

void ls_stacks_init(struct ls_stacks *s)
{
	memset(s, 0, sizeof(*s));
	ls_hashmap_init(&s->index);
	s->n = 1;
	s->flushed = 1;
}

void ls_stacks_release(struct ls_stacks *s)
{
	for (size_t i = 1; i < s->n; i++)
		free(s->v[i].frames);
	free(s->v);
	free(s->next);
	ls_hashmap_release(&s->index);
	memset(s, 0, sizeof(*s));
}

int64_t ls_stacks__intern(struct ls_stacks *s, const uint32_t *frames, int depth, bool truncated)
{
	uint64_t h = XXH3_64bits(frames, depth * 8) ^ truncated, first;
	struct ls_stack *st;

	if (depth == 0)
		return 0;
	if (ls_hashmap__get(&s->index, h, &first)) {
		for (uint32_t id = first; id; id = s->next[id]) {
			st = &s->v[id];
			if (st->depth == depth && st->truncated == truncated &&
			    !memcmp(st->frames, frames, depth * 8))
				return id;
		}
	}
	if (s->n == s->cap || !s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 1024;
		struct ls_stack *v = realloc(s->v, cap * sizeof(*v));
		uint32_t *next;

		if (!v)
			return -ENOMEM;
		s->v = v;
		next = realloc(s->next, cap * sizeof(*next));
		if (!next)
			return -ENOMEM;
		s->next = next;
		s->cap = cap;
	}
	st = &s->v[s->n];
	st->frames = malloc(depth * 8);
	if (!st->frames)
		return -ENOMEM;
	memcpy(st->frames, frames, depth * 8);
	st->depth = depth;
	st->truncated = truncated;
	s->next[s->n] = ls_hashmap__get(&s->index, h, &first) ? (uint32_t)first : 0;
	if (ls_hashmap__set(&s->index, h, s->n))
		return -ENOMEM;
	return s->n++;
}
