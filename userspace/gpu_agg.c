// SPDX-License-Identifier: MIT
/* Launch <-> activity join for the GPU probes; see gpu_agg.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_agg_int.h"

static int pow2(__u32 v)
{
	return v && !(v & (v - 1));
}

int ls_gpu_agg__new(const struct ls_gpu_agg_opts *opts, ls_gpu_attr_fn fn, void *ctx,
		    struct ls_gpu_agg **out)
{
	struct ls_gpu_agg *a;
	__u32 window = 1u << 18, pending = 4096;
	__u64 bucket = 100000000ull;

	if (opts && opts->sz >= sizeof(*opts)) {
		if (opts->window)
			window = opts->window;
		if (opts->pending)
			pending = opts->pending;
		if (opts->bucket_ns)
			bucket = opts->bucket_ns;
	}
	if (!fn || !pow2(window) || !pow2(pending))
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fn = fn;
	a->ctx = ctx;
	a->window = window;
	a->pending = pending;
	if (opts && opts->sz >= sizeof(*opts)) {
		a->stack = opts->stack;
		a->stack_ctx = opts->stack_ctx;
	}
	a->bucket_ns = bucket;
	*out = a;
	return 0;
}

static void proc_free(struct proc *p)
{
	__u32 i;

	for (i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->names);
	free(p->ring);
	free(p->pend);
	free(p->devs);
	free(p->mev);
	free(p->nev);
	free(p->ser);
	free(p->live.keys);
	free(p->live.vals);
	free(p);
}

void ls_gpu_agg__free(struct ls_gpu_agg *a)
{
	__u32 i;

	if (!a)
		return;
	for (i = 0; i < a->nprocs; i++)
		proc_free(a->procs[i]);
	free(a->procs);
	free(a->index);
	free(a);
}

static struct proc *find_proc(const struct ls_gpu_agg *a, __u32 pid)
{
	__u32 i, m = a->capindex - 1, id;

	if (!a->capindex)
		return NULL;
	for (i = hash32(pid) & m; (id = a->index[i]); i = (i + 1) & m)
		if (a->procs[id - 1]->pid == pid)
			return a->procs[id - 1];
	return NULL;
}

static int grow_index(struct ls_gpu_agg *a)
{
	__u32 cap = a->capindex ? a->capindex * 2 : 64, i, j, *idx = calloc(cap, sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (i = 0; i < a->nprocs; i++) {
		for (j = hash32(a->procs[i]->pid) & (cap - 1); idx[j]; j = (j + 1) & (cap - 1))
			;
		idx[j] = i + 1;
	}
	free(a->index);
	a->index = idx;
	a->capindex = cap;
	return 0;
}

static struct proc *get_proc(struct ls_gpu_agg *a, __u32 pid)
{
	struct proc *p = find_proc(a, pid);
	__u32 j;

	if (p)
		return p;
	if ((a->nprocs + 1) * 2 > a->capindex && grow_index(a))
		return NULL;
	if (a->nprocs == a->capprocs) {
		__u32 cap = a->capprocs ? a->capprocs * 2 : 16;
		struct proc **procs = realloc(a->procs, cap * sizeof(*procs));

		if (!procs)
			return NULL;
		a->procs = procs;
		a->capprocs = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->bucket_ns = a->bucket_ns;
	p->ring = calloc(a->window, sizeof(*p->ring));
	p->pend = calloc(a->pending, sizeof(*p->pend));
	if (!p->ring || !p->pend) {
		proc_free(p);
		return NULL;
	}
	a->procs[a->nprocs++] = p;
	for (j = hash32(pid) & (a->capindex - 1); a->index[j]; j = (j + 1) & (a->capindex - 1))
		;
	a->index[j] = a->nprocs;
	return p;
}

/* A probed launch of a sampled run stands for 2^shift launches. */
static void scale(struct ls_gpu_attr *attr, __u32 shift)
{
	attr->weight = 1u << shift;
	if (!shift)
		return;
	attr->flags |= LS_GPU_ATTR_SAMPLED;
	attr->count <<= shift;
	attr->gpu_ns <<= shift;
	attr->api_ns <<= shift;
	attr->bytes <<= shift;
}

static void give(struct ls_gpu_agg *a, struct proc *p, const struct ls_gpu_attr *attr)
{
	p->gpu_ns += attr->gpu_ns;
	p->api_ns += attr->api_ns;
	a->fn(a->ctx, attr);
}

