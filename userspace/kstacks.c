// SPDX-License-Identifier: MIT
/* (stack hash, pid) -> the resolution of the kernel's added-up stacks (see kstacks.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "kstacks.h"

void ls_kstacks_init(struct ls_kstacks *t)
{
	memset(t, 0, sizeof(*t));
	ls_hashmap_init(&t->index);
}

void ls_kstacks_release(struct ls_kstacks *t)
{
	free(t->v);
	ls_hashmap_release(&t->index);
	memset(t, 0, sizeof(*t));
}

struct probe {
	const struct ls_kstacks *t;
	uint64_t hash;
	uint32_t pid;
};

static bool same(const void *ctx, uint64_t idx)
{
	const struct probe *q = ctx;

	return q->t->v[idx].hash == q->hash && q->t->v[idx].pid == q->pid;
}

static uint64_t key_of(uint64_t hash, uint32_t pid)
{
	return ls_hash64(hash ^ ls_hash64(pid));
}

int ls_kstacks__set(struct ls_kstacks *t, const struct ls_kstack *e)
{
	struct probe q = {t, e->hash, e->pid};
	uint64_t *slot = ls_hashmap__intern(&t->index, key_of(e->hash, e->pid), same, &q);
	struct ls_kstack *v;

	if (!slot)
		return -ENOMEM;
	if (*slot != LS_HASHMAP_EMPTY) {
		t->v[*slot] = *e;
		return 0;
	}
	v = ls_array_grow(t->v, &t->cap, t->n, sizeof(*v), 256);
	if (!v)
		return -ENOMEM;
	t->v = v;
	t->v[t->n] = *e;
	*slot = t->n++;
	return 0;
}

const struct ls_kstack *ls_kstacks__get(const struct ls_kstacks *t, uint64_t hash, uint32_t pid)
{
	struct probe q = {t, hash, pid};
	uint64_t idx;

	return ls_hashmap__find(&t->index, key_of(hash, pid), same, &q, &idx) ? &t->v[idx] : NULL;
}
