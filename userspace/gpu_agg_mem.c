// SPDX-License-Identifier: MIT
/*
 * Each process's GPU memory timeline: live allocations by address, the allocated level over
 * time, NVML's readings and the bucketed series the report draws; see gpu_agg_int.h.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_agg_int.h"

/* Halves the series' resolution, merging neighbours and keeping the highest levels. */
static void series_halve(struct proc *p)
{
	__u32 i, n = 0;

	for (i = 0; i < p->nser; i++) {
		struct series_pt s = p->ser[i];

		s.bucket /= 2;
		if (n && p->ser[n - 1].bucket == s.bucket) {
			struct series_pt *d = &p->ser[n - 1];

			d->alloc = s.alloc > d->alloc ? s.alloc : d->alloc;
			d->nvml = s.nvml > d->nvml ? s.nvml : d->nvml;
		} else {
			p->ser[n++] = s;
		}
	}
	p->nser = n;
	p->bucket_ns *= 2;
}

static int series_put(struct proc *p, __u64 t_mono, __u64 alloc, __u64 nvml)
{
	__u64 b;
	__u32 i;

	if (!t_mono)
		return 0;
	b = t_mono / p->bucket_ns;
	for (i = p->nser; i > 0 && p->ser[i - 1].bucket > b; i--)
		;
	if (i > 0 && p->ser[i - 1].bucket == b) {
		struct series_pt *s = &p->ser[i - 1];

		s->alloc = alloc > s->alloc ? alloc : s->alloc;
		s->nvml = nvml > s->nvml ? nvml : s->nvml;
		return 0;
	}
	if (p->nser == SERIES_MAX) {
		series_halve(p);
		return series_put(p, t_mono, alloc, nvml);
	}
	if (p->nser == p->capser) {
		__u32 cap = p->capser ? p->capser * 2 : 256;
		void *n = realloc(p->ser, cap * sizeof(*p->ser));

		if (!n)
			return -ENOMEM;
		p->ser = n;
		p->capser = cap;
	}
	memmove(&p->ser[i + 1], &p->ser[i], (p->nser - i) * sizeof(*p->ser));
	p->ser[i] = (struct series_pt){.bucket = b, .alloc = alloc, .nvml = nvml};
	p->nser++;
	return 0;
}

static __u32 addr_slot(const struct addr_map *m, __u64 addr)
{
	return (__u32)(hash32((__u32)(addr >> 8) ^ (__u32)(addr >> 40)) & (m->cap - 1));
}