static void give_orphan(struct ls_gpu_agg *a, struct proc *p, struct ls_gpu_attr *attr)
{
	attr->flags |= LS_GPU_ATTR_NO_LAUNCH;
	attr->cookie = 0;
	attr->tid = 0;
	attr->weight = 1;
	p->orphans += attr->count;
	a->st.orphans += attr->count;
	give(a, p, attr);
}

/* A launch as *ref says (thread, stack, class, sampling), under its own corr. */
static void add_launch(struct ls_gpu_agg *a, struct proc *p, __u32 corr,
		       const struct launch_slot *ref, __u64 ts, __u64 api_ns)
{
	struct ls_gpu_attr attr = {};
	struct launch_slot *s;
	struct pend_slot *ps;

	a->st.launches++;
	p->launches++;
	s = &p->ring[corr & (a->window - 1)];
	*s = *ref;
	s->corr = corr;
	s->valid = 1;

	attr.pid = p->pid;
	attr.tid = s->tid;
	attr.cookie = s->cookie;
	attr.corr = corr;
	attr.api_class = s->cls;
	attr.flags = LS_GPU_ATTR_API;
	attr.api_ns = api_ns;
	attr.start_mono = ts;
	scale(&attr, s->shift);
	give(a, p, &attr);

	/* device work that arrived before its launch sample */
	ps = &p->pend[corr & (a->pending - 1)];
	if (ps->used && ps->a.corr == corr) {
		ps->used = 0;
		ps->a.tid = s->tid;
		ps->a.cookie = s->cookie;
		ps->a.api_class = s->cls;
		a->st.attributed += ps->a.count;
		scale(&ps->a, s->shift);
		give(a, p, &ps->a);
	}
}

int ls_gpu_agg__launch(struct ls_gpu_agg *a, __u32 pid, __u32 tid, __u64 ts, __u64 aux,
		       __u64 api_ns, __u64 cookie)
{
	struct proc *p = get_proc(a, pid);
	struct launch_slot ref = {
		.tid = tid,
		.cookie = cookie,
		.cls = (__u8)LS_GPU_AUX_CLASS(aux),
		.shift = (__u8)LS_GPU_AUX_SHIFT(aux),
	};

	if (!p)
		return -ENOMEM;
	add_launch(a, p, LS_GPU_AUX_CORR(aux), &ref, ts, api_ns);
	return 0;
}

/* The launch slot of corr, if the window still holds it. */
static const struct launch_slot *slot_of(const struct ls_gpu_agg *a, const struct proc *p,
					 __u32 corr)
{
	const struct launch_slot *s = &p->ring[corr & (a->window - 1)];

	return corr && s->valid && s->corr == corr ? s : NULL;
}

/*
 * Launches the library did not probe, in the order one thread made them: a launch from the
 * location of a reference launch is that launch again under its own correlation id; a launch
 * from a new location carries the frames the library walked, which the caller's stack function
 * turns into its cookie. The thread is the one of the record's probed launch (ident). A record
 * whose thread, or an entry whose reference, was never seen (its sample lost) is counted, and
 * its device work ends up with NO_LAUNCH. Returns -EINVAL when an entry runs past the record.
 */
static int on_launches(struct ls_gpu_agg *a, struct proc *p, const struct ls_gpu_launches *r,
		       size_t len)
{
	const struct launch_slot *id = slot_of(a, p, r->ident_corr), *s;
	size_t pos = 0, cap = len - sizeof(*r);
	__u64 off = r->hdr.ts - r->mono; /* modular, like clk_off */
	struct launch_slot ref;
	__u32 i;

	if (!id) {
		a->st.same_loc_lost += r->hdr.count;
		return 0;
	}
	for (i = 0; i < r->hdr.count; i++) {
		struct ls_gpu_launch_ent e;
		__u64 ts;

		if (cap - pos < sizeof(e))
			return -EINVAL;
		memcpy(&e, r->data + pos, sizeof(e));
		pos += sizeof(e);
		ts = r->hdr.ts ? e.t_mono + off : 0;
		if (!e.ref) {
			const struct ls_frame *f = (const struct ls_frame *)(r->data + pos);

			if (e.nframes > LS_MAX_FRAMES || cap - pos < e.nframes * sizeof(*f))
				return -EINVAL;
			pos += e.nframes * sizeof(*f);
			ref = (struct launch_slot){.tid = id->tid, .cls = LS_GPU_API_LAUNCH};
			if (a->stack)
				ref.cookie = a->stack(a->stack_ctx, p->pid, id->tid, f, e.nframes);
			if (!e.corr) {
				a->st.same_loc_lost++;
				continue;
			}
			a->st.walked++;
		} else if ((s = slot_of(a, p, e.ref)) && e.corr != e.ref) {
			ref = *s;
		} else {
			a->st.same_loc_lost++;
			continue;
		}
		a->st.same_loc++;
		p->same_loc++;
		add_launch(a, p, e.corr, &ref, ts, e.api_ns);
	}
	return 0;
}

