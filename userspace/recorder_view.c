// SPDX-License-Identifier: MIT
/*
 * How a target sees files, for reading its sources (struct ls_source_view): its mount namespace,
 * its root and its rights. The kernel's record of its exec has them, and every sample record
 * with frames names the view it was taken in by a key of its content (ls_view_key()): while the
 * key is the one known, the view is used however late the record is read (500 x 20 threads: a
 * third of the /proc reads of resolving stacks went). Without a key, from /proc. A short
 * process's records are often read after it has gone from /proc (a loaded machine reads them
 * seconds late: 366-385 of the 500 children of a 500 x 20-thread job had no source text so).
 * Its view is then the kernel's, taken at its exit (BPF `exit_views`): its files are read with
 * its rights at the end, in our root when that was its own, and otherwise served only by
 * another process's read of the same view.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <xxhash.h>
#include "credcache.h"
#include "procfs.h"
#include "recorder_int.h"

/* the view's first half: mount namespace and root, hashed as the kernel's record is */
static uint64_t where_of(const struct lsr_where *w)
{
	return XXH3_64bits(w, sizeof(*w)) | 1;
}

/* pid's mount namespace and root from /proc: 0, or -errno (-ESRCH, -ENOENT: gone) */
static int where_in_proc(pid_t pid, struct lsr_where *w)
{
	char ns[64], root[32];
	uint64_t mntns;
	struct stat st;
	int err;

	err = ls_procfs__link(pid, "ns/mnt", ns, sizeof(ns));
	if (err < 0)
		return err;
	if (sscanf(ns, "mnt:[%" SCNu64 "]", &mntns) != 1)
		return -EINVAL;
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	if (stat(root, &st))
		return -errno;
	/* the kernel's encoding of a device (major << 20 | minor), as BPF's records give it */
	*w = (struct lsr_where){mntns, (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev),
				st.st_ino};
	return 0;
}

/* The rights and the where of a view the kernel took (its groups all kept: checked before). */
static void kernel_view(const struct ls_task_view *v, struct ls_creds *c, struct lsr_where *w)
{
	memset(c, 0, sizeof(*c)); /* zeroed past ngroups: hashed whole, as a live view's */
	c->fsuid = v->fsuid;
	c->fsgid = v->fsgid;
	c->ngroups = (int)v->ngroups;
	for (uint32_t i = 0; i < v->ngroups && i < LS_VIEW_GROUPS; i++)
		c->groups[i] = v->groups[i];
	*w = (struct lsr_where){v->mntns, v->root_dev, v->root_ino};
}

/* ls_view_key() of a view read from /proc, as BPF computes it from the task: 0 if not whole */
static uint64_t key_of(const struct lsr_where *w, const struct ls_creds *c)
{
	struct ls_task_view v = {
		.mntns = w->mntns,
		.root_dev = w->root_dev,
		.root_ino = w->root_ino,
		.fsuid = c->fsuid,
		.fsgid = c->fsgid,
		.ngroups = (uint32_t)c->ngroups,
	};

	if (c->ngroups < 0 || c->ngroups > LS_VIEW_GROUPS)
		return 0;
	for (int i = 0; i < c->ngroups; i++)
		v.groups[i] = c->groups[i];
	return ls_view_key(&v);
}

static uint64_t view_of(uint64_t where, const struct ls_creds *c)
{
	struct {
		uint64_t where;
		struct ls_creds creds;
	} v;

	memset(&v, 0, sizeof(v));
	v.where = where;
	v.creds.fsuid = c->fsuid;
	v.creds.fsgid = c->fsgid;
	v.creds.ngroups = c->ngroups;
	memcpy(v.creds.groups, c->groups, c->ngroups * sizeof(c->groups[0]));
	return XXH3_64bits(&v, sizeof(v)) | 1;
}

/*
 * p has ended: its view from the kernel's record of its exit, when that record is of this very
 * process (its start time) and holds all its groups. 0, or -errno: its sources stay unread.
 */
static int ended_view(struct ls_recorder *r, struct rproc *p)
{
	struct ls_task_view e;
	struct lsr_where w;
	struct ls_creds *c;
	uint64_t where;

	if (!r->ops->exit_view || !p->kstart_ns || r->ops->exit_view(r->ctx, p->pid, &e))
		return -ENOENT;
	if (e.start_ns != p->kstart_ns || e.ngroups > LS_VIEW_GROUPS)
		return -ESTALE; /* another process of that pid, or groups not all kept */
	if (!r->our_where && !where_in_proc(getpid(), &w))
		r->our_where = where_of(&w);
	c = p->src_gone ? p->src_gone : malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	p->src_gone = c;
	kernel_view(&e, c, &w);
	where = where_of(&w);
	p->src = (struct ls_source_view){
		.id = view_of(where, c),
		.gone = c,
		.in_ours = where == r->our_where,
	};
	return 0;
}