static int addr_put(struct addr_map *m, __u64 addr, __u64 bytes)
{
	__u32 i;

	if ((m->n + 1) * 2 > m->cap) {
		struct addr_map g = {.cap = m->cap ? m->cap * 2 : 256};

		g.keys = calloc(g.cap, sizeof(*g.keys));
		g.vals = calloc(g.cap, sizeof(*g.vals));
		if (!g.keys || !g.vals) {
			free(g.keys);
			free(g.vals);
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->keys[i])
				addr_put(&g, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		*m = g;
	}
	for (i = addr_slot(m, addr); m->keys[i] && m->keys[i] != addr; i = (i + 1) & (m->cap - 1))
		;
	if (!m->keys[i])
		m->n++;
	m->keys[i] = addr;
	m->vals[i] = bytes;
	return 0;
}

/* Removes addr; returns its bytes, or 0 when it was not a live allocation we saw. */
static __u64 addr_take(struct addr_map *m, __u64 addr)
{
	__u32 i, j, k;
	__u64 bytes;

	if (!m->cap)
		return 0;
	for (i = addr_slot(m, addr); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == addr)
			break;
	if (!m->keys[i])
		return 0;
	bytes = m->vals[i];
	m->keys[i] = 0;
	m->n--;
	/* backward-shift: move later entries of the run into the hole when their home allows */
	for (j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		k = addr_slot(m, m->keys[j]);
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
	return bytes;
}

/* Level of allocated memory just after time t (CUPTI clock). */
static __u64 level_at(const struct proc *p, __u64 t, __u32 *after)
{
	__u32 lo = 0, hi = p->nmev;

	while (lo < hi) {
		__u32 mid = (lo + hi) / 2;

		if (p->mev[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	*after = lo;
	return lo ? p->mev[lo - 1].level : p->mev_base;
}

__u64 gpu_mem_alloc_max(const struct proc *p, __u64 start, __u64 end)
{
	__u32 i;
	__u64 m;

	if (!start)
		return p->cur_alloc;
	m = level_at(p, start, &i);
	for (; i < p->nmev && p->mev[i].t <= end; i++)
		if (p->mev[i].level > m)
			m = p->mev[i].level;
	return m;
}

/*
 * NVML's figure at time t: the last sample before t, else the first one after (the library
 * samples from its buffer thread, so the first sample comes after the first kernels; what NVML
 * counts is mostly the context, present from the start).
 */
__u64 gpu_mem_nvml_at(const struct proc *p, __u64 t)
{
	__u32 lo = 0, hi = p->nnev;

	if (!p->nnev)
		return 0;
	if (!t)
		return p->nev[p->nnev - 1].total;
	while (lo < hi) {
		__u32 mid = (lo + hi) / 2;

		if (p->nev[mid].t <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p->nev[lo ? lo - 1 : 0].total;
}

/*
 * level moved by delta, held within [0, UINT64_MAX]: the sizes come from the target's records,
 * and a level past INT64_MAX overflowed the signed sum (found by the fuzzer)
 */
static __u64 level_add(__u64 level, __s64 delta)
{
	__u64 d = delta < 0 ? -(__u64)delta : (__u64)delta;

	if (delta < 0)
		return d > level ? 0 : level - d;
	return level > UINT64_MAX - d ? UINT64_MAX : level + d;
}

int gpu_mem_event(struct proc *p, const struct ls_gpu_act *act)
{
	__s64 delta;
	__u64 lvl;
	__u32 i, j;

	if (act->bytes > LS_GPU_BYTES_MAX)
		return -ERANGE; /* no device holds that much: a corrupt or hostile record */
	if (act->kind == LS_GPU_ACT_ALLOC) {
		if (addr_put(&p->live, act->addr, act->bytes))
			return -ENOMEM;
		delta = (__s64)act->bytes;
	} else {
		/* a release of memory allocated before we looked does not lower what we saw */
		delta = -(__s64)addr_take(&p->live, act->addr);
		if (!delta)
			return 0;
	}
	if (!act->start) {
		/* no timestamp: it happened about now */
		p->cur_alloc = level_add(p->cur_alloc, delta);
		if (p->cur_alloc > p->peak_alloc)
			p->peak_alloc = p->cur_alloc;
		return 0;
	}
	if (p->nmev == MEM_EVENTS_MAX) {
		/* fold the older half: queries never reach that far back */
		p->mev_base = p->mev[MEM_EVENTS_MAX / 2 - 1].level;
		memmove(p->mev, p->mev + MEM_EVENTS_MAX / 2, MEM_EVENTS_MAX / 2 * sizeof(*p->mev));
		p->nmev -= MEM_EVENTS_MAX / 2;
	}
	if (p->nmev == p->capmev) {
		__u32 cap = p->capmev ? p->capmev * 2 : 256;
		void *n = realloc(p->mev, cap * sizeof(*p->mev));

		if (!n)
			return -ENOMEM;
		p->mev = n;
		p->capmev = cap;
	}
	/* records arrive nearly in time order: insert from the back, then redo the levels after */
	for (i = p->nmev; i > 0 && p->mev[i - 1].t > act->start; i--)
		;
	memmove(&p->mev[i + 1], &p->mev[i], (p->nmev - i) * sizeof(*p->mev));
	p->mev[i] = (struct mem_ev){.t = act->start, .delta = delta};
	p->nmev++;
	lvl = i ? p->mev[i - 1].level : p->mev_base;
	for (j = i; j < p->nmev; j++) {
		lvl = level_add(lvl, p->mev[j].delta);
		p->mev[j].level = lvl;
		if (lvl > p->peak_alloc)
			p->peak_alloc = lvl;
		series_put(p, to_mono(p, p->mev[j].t), lvl, gpu_mem_nvml_at(p, p->mev[j].t));
	}
	p->cur_alloc = p->mev[p->nmev - 1].level;
	return 0;
}

int gpu_mem_sample(struct proc *p, const struct ls_gpu_memsample *m)
{
	__u64 t = m->hdr.cupti_ts;
	__u32 i;

	p->nvml_samples++;
	if (!m->found) {
		p->nvml_not_listed++;
		return 0;
	}
	if (p->nnev == p->capnev) {
		__u32 cap = p->capnev ? p->capnev * 2 : 256;
		void *n = realloc(p->nev, cap * sizeof(*p->nev));

		if (!n)
			return -ENOMEM;
		p->nev = n;
		p->capnev = cap;
	}
	for (i = p->nnev; i > 0 && p->nev[i - 1].t > t; i--)
		;
	memmove(&p->nev[i + 1], &p->nev[i], (p->nnev - i) * sizeof(*p->nev));
	p->nev[i] = (struct nv_ev){.t = t, .total = m->total};
	p->nnev++;
	if (m->total > p->peak_nvml)
		p->peak_nvml = m->total;
	return series_put(p, to_mono(p, t), gpu_mem_alloc_max(p, t, t), m->total);
}