/* ---- records ---------------------------------------------------------------------------- */

static void on_activity(struct ls_gpu_agg *a, struct proc *p, const struct ls_gpu_act *act)
{
	struct ls_gpu_attr attr = {};
	struct launch_slot *s;
	struct pend_slot *ps;

	a->st.activities++;
	p->activities++;
	attr.pid = p->pid;
	attr.corr = act->corr;
	attr.kind = act->kind;
	attr.device = act->device;
	attr.stream = act->stream;
	attr.name_id = act->name_id;
	attr.bytes = act->bytes;
	attr.count = 1;
	if (act->flags & LS_GPU_AF_NCCL)
		attr.flags |= LS_GPU_ATTR_NCCL;
	if (act->flags & LS_GPU_AF_GRAPH)
		attr.flags |= LS_GPU_ATTR_GRAPH;
	if (act->flags & LS_GPU_AF_NO_TIMING)
		attr.flags |= LS_GPU_ATTR_NO_TIMING;
	if (act->kind == LS_GPU_ACT_KERNEL || act->kind == LS_GPU_ACT_MEMCPY ||
	    act->kind == LS_GPU_ACT_MEMSET)
		attr.gpu_ns = act->start ? act->end - act->start : 0;
	if ((act->kind == LS_GPU_ACT_ALLOC || act->kind == LS_GPU_ACT_FREE) &&
	    (act->flags & LS_GPU_AF_DEVMEM) && gpu_mem_event(p, act) == -ERANGE)
		a->st.bad_records++;
	attr.mem_alloc = gpu_mem_alloc_max(p, act->start, act->end);
	attr.mem_nvml = gpu_mem_nvml_at(p, act->end);
	attr.mem_peak = attr.mem_alloc > attr.mem_nvml ? attr.mem_alloc : attr.mem_nvml;
	attr.start_mono = to_mono(p, act->start);

	s = &p->ring[act->corr & (a->window - 1)];
	if (act->corr && s->valid && s->corr == act->corr) {
		attr.tid = s->tid;
		attr.cookie = s->cookie;
		attr.api_class = s->cls;
		a->st.attributed++;
		scale(&attr, s->shift);
		give(a, p, &attr);
		return;
	}
	if (!act->corr) {
		give_orphan(a, p, &attr);
		return;
	}
	ps = &p->pend[act->corr & (a->pending - 1)];
	if (ps->used && ps->a.corr != act->corr) {
		a->st.evicted += ps->a.count;
		give_orphan(a, p, &ps->a);
		ps->used = 0;
	}
	if (!ps->used) {
		ps->used = 1;
		ps->a = attr;
		return;
	}
	/* more work of one launch (a graph): fold it in */
	ps->a.gpu_ns += attr.gpu_ns;
	ps->a.bytes += attr.bytes;
	ps->a.count++;
	ps->a.flags |= attr.flags;
	if (attr.mem_alloc > ps->a.mem_alloc)
		ps->a.mem_alloc = attr.mem_alloc;
	if (attr.mem_nvml > ps->a.mem_nvml)
		ps->a.mem_nvml = attr.mem_nvml;
	if (attr.mem_peak > ps->a.mem_peak)
		ps->a.mem_peak = attr.mem_peak;
	if (attr.start_mono && (!ps->a.start_mono || attr.start_mono < ps->a.start_mono))
		ps->a.start_mono = attr.start_mono;
}

static int on_name(struct proc *p, const struct ls_gpu_name *n)
{
	char *s;

	if (!n->id || n->id > (1u << 24))
		return -EINVAL;
	if (n->id > p->nnames) {
		__u32 cap = n->id + 64;
		char **names = realloc(p->names, cap * sizeof(*names));

		if (!names)
			return -ENOMEM;
		memset(names + p->nnames, 0, (cap - p->nnames) * sizeof(*names));
		p->names = names;
		p->nnames = cap;
	}
	s = malloc(n->hdr.count + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, n->name, n->hdr.count);
	s[n->hdr.count] = 0;
	free(p->names[n->id - 1]);
	p->names[n->id - 1] = s;
	return 0;
}