_Static_assert(LS_VIEW_GROUPS <= LS_CREDS_MAX_GROUPS, "a kernel view's groups fit ls_creds");

void lsr_view_exec(struct ls_recorder *r, struct rproc *p, const struct ls_exec_event *e,
		   uint64_t now)
{
	const struct ls_task_view *v = &e->view;
	uint64_t at = e->ts < now ? e->ts : now;
	struct ls_creds c;

	lsr_view_forget(p); /* an exec may follow a chroot or setns */
	if (!v->mntns || v->start_ns != e->start_ns || v->ngroups > LS_VIEW_GROUPS)
		return; /* not read, or groups not all kept: /proc has them */
	kernel_view(v, &c, &p->src_at);
	p->src_where = where_of(&p->src_at);
	p->src_where_ns = at;
	/* its records that bring this view's key use it, however late they are read */
	p->src.id = view_of(p->src_where, &c);
	p->src_key = ls_view_key(v);
	ls_credcache__seed(p->pid, &c, v->euid, v->egid, at);
	r->st.exec_views++;
}

/*
 * A process meets its few dozen files in the records of its first moments, each file needing
 * the view: the credential cache's stat of /proc/PID (its owner check) made a third of resolving
 * 500 processes' stacks. A view is used again for VIEW_REUSE_NS: a set*id() call is seen that
 * late at most, and the records read then are older still (a loaded machine reads a process's
 * records over seconds), so rights held that recently are what an open then would have used.
 */
#define VIEW_REUSE_NS 100000000ULL

/* p has ended, and its view is not known: it reads nothing (its pid may be reused) */
static const struct ls_source_view *unknown_end(struct rproc *p)
{
	static const struct ls_creds none;

	p->src = (struct ls_source_view){.gone = &none};
	return &p->src;
}

const struct ls_source_view *lsr_source_view(struct ls_recorder *r, struct rproc *p, uint64_t now,
					     uint64_t key)
{
	bool changed = false;
	struct ls_creds c;
	int err = 0;

	if (p->src.gone)
		return &p->src; /* it ended: its view no longer changes */
	if (p->exited || p->vanished)
		return ended_view(r, p) < 0 ? unknown_end(p) : &p->src;
	if (key && p->src.id && key == p->src_key) {
		/*
		 * The record's view is the one known: how old that knowledge is does not matter.
		 * But a record read late may be of a process gone since (its exit's view is then
		 * in BPF's exit_views, a map lookup): its files cannot be opened through its pid.
		 * Looked up once per record: a new process's first record names a dozen files, and
		 * the lookups (a syscall each) were 7% of the collector's CPU at 500 x 20 threads.
		 */
		if (p->alive_in == r->records || ended_view(r, p) < 0) {
			p->alive_in = r->records;
			r->st.views_by_key++; /* no exit view: alive, the live view serves */
		}
		return &p->src;
	}
	if (key && p->src_key) {
		/*
		 * The process saw files otherwise when sampled than when its view was taken: its
		 * rights may have changed with no sign the reuse or the credential cache could see
		 * (its groups alone). Read them again now.
		 */
		changed = true;
		r->st.views_changed++;
		ls_credcache__forget(p->pid);
	} else if (p->src_where_ns && p->src_view_ns && now - p->src_view_ns < VIEW_REUSE_NS &&
		   now - p->src_where_ns < LS_SOURCES_VIEW_TTL_NS) {
		return p->src.id ? &p->src : NULL;
	}
	if (changed || !p->src_where_ns || now - p->src_where_ns >= LS_SOURCES_VIEW_TTL_NS) {
		p->src_where = 0;
		p->src_where_ns = now;
		err = where_in_proc(p->pid, &p->src_at);
		if (!err)
			p->src_where = where_of(&p->src_at);
	}
	p->src.id = p->src_key = 0;
	if (!err && p->src_where)
		err = ls_credcache__of_pid(p->pid, &c);
	if (err == -ESRCH || err == -ENOENT) /* gone from /proc before we got here */
		return ended_view(r, p) < 0 ? unknown_end(p) : &p->src;
	if (err || !p->src_where)
		return NULL;
	p->src.id = view_of(p->src_where, &c);
	p->src_key = key_of(&p->src_at, &c);
	p->src_view_ns = now;
	return &p->src;
}

void lsr_view_forget(struct rproc *p)
{
	free(p->src_gone);
	p->src_gone = NULL;
	p->src = (struct ls_source_view){0};
	p->src_where_ns = p->src_view_ns = p->src_key = 0;
}
