// SPDX-License-Identifier: MIT
/* Linear probing with backward-shift deletion, so no tombstones accumulate. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "hashmap.h"

void ls_hashmap_init(struct ls_hashmap *m)
{
	m->keys = m->vals = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}

void ls_hashmap_release(struct ls_hashmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	ls_hashmap_init(m);
}

static int grow(struct ls_hashmap *m)
{
	struct ls_hashmap bigger;
	size_t cap = m->cap ? m->cap * 2 : 16;

	bigger.keys = malloc(cap * sizeof(uint64_t));
	bigger.vals = malloc(cap * sizeof(uint64_t));
	bigger.used = calloc(cap, 1);
	bigger.cap = cap;
	bigger.n = 0;
	if (!bigger.keys || !bigger.vals || !bigger.used) {
		ls_hashmap_release(&bigger);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			ls_hashmap__set(&bigger, m->keys[i], m->vals[i]);
	ls_hashmap_release(m);
	*m = bigger;
	return 0;
}

static size_t find(const struct ls_hashmap *m, uint64_t key, bool *found)
{
	size_t mask = m->cap - 1, i = ls_hash64(key) & mask;

	while (m->used[i]) {
		if (m->keys[i] == key) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
	*found = false;
	return i;
}

uint64_t *ls_hashmap__slot(struct ls_hashmap *m, uint64_t key, uint64_t init)
{
	bool found;
	size_t i;

	if ((m->n + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	i = find(m, key, &found);
	if (!found) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = init;
		m->n++;
	}
	return &m->vals[i];
}

uint64_t *ls_hashmap__intern(struct ls_hashmap *m, uint64_t hash,
			     bool (*same)(const void *ctx, uint64_t idx), const void *ctx)
{
	uint64_t key = hash;

	/* ends: every probe that finds no key adds it, empty, and returns it */
	for (uint64_t i = 1;; i++) {
		uint64_t *slot = ls_hashmap__slot(m, key, LS_HASHMAP_EMPTY);

		if (!slot || *slot == LS_HASHMAP_EMPTY || same(ctx, *slot))
			return slot;
		key = ls_hash64(hash + i * 0x9e3779b97f4a7c15ULL);
	}
}

bool ls_hashmap__find(const struct ls_hashmap *m, uint64_t hash,
		      bool (*same)(const void *ctx, uint64_t idx), const void *ctx, uint64_t *idx)
{
	uint64_t key = hash;

	/* the probe sequence of ls_hashmap__intern(); entries found this way are never deleted */
	for (uint64_t i = 1;; i++) {
		if (!ls_hashmap__get(m, key, idx) || *idx == LS_HASHMAP_EMPTY)
			return false;
		if (same(ctx, *idx))
			return true;
		key = ls_hash64(hash + i * 0x9e3779b97f4a7c15ULL);
	}
}

int ls_hashmap__set(struct ls_hashmap *m, uint64_t key, uint64_t val)
{
	uint64_t *slot = ls_hashmap__slot(m, key, val);

	if (!slot)
		return -ENOMEM;
	*slot = val;
	return 0;
}

bool ls_hashmap__get(const struct ls_hashmap *m, uint64_t key, uint64_t *val)
{
	bool found;
	size_t i;

	if (!m->cap)
		return false;
	i = find(m, key, &found);
	if (found && val)
		*val = m->vals[i];
	return found;
}

bool ls_hashmap__del(struct ls_hashmap *m, uint64_t key)
{
	size_t mask, i, j;
	bool found;

	if (!m->cap)
		return false;
	i = find(m, key, &found);
	if (!found)
		return false;
	mask = m->cap - 1;
	m->used[i] = 0;
	m->n--;
	/* shift back later entries of the probe chain into the hole */
	for (j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
		size_t home = ls_hash64(m->keys[j]) & mask;

		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->used[i] = 1;
			m->used[j] = 0;
			i = j;
		}
	}
	return true;
}

bool ls_hashmap__next(const struct ls_hashmap *m, size_t *it, uint64_t *key, uint64_t *val)
{
	for (; *it < m->cap; (*it)++) {
		if (m->used[*it]) {
			if (key)
				*key = m->keys[*it];
			if (val)
				*val = m->vals[*it];
			(*it)++;
			return true;
		}
	}
	return false;
}

uint64_t ls_hash_str(const char *s, uint64_t seed)
{
	return XXH3_64bits_withSeed(s, strlen(s), seed);
}
