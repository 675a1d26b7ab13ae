// SPDX-License-Identifier: MIT
/* Known interpreter executables (see images.h). A handful per run: a linear scan is enough. */
#include <string.h>
#include "array.h"
#include "images.h"

void ls_images_init(struct ls_images *m)
{
	memset(m, 0, sizeof(*m));
}

void ls_images_release(struct ls_images *m)
{
	free(m->v);
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
	if (!tsd_settled(&e->pi))
		return NULL;
	if (e->published && e->published_tsd == e->pi.proc.tsd_mode)
		return NULL;
	e->published = true;
	e->published_tsd = e->pi.proc.tsd_mode;
	return e;
}