static int same_device(const struct ls_gpu_device *a, const struct ls_gpu_device *b)
{
	if (a->uuid[0] && b->uuid[0])
		return strncmp(a->uuid, b->uuid, sizeof(a->uuid)) == 0;
	if (a->ordinal != ~0u && b->ordinal != ~0u)
		return a->ordinal == b->ordinal;
	return a->nvml_index != ~0u && a->nvml_index == b->nvml_index;
}

/* A device card, sent again when more became known (CUPTI's record, NVML): merged by identity. */
static int on_device(struct proc *p, const struct ls_gpu_device *d)
{
	struct ls_gpu_device old;
	__u32 i;

	for (i = 0; i < p->ndevs; i++)
		if (same_device(&p->devs[i], d))
			break;
	if (i == p->ndevs) {
		void *n = realloc(p->devs, (p->ndevs + 1) * sizeof(*p->devs));

		if (!n)
			return -ENOMEM;
		p->devs = n;
		p->ndevs++;
		memset(&p->devs[i], 0, sizeof(*p->devs));
		p->devs[i].ordinal = p->devs[i].nvml_index = ~0u;
	}
	old = p->devs[i];
	p->devs[i] = *d;
	p->devs[i].flags |= old.flags;
	if (d->ordinal == ~0u)
		p->devs[i].ordinal = old.ordinal;
	if (d->nvml_index == ~0u)
		p->devs[i].nvml_index = old.nvml_index;
	if (!d->cc)
		p->devs[i].cc = old.cc;
	if (!d->mem_total)
		p->devs[i].mem_total = old.mem_total;
	if (!d->cuda_driver)
		p->devs[i].cuda_driver = old.cuda_driver;
	if (!d->name[0])
		memcpy(p->devs[i].name, old.name, sizeof(old.name));
	if (!d->driver[0])
		memcpy(p->devs[i].driver, old.driver, sizeof(old.driver));
	p->devs[i].name[sizeof(d->name) - 1] = 0;
	p->devs[i].driver[sizeof(d->driver) - 1] = 0;
	p->devs[i].uuid[sizeof(d->uuid) - 1] = 0;
	return 0;
}

static size_t min_len(const struct ls_gpu_hdr *h)
{
	switch (h->sub) {
	case LS_GPU_HELLO:
		return sizeof(struct ls_gpu_hello);
	case LS_GPU_ACTIVITY:
		if (h->count > LS_GPU_BATCH_MAX)
			return ~(size_t)0;
		return sizeof(*h) + h->count * sizeof(struct ls_gpu_act);
	case LS_GPU_NAME:
		if (h->count > LS_GPU_NAME_MAX)
			return ~(size_t)0;
		return sizeof(struct ls_gpu_name) + h->count;
	case LS_GPU_DEVICE:
		return sizeof(struct ls_gpu_device);
	case LS_GPU_MEMSAMPLE:
		if (h->count > LS_GPU_MAX_DEVICES)
			return ~(size_t)0;
		return sizeof(struct ls_gpu_memsample) +
		       h->count * sizeof(struct ls_gpu_memsample_dev);
	case LS_GPU_STATUS:
	case LS_GPU_EXIT:
		return sizeof(struct ls_gpu_status);
	case LS_GPU_LAUNCHES:
		if (h->count > LS_GPU_LAUNCHES_MAX)
			return ~(size_t)0;
		/* at least; each entry that is a reference has frames after it */
		return sizeof(struct ls_gpu_launches) + h->count * sizeof(struct ls_gpu_launch_ent);
	default:
		return ~(size_t)0;
	}
}

int ls_gpu_agg__record(struct ls_gpu_agg *a, const void *data, size_t len)
{
	const struct ls_gpu_hdr *h = data;
	struct proc *p;
	__u32 i;

	if (len < sizeof(*h) || h->type != LS_REC_GPU || len < min_len(h)) {
		a->st.bad_records++;
		return -EINVAL;
	}
	p = get_proc(a, h->pid);
	if (!p)
		return -ENOMEM;
	a->st.records++;
	p->lib_pid = h->lib_pid;
	if (h->seq) {
		if (!p->seq_count || h->seq < p->seq_min)
			p->seq_min = h->seq;
		if (h->seq > p->seq_max)
			p->seq_max = h->seq;
		p->seq_count++;
	}
	if (h->ts && h->cupti_ts) {
		p->clk_off = (__s64)(h->ts - h->cupti_ts); /* modular, as to_mono() undoes it */
		p->has_clk = 1;
	}
	switch (h->sub) {
	case LS_GPU_HELLO:
		p->hello = *(const struct ls_gpu_hello *)data;
		p->hello.cupti_path[sizeof(p->hello.cupti_path) - 1] = 0;
		p->hello.message[sizeof(p->hello.message) - 1] = 0;
		p->has_hello = 1;
		return 0;
	case LS_GPU_ACTIVITY:
		for (i = 0; i < h->count; i++)
			on_activity(a, p, (const struct ls_gpu_act *)(h + 1) + i);
		return 0;
	case LS_GPU_NAME:
		return on_name(p, data);
	case LS_GPU_DEVICE:
		return on_device(p, data);
	case LS_GPU_MEMSAMPLE:
		return gpu_mem_sample(p, data);
	case LS_GPU_STATUS:
	case LS_GPU_EXIT:
		p->status = *(const struct ls_gpu_status *)data;
		p->status.nvml_note[sizeof(p->status.nvml_note) - 1] = 0;
		p->has_status = 1;
		if (h->sub == LS_GPU_EXIT)
			p->exited = 1;
		return 0;
	case LS_GPU_LAUNCHES:
		if (on_launches(a, p, data, len)) {
			a->st.bad_records++;
			return -EINVAL;
		}
		return 0;
	}
	return 0;
}

