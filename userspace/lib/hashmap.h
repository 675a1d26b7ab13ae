/* SPDX-License-Identifier: MIT */
/*
 * Open-addressing hash map from u64 keys to u64 values (values are often indices or pointers).
 * Embedded object: ls_hashmap_init/_release. Not thread-safe.
 */
#ifndef LS_HASHMAP_H
#define LS_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ls_hashmap {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap; /* power of two */
	size_t n;
};

void ls_hashmap_init(struct ls_hashmap *m);
void ls_hashmap_release(struct ls_hashmap *m);

/* Inserts or replaces. 0 or -ENOMEM. */
int ls_hashmap__set(struct ls_hashmap *m, uint64_t key, uint64_t val);
/* Returns true and *val when present. */
bool ls_hashmap__get(const struct ls_hashmap *m, uint64_t key, uint64_t *val);
/* Returns a pointer to the value slot, inserting `init` when absent; NULL on -ENOMEM. The pointer
 * is valid until the next insertion. */
uint64_t *ls_hashmap__slot(struct ls_hashmap *m, uint64_t key, uint64_t init);
bool ls_hashmap__del(struct ls_hashmap *m, uint64_t key);

/*
 * Interning by full key: values are indices of entries kept elsewhere, and same(ctx, index) says
 * whether an entry is the one sought. Returns the slot of that entry, or an empty slot
 * (*slot == LS_HASHMAP_EMPTY) for the caller to fill with the new entry's index. Entries whose
 * 64-bit hashes collide each get a slot of their own: the map is probed at hash, then at rehashes
 * of it, so a collision costs a probe, never a wrong or unreachable entry. NULL on -ENOMEM; the
 * pointer is valid until the next insertion.
 */
#define LS_HASHMAP_EMPTY UINT64_MAX
uint64_t *ls_hashmap__intern(struct ls_hashmap *m, uint64_t hash,
			     bool (*same)(const void *ctx, uint64_t idx), const void *ctx);

/* The entry ls_hashmap__intern() would return, without adding one: true and *idx when found. */
bool ls_hashmap__find(const struct ls_hashmap *m, uint64_t hash,
		      bool (*same)(const void *ctx, uint64_t idx), const void *ctx, uint64_t *idx);

/* Iteration: for (size_t i = 0; ls_hashmap__next(m, &i, &k, &v); ) */
bool ls_hashmap__next(const struct ls_hashmap *m, size_t *it, uint64_t *key, uint64_t *val);

/* A string's hash for ls_hashmap keys, seeded (XXH3); callers compare the strings on a match. */
uint64_t ls_hash_str(const char *s, uint64_t seed);

static inline uint64_t ls_hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

#endif
