// SPDX-License-Identifier: MIT
/* Known interpreter executables (see images.h). A handful per run: a linear scan is enough. */
#include <errno.h>
#include <string.h>
#include "array.h"
#include "images.h"

void ls_images_init(struct ls_images *m)
{
	memset(m, 0, sizeof(*m));
	ls_hashmap_init(&m->none_index);
}

void ls_images_release(struct ls_images *m)
{
	free(m->v);
	free(m->none);
	ls_hashmap_release(&m->none_index);
	memset(m, 0, sizeof(*m));
}

static struct ls_image_ent *find(const struct ls_images *m, const struct ls_image_key *k)
{
	for (size_t i = 0; i < m->n; i++)
		if (!memcmp(&m->v[i].pi.image, k, sizeof(*k)))
			return &m->v[i];
	return NULL;
}

const struct ls_pyinfo *ls_images__find(const struct ls_images *m, const struct ls_image_key *k)
{
	struct ls_image_ent *e = find(m, k);

	return e ? &e->pi : NULL;
}

void ls_images__forget(struct ls_images *m, const struct ls_image_key *k)
{
	struct ls_image_ent *e = find(m, k);

	if (e)
		*e = m->v[--m->n];
}

/* The thread-state lookup is settled once checked against a live thread (or not glibc's). */
static bool tsd_settled(const struct ls_pyinfo *pi)
{
	return pi->tsd_verified || pi->proc.tsd_mode != LS_TS_GLIBC_TSD;
}

struct ls_image_ent *ls_images__learn(struct ls_images *m, const struct ls_pyinfo *pi)
{
	struct ls_image_ent *e, *v;
	uint32_t mode;

	if (!pi->in_exe)
		return NULL;
	e = find(m, &pi->image);
	if (!e) {
		if (m->n == LS_IMAGES_MAX)
			return NULL; /* still discovered through /proc, only not at once */
		v = ls_array_grow(m->v, &m->cap, m->n, sizeof(*v), 8);
		if (!v)
			return NULL;
		m->v = v;
		e = &m->v[m->n++];
		memset(e, 0, sizeof(*e));
		e->pi = *pi;
	} else if (tsd_settled(pi) && !tsd_settled(&e->pi)) {
		e->pi = *pi; /* a process has checked what the first one could not yet */
	}
	/* not checked yet: published with the thread-list walk, which holds for any libc */
	mode = tsd_settled(&e->pi) ? e->pi.proc.tsd_mode : LS_TS_THREAD_LIST;
	if (e->published && e->published_tsd == mode)
		return NULL;
	e->published = true;
	e->published_tsd = mode;
	return e;
}

static uint64_t key_hash(const struct ls_image_key *k)
{
	uint64_t h = k->ino * 0x9e3779b97f4a7c15ULL;

	h ^= (k->dev + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;
	h ^= ((uint64_t)k->mtime_sec << 30 ^ k->mtime_nsec) * 0x165667b19e3779f9ULL;
	return h ^ h >> 29;
}

struct none_probe {
	const struct ls_images *m;
	const struct ls_image_key *k;
};

static bool same_none(const void *ctx, uint64_t idx)
{
	const struct none_probe *q = ctx;

	return !memcmp(&q->m->none[idx], q->k, sizeof(*q->k));
}

int ls_images__mark_none(struct ls_images *m, const struct ls_image_key *k)
{
	struct none_probe q = {m, k};
	struct ls_image_key *v;
	uint64_t *slot;

	if (ls_images__is_none(m, k))
		return 0;
	if (m->nnone == LS_IMAGES_NONE_MAX)
		return -ENOSPC;
	v = ls_array_grow(m->none, &m->nonecap, m->nnone, sizeof(*v), 16);
	if (!v)
		return -ENOMEM;
	m->none = v;
	slot = ls_hashmap__intern(&m->none_index, key_hash(k), same_none, &q);
	if (!slot)
		return -ENOMEM;
	m->none[m->nnone] = *k;
	*slot = m->nnone++;
	return 0;
}

bool ls_images__is_none(const struct ls_images *m, const struct ls_image_key *k)
{
	struct none_probe q = {m, k};
	uint64_t idx;

	return ls_hashmap__find(&m->none_index, key_hash(k), same_none, &q, &idx);
}
