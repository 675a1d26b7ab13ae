// SPDX-License-Identifier: MIT
/* Kernel-name interning; see kname.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kname.h"
#include "gpu_records.h"

#define PTR_CACHE 1024 /* direct-mapped: CUPTI's shared name pointer -> id */

struct ptr_slot {
	const char *ptr;
	__u32 id;
};

struct ls_kname {
	struct ls_kname_entry *ents; /* id - 1 -> entry */
	__u32 *hashes;		     /* id - 1 -> content hash */
	__u32 n, cap;
	__u32 *slots; /* open addressing on content hash: id, 0 = empty */
	__u32 nslots; /* power of two, kept at most half full */
	struct ptr_slot cache[PTR_CACHE];
};

int ls_kname__new(struct ls_kname **out)
{
	struct ls_kname *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->nslots = 256;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void ls_kname__free(struct ls_kname *t)
{
	__u32 i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		free((char *)t->ents[i].name);
	free(t->ents);
	free(t->hashes);
	free(t->slots);
	free(t);
}

__u32 ls_kname__count(const struct ls_kname *t)
{
	return t->n;
}

/* FNV-1a over at most LS_GPU_NAME_MAX bytes; sets *len to the bytes hashed */
static __u32 hash_name(const char *s, __u32 *len, int *cut)
{
	__u32 h = 2166136261u, i;

	for (i = 0; s[i] && i < LS_GPU_NAME_MAX; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	*len = i;
	*cut = s[i] != 0;
	return h;
}

static int grow_slots(struct ls_kname *t)
{
	__u32 n = t->nslots * 2, i, j, *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		for (j = t->hashes[i] & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static __u32 add(struct ls_kname *t, const char *name, __u32 len, __u32 h, int cut)
{
	struct ls_kname_entry *e;
	char *copy;
	__u32 j;

	if (t->n >= LS_KNAME_MAX_IDS)
		return 0;
	if ((t->n + 1) * 2 > t->nslots && grow_slots(t))
		return 0;
	if (t->n == t->cap) {
		__u32 cap = t->cap ? t->cap * 2 : 64;
		void *ents = realloc(t->ents, cap * sizeof(*t->ents));

		if (!ents)
			return 0;
		t->ents = ents;
		ents = realloc(t->hashes, cap * sizeof(*t->hashes));
		if (!ents)
			return 0;
		t->hashes = ents;
		t->cap = cap;
	}
	copy = malloc(len + 1);
	if (!copy)
		return 0;
	memcpy(copy, name, len);
	copy[len] = 0;
	e = &t->ents[t->n];
	e->name = copy;
	e->len = len;
	e->flags = (cut ? LS_GPU_AF_NAME_CUT : 0) | (strncmp(copy, "nccl", 4) ? 0 : LS_GPU_AF_NCCL);
	e->sent_epoch = 0;
	t->hashes[t->n] = h;
	for (j = h & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
		;
	t->slots[j] = ++t->n;
	return t->n;
}

__u32 ls_kname__intern(struct ls_kname *t, const char *name, struct ls_kname_entry **entry)
{
	struct ptr_slot *ps;
	__u32 h, len, j, id;
	int cut;

	if (!name)
		return 0;
	ps = &t->cache[((uintptr_t)name >> 3) % PTR_CACHE];
	if (ps->ptr == name && ps->id) {
		struct ls_kname_entry *e = &t->ents[ps->id - 1];

		/* a pointer can be reused (module unloaded, another loaded): check the text too */
		if (strncmp(e->name, name, e->len) == 0 &&
		    ((e->flags & LS_GPU_AF_NAME_CUT) || name[e->len] == 0)) {
			*entry = e;
			return ps->id;
		}
	}
	h = hash_name(name, &len, &cut);
	for (j = h & (t->nslots - 1); (id = t->slots[j]); j = (j + 1) & (t->nslots - 1)) {
		if (t->hashes[id - 1] == h && t->ents[id - 1].len == len &&
		    memcmp(t->ents[id - 1].name, name, len) == 0)
			break;
	}
	if (!id)
		id = add(t, name, len, h, cut);
	if (!id)
		return 0;
	ps->ptr = name;
	ps->id = id;
	*entry = &t->ents[id - 1];
	return id;
}