void ls_gpu_agg__finish_pid(struct ls_gpu_agg *a, __u32 pid)
{
	struct proc *p = find_proc(a, pid);
	__u32 i;

	if (!p)
		return;
	for (i = 0; i < a->pending; i++) {
		if (!p->pend[i].used)
			continue;
		p->pend[i].used = 0;
		give_orphan(a, p, &p->pend[i].a);
	}
}

void ls_gpu_agg__finish(struct ls_gpu_agg *a)
{
	__u32 i;

	for (i = 0; i < a->nprocs; i++)
		ls_gpu_agg__finish_pid(a, a->procs[i]->pid);
}

const char *ls_gpu_agg__name(const struct ls_gpu_agg *a, __u32 pid, __u32 name_id)
{
	const struct proc *p = find_proc(a, pid);

	if (!p || !name_id || name_id > p->nnames)
		return NULL;
	return p->names[name_id - 1];
}

__u32 ls_gpu_agg__proc_count(const struct ls_gpu_agg *a)
{
	return a->nprocs;
}

static __u64 lost(const struct proc *p)
{
	__u64 span;

	if (!p->seq_count)
		return 0;
	span = (__u64)p->seq_max - p->seq_min + 1;
	return span > p->seq_count ? span - p->seq_count : 0;
}

int ls_gpu_agg__proc_info(const struct ls_gpu_agg *a, __u32 index, struct ls_gpu_proc_info *out)
{
	const struct proc *p;

	if (index >= a->nprocs)
		return -ENOENT;
	p = a->procs[index];
	memset(out, 0, sizeof(*out));
	out->pid = p->pid;
	out->lib_pid = p->lib_pid;
	out->hello = p->has_hello ? &p->hello : NULL;
	out->status = p->has_status ? &p->status : NULL;
	out->exited = p->exited;
	out->ndevices = p->ndevs;
	out->devices = p->devs;
	out->peak_alloc = p->peak_alloc;
	out->peak_nvml = p->peak_nvml;
	out->nvml_samples = p->nvml_samples;
	out->nvml_not_listed = p->nvml_not_listed;
	out->launches = p->launches;
	out->same_loc = p->same_loc;
	out->activities = p->activities;
	out->orphans = p->orphans;
	out->lost_records = lost(p);
	out->gpu_ns = p->gpu_ns;
	out->api_ns = p->api_ns;
	return 0;
}

void ls_gpu_agg__new_interval(struct ls_gpu_agg *a)
{
	for (__u32 i = 0; i < a->nprocs; i++) {
		struct proc *p = a->procs[i];

		/* what is held now is held in the next interval too */
		p->peak_alloc = p->cur_alloc;
		p->peak_nvml = p->nnev ? p->nev[p->nnev - 1].total : 0;
	}
}

int ls_gpu_agg__mem_series(const struct ls_gpu_agg *a, __u32 pid, ls_gpu_mem_fn fn, void *ctx)
{
	const struct proc *p = find_proc(a, pid);
	__u32 i;

	if (!p)
		return 0;
	for (i = 0; i < p->nser; i++)
		fn(ctx, p->ser[i].bucket * p->bucket_ns, p->ser[i].alloc, p->ser[i].nvml);
	return (int)p->nser;
}

void ls_gpu_agg__stats(const struct ls_gpu_agg *a, struct ls_gpu_agg_stats *out)
{
	__u32 i;

	*out = a->st;
	out->lost_records = 0;
	for (i = 0; i < a->nprocs; i++)
		out->lost_records += lost(a->procs[i]);
}
