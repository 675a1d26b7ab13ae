// SPDX-License-Identifier: MIT
/*
 * Process lifecycle in the recorder: rows from fork, exec and exit records (the kernel's identity;
 * /proc only adds), each pid's images, thread CPU baselines and ends. CPython discovery is
 * recorder_discover.c's.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "array.h"
#include "credcache.h"
#include "gpurec.h"
#include "images.h"
#include "log.h"
#include "procfs.h"
#include "recorder_int.h"

/* Forgets the code objects (their memory is gone); exec also forgets the interpreter. */
void lsr_proc_drop_python(struct rproc *p, bool forget_interpreter)
{
	if (p->py_state == PY_READY && !p->codes_released) {
		ls_pycode_cache_release(&p->codes);
		p->codes_released = true;
	}
	if (forget_interpreter) {
		p->py_state = PY_UNKNOWN;
		p->codes_released = false;
	}
}

static void replace_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
}

/* (Re)reads identity from /proc; quietly keeps what it had when the process is gone. */
/* Its rank in a distributed job, from the environment its image started with (its rights). */
static void read_jobenv(struct rproc *p)
{
	char *env = NULL;
	size_t len = 0;

	if (ls_procfs__environ(p->pid, &env, &len) == 0)
		ls_jobenv__parse(env, len, &p->job);
	free(env);
}

/*
 * An exec's environment, from where the kernel says the new image keeps it: what its
 * /proc/PID/environ reads, without opening that with the target's rights (the opener thread's
 * round trip was most of handling an exec: 500 of them, 5% of the collector's CPU). A later
 * exec read here the same addresses in another image: its own record follows, and parses anew.
 */
static void read_exec_env(struct rproc *p, const struct ls_exec_event *e)
{
	size_t len = e->env_end > e->env_start ? e->env_end - e->env_start : 0;
	char *env;

	if (!len || len > LS_ENVIRON_MAX || !(env = malloc(len))) {
		read_jobenv(p);
		return;
	}
	if (ls_procfs__read_mem(p->pid, e->env_start, env, len) == 0)
		ls_jobenv__parse(env, len, &p->job);
	else
		read_jobenv(p);
	free(env);
}

void lsr_read_identity(struct rproc *p)
{
	struct ls_procstat st;
	char buf[4096];

	if (ls_procfs__stat(p->pid, &st) == 0) {
		if (!p->ppid)
			p->ppid = st.ppid;
		p->nspid = st.nspid;
		replace_str(&p->comm, st.comm);
	}
	if (ls_procfs__cmdline(p->pid, buf, sizeof(buf)) > 0)
		replace_str(&p->argv, buf);
	if (ls_procfs__link(p->pid, "exe", buf, sizeof(buf)) > 0)
		replace_str(&p->exe, buf);
	if (ls_procfs__cgroup(p->pid, buf, sizeof(buf)) > 0)
		replace_str(&p->cgroup, buf);
	read_jobenv(p);
	p->dirty = true;
}

struct rproc *lsr_proc_new(struct ls_recorder *r, pid_t pid, pid_t ppid, uint64_t ts)
{
	struct rproc *p, **v;
	uint64_t idx;

	v = ls_array_grow(r->procs, &r->pcap, r->nprocs, sizeof(*v), 32);
	if (!v)
		return NULL;
	r->procs = v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = r->nprocs + 1;
	p->pid = pid;
	p->ppid = ppid;
	p->nspid = pid;
	p->parent_id = -1;
	p->spawn_stack = -1;
	p->spawn_tid = -1;
	p->waiter_stack = p->waiter_tid = -1;
	p->end_ns = -1;
	p->exit_code = -1;
	p->job = (struct ls_jobenv){.rank = -1, .local_rank = -1, .world_size = -1};
	p->cgroup_id = -1;
	p->start_ns = rel_ns(r, ts);
	ls_hashmap_init(&p->files);
	ls_hashmap_init(&p->threads);
	ls_hashmap_init(&p->cpu_base);
	if (ppid && ls_hashmap__get(&r->by_pid, ppid, &idx))
		p->parent_id = r->procs[idx]->id;
	r->procs[r->nprocs] = p;
	if (ls_hashmap__set(&r->by_pid, pid, r->nprocs)) {
		free(p);
		return NULL;
	}
	r->nprocs++;
	r->st.processes++;
	r->st.live++;
	return p;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Sets *dst to a copy of src when it differs; true when it changed. */
static bool update_str(char **dst, const char *src)
{
	if (same_str(*dst, src))
		return false;
	replace_str(dst, src);
	return true;
}

/*
 * Copies the process's current interpreter state into its current image (as it changes, at the
 * image's end, and before each flush: only a change makes the row dirty).
 */
void lsr_image_sync(struct rproc *p)
{
	struct rexec *x = p->nexecs ? &p->execs[p->nexecs - 1] : NULL;
	bool ready = p->py_state == PY_READY;
	bool changed;

	if (!x)
		return;
	changed = update_str(&x->python, ready ? p->py.version : NULL);
	changed |= update_str(&x->python_build, ready ? p->py.build : NULL);
	changed |= update_str(&x->note, lsr_py_note(p));
	changed |= x->state != (int)p->py_state;
	x->state = p->py_state;
	x->dirty |= changed;
}

/* Samples of an image that have no lines because its interpreter was not known (yet). */
int64_t lsr_image_unresolved(const struct rexec *x)
{
	switch (x->state) {
	case PY_READY:
		return x->nopy - lsr_image_before_start(x);
	case PY_NONE:
	case PY_UNSUPPORTED:
		return 0; /* resolved: not a Python image, counted under its command */
	default:
		return x->samples;
	}
}

int64_t lsr_image_before_start(const struct rexec *x)
{
	return x->state == PY_READY && x->early ? x->nopy : 0;
}

/* Ends the current image at ts (an exec), with the interpreter state it had. */
static void image_end(struct ls_recorder *r, struct rproc *p, uint64_t ts)
{
	struct rexec *x = p->nexecs ? &p->execs[p->nexecs - 1] : NULL;

	if (!x)
		return;
	if (p->py_state == PY_UNKNOWN || p->py_state == PY_PENDING) {
		/*
		 * it ends as it was last seen alive: with no interpreter mapped and none its file
		 * needs, or its file is one found so in another process. Not Python: its samples
		 * are its command's, not ones left unwalked.
		 */
		if (p->last_err == -ENOENT ||
		    (p->has_image && ls_images__is_none(&r->images, &p->image)))
			lsr_not_python(r, p);
		else if (p->has_image && p->last_err != -EAGAIN)
			lsr_undecided(r, p);
	}
	lsr_image_sync(p);
	x->end_ns = rel_ns(r, ts);
	x->dirty = true;
}

/* Starts a new image named as the process is now (after image_end for an exec). */
void lsr_image_begin(struct ls_recorder *r, struct rproc *p, const char *how, uint64_t ts)
{
	struct rexec *x = p->nexecs == 1 ? &p->execs[0] : NULL, *v;

	/* our own held fork of a launched command is not one of its images: its exec is the first
	 */
	if (!x || strcmp(x->how, "launch")) {
		v = ls_array_grow(p->execs, &p->xcap, p->nexecs, sizeof(*v), 2);
		if (!v)
			return; /* out of memory: the previous image goes on counting */
		p->execs = v;
		x = &p->execs[p->nexecs++];
		memset(x, 0, sizeof(*x));
		x->start_ns = !strcmp(how, "exec") ? rel_ns(r, ts) : p->start_ns;
		x->first_line_ns = -1;
	}
	x->how = how;
	x->end_ns = -1;
	replace_str(&x->comm, p->comm);
	replace_str(&x->argv, p->argv);
	replace_str(&x->exe, p->exe);
	x->dirty = true;
}

struct rproc *lsr_proc_get(struct ls_recorder *r, pid_t pid)
{
	uint64_t idx;

	return ls_hashmap__get(&r->by_pid, pid, &idx) ? r->procs[idx] : NULL;
}

/* The live process pid, else the last one that had that pid (records may outlive a process). */
struct rproc *lsr_proc_any(struct ls_recorder *r, pid_t pid)
{
	struct rproc *p = lsr_proc_get(r, pid);

	for (size_t i = r->nprocs; !p && i-- > 0;)
		if (r->procs[i]->pid == pid)
			p = r->procs[i];
	return p;
}

/* A forked child: its parent's image, name and interpreter until it execs. */
void lsr_inherit(struct ls_recorder *r, struct rproc *p, const struct rproc *parent)
{
	replace_str(&p->comm, parent->comm);
	replace_str(&p->argv, parent->argv);
	replace_str(&p->exe, parent->exe);
	replace_str(&p->cgroup, parent->cgroup); /* fork keeps the cgroup */
	p->job = parent->job;			 /* and the environment */
	p->dirty = true;
	if (parent->py_state == PY_READY && !parent->codes_released && p->py_state != PY_READY) {
		p->py = parent->py;
		lsr_python_ready(r, p);
	} else if (parent->py_state == PY_NONE && p->py_state == PY_UNKNOWN) {
		/* the same image, found not to be Python: so is this one until it execs */
		p->py_state = PY_NONE;
		memcpy(p->note, parent->note, sizeof(p->note));
	}
	p->image = parent->image;
	p->has_image = parent->has_image;
}

static void snapshot_thread_cpu(void *ctx, pid_t tid)
{
	struct rproc *p = ctx;
	uint64_t ns;

	if (ls_procfs__thread_cpu(p->pid, tid, &ns) == 0)
		ls_hashmap__set(&p->cpu_base, tid, ns + 1);
}

int ls_recorder__add_target(struct ls_recorder *r, pid_t pid, pid_t parent)
{
	struct rproc *p = lsr_proc_get(r, pid);
	bool held = parent == getpid();

	if (!p) {
		if (!ls_procfs__alive(pid))
			return -ESRCH;
		p = lsr_proc_new(r, pid, parent, ls_mono_ns());
		if (!p)
			return -ENOMEM;
		/* our held fork of a launched command: all it has is ours until its exec, whose
		 * record names it (reading it here cost 5 ms of the command's start) */
		if (held) {
			p->py_state = PY_NONE;
			snprintf(p->note, sizeof(p->note), "not executed yet");
		} else {
			lsr_read_identity(p);
		}
		lsr_image_begin(r, p, held ? "launch" : "attach", 0);
		/* BPF is attached already: a thread started from now on is seen from its start */
		p->cpu_tracked = ls_procfs__each_thread(pid, snapshot_thread_cpu, p) == 0;
	}
	/* register before discovery so that BPF samples it (and follows its forks) at once */
	lsr_push_proc(r, p);
	if (!held)
		lsr_discover(r, p, ls_mono_ns());
	return 0;
}

/* Samples BPF did not walk: lsr_discover the interpreter, or give BPF the entry it lacks. */
void lsr_unwalked(struct ls_recorder *r, struct rproc *p)
{
	uint64_t now = ls_mono_ns();

	if (p->py_state == PY_UNKNOWN || p->py_state == PY_PENDING) {
		if (now >= p->next_try_ns)
			lsr_discover(r, p, now);
	} else if (p->py_state == PY_READY && !p->exited && now >= p->heal_ns + HEAL_EVERY_NS) {
		/* BPF has an older entry than we know (a fork copied its parent's while that was
		 * still pending): set it again, at most every 10 ms */
		p->heal_ns = now;
		r->st.healed++;
		lsr_push_proc(r, p);
	}
}

static void proc_exited(struct ls_recorder *r, struct rproc *p, uint64_t ts, int exit_code)
{
	if (p->exited)
		return;
	p->exited = true;
	lsr_view_forget(p); /* its records from now on use the kernel's view of its end */
	p->end_ns = rel_ns(r, ts);
	p->exit_code = exit_code;
	p->dirty = true;
	image_end(r, p, ts);
	r->st.live--;
	/* the memory is gone: nothing more can be read */
	lsr_proc_drop_python(p, false);
	if (r->gpu)
		ls_gpurec__exit(r->gpu, p->pid);
	ls_hashmap__del(&r->by_pid, p->pid);
}

/* A thread's CPU time as accounted at its end: what the recording saw is that less its baseline. */
void lsr_thread_cpu_final(struct thread_row *t, uint64_t cpu_ns)
{
	if (t->cpu != TCPU_OPEN)
		return;
	if (cpu_ns < t->base_ns) {
		t->cpu = TCPU_UNKNOWN; /* a reused tid */
		return;
	}
	t->cpu_ns = cpu_ns - t->base_ns;
	t->cpu = TCPU_DIRTY;
}

bool lsr_thread_cpu_now(const struct ls_recorder *r, const struct thread_row *t, uint64_t *ns)
{
	const struct rproc *p = r->procs[t->proc_id - 1]; /* process ids are their index + 1 */

	return t->cpu == TCPU_OPEN && !p->exited && ls_procfs__thread_cpu(p->pid, t->tid, ns) == 0;
}

static void thread_ended(struct ls_recorder *r, struct rproc *p, pid_t tid, uint64_t cpu_ns)
{
	uint64_t idx;

	/* a thread never sampled has no row: nothing to scale */
	if (ls_hashmap__get(&p->threads, tid, &idx) && idx && idx <= r->nthreads)
		lsr_thread_cpu_final(&r->threads[idx - 1], cpu_ns);
}

/* NUL-separated arguments as one line, as /proc/PID/cmdline is shown. */
static char *join_args(const char *a, size_t n)
{
	char *s;

	while (n > 0 && a[n - 1] == 0)
		n--;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = a[i] ? a[i] : ' ';
	s[n] = 0;
	return s;
}

/*
 * A new image of pid: named from the kernel's record, and resolved from it alone when the image
 * is a known interpreter; /proc only adds (the executable's path as we see it).
 */
/* A row for a process first heard of by a record; its start as the kernel gave it, when it did. */
static struct rproc *proc_of_record(struct ls_recorder *r, pid_t pid, pid_t ppid, uint64_t ts,
				    uint64_t start_ns)
{
	struct rproc *p = lsr_proc_new(r, pid, ppid, ts);

	if (p && start_ns) {
		p->start_ns = rel_ns(r, start_ns);
		p->kstart_ns = start_ns;
	}
	return p;
}

/*
 * exec leaves one thread, now tid == pid, named after the new image: a thread row made before
 * it (a launched command is sampled while it still runs our code) takes the new name.
 */
static void rename_main_thread(struct ls_recorder *r, struct rproc *p, const char *comm)
{
	uint64_t idx;
	struct thread_row *t;

	if (!ls_hashmap__get(&p->threads, p->pid, &idx) || !idx || idx > r->nthreads)
		return;
	t = &r->threads[idx - 1];
	if (!strncmp(t->name, comm, LS_COMM_LEN))
		return;
	snprintf(t->name, sizeof(t->name), "%.*s", LS_COMM_LEN, comm);
	t->renamed = true;
}

void lsr_handle_exec(struct ls_recorder *r, const struct ls_exec_event *e)
{
	struct rproc *p = lsr_proc_get(r, e->pid);
	const struct timespec ctime = {(time_t)e->exe_ctime_sec, (long)e->exe_ctime_nsec};
	const struct ls_pyinfo *known;
	char buf[PATH_MAX];
	const char *cgroup;
	bool changed;
	size_t n;

	r->st.proc_events++;
	ls_credcache__forget(e->pid); /* a set-uid image runs with other rights */
	if (!p && !(p = proc_of_record(r, e->pid, e->ppid, e->ts, e->start_ns)))
		return;
	image_end(r, p, e->ts);
	lsr_proc_drop_python(p, true);
	p->image = e->image;
	p->has_image = true;
	ls_hashmap_release(&p->files);
	ls_hashmap_init(&p->files);
	p->kstart_ns = e->start_ns;
	lsr_view_exec(r, p, e, ls_mono_ns());
	p->tries = 0;
	p->last_err = 0;
	p->note[0] = 0;
	p->gen = e->gen;
	if (e->nspid)
		p->nspid = e->nspid;
	free(p->comm);
	p->comm = strndup(e->comm, LS_COMM_LEN);
	rename_main_thread(r, p, e->comm);
	free(p->argv);
	n = e->args_len <= LS_EXEC_ARGS_MAX ? e->args_len : LS_EXEC_ARGS_MAX;
	p->argv = join_args(e->args, n);
	/* arguments cut at LS_EXEC_ARGS_MAX or unreadable in the kernel: /proc has them whole */
	if ((e->flags & (LS_EF_ARGS_CUT | LS_EF_ARGS_FAIL)) &&
	    ls_procfs__cmdline(p->pid, buf, sizeof(buf)) > 0)
		replace_str(&p->argv, buf);
	n = e->path_len < LS_EXEC_PATH_MAX ? e->path_len : LS_EXEC_PATH_MAX - 1;
	free(p->exe);
	p->exe = strndup(e->path, n);
	if (ls_procfs__link(p->pid, "exe", buf, sizeof(buf)) > 0)
		replace_str(&p->exe, buf);
	p->cgroup_id = (int64_t)e->cgroup_id;
	cgroup = ls_cgpaths__of(&r->cgpaths, p->pid, e->cgroup_id, buf, sizeof(buf));
	if (cgroup)
		replace_str(&p->cgroup, cgroup);
	read_exec_env(p, e); /* an exec may start with another environment */
	p->dirty = true;
	lsr_image_begin(r, p, "exec", e->ts);
	known = ls_images__find(&r->images, &e->image);
	/* the build id is read only from a file written since (its pages: 3-6% of the collector's
	 * CPU with 500 processes starting) */
	changed = known && !ls_python__unchanged(known, &ctime);
	r->st.images_checked += changed;
	if (changed && !ls_python__same_build(p->pid, known)) {
		/* rewritten in place, inode and mtime kept: learn it anew, and not from BPF's guess
		 */
		ls_warn(0,
			"pid %d: %s changed under the same inode and mtime; discovering it again",
			p->pid, known->path);
		if (r->ops->set_image)
			r->ops->set_image(r->ctx, &e->image, NULL);
		ls_images__forget(&r->images, &e->image);
		known = NULL;
		lsr_push_proc(r, p); /* pending until discovered */
	}
	if (known) {
		ls_python__rebase(known, e->start_code, &p->py);
		p->py.proc.pidns_level = e->pidns_level;
		if (lsr_python_ready(r, p))
			return; /* a known image's layout has its slot: cannot happen */
		r->st.images_known++;
		/* BPF set it too when the image was published, but a push that raced with the
		 * exec may have replaced that (see ls_loader__set_proc) */
		lsr_push_proc(r, p);
		return;
	}
	if (ls_images__is_none(&r->images, &e->image)) {
		/* a file found not to be Python in another process: no /proc to read */
		p->py_state = PY_NONE;
		snprintf(p->note, sizeof(p->note), "not a CPython process");
		r->st.images_none++;
		return;
	}
	/* pending: whatever raced with the exec is of the old image; but an entry the kernel made
	 * Python since (a shared build's start) is of this one, and walks its samples already */
	if (r->ops->set_pending)
		r->ops->set_pending(r->ctx, p->pid, p->gen);
	else
		lsr_push_proc(r, p);
	lsr_discover(r, p, ls_mono_ns());
}

void lsr_handle_proc_event(struct ls_recorder *r, const struct ls_proc_event *e)
{
	struct rproc *p = lsr_proc_get(r, e->pid);
	uint64_t now = ls_mono_ns();

	r->st.proc_events++;
	switch (e->kind) {
	case LS_PE_FORK: {
		struct rproc *parent = lsr_proc_get(r, e->ppid);
		bool fresh = !p;

		if (!p) {
			p = lsr_proc_new(r, e->pid, e->ppid, e->ts);
			if (!p)
				return;
			p->cpu_tracked = true; /* seen from its birth */
		}
		p->gen = e->gen;
		p->kstart_ns = e->start_ns;
		p->nspid = e->nspid ? (pid_t)e->nspid : p->nspid;
		p->cgroup_id = (int64_t)e->cgroup_id; /* the parent's, in whose context it forked */
		/* its row holds these: written at the next flush, also when no parent names it */
		p->dirty = true;
		if (parent) {
			p->parent_id = parent->id;
			if (fresh)
				lsr_inherit(r, p, parent);
		}
		if (!p->nexecs)
			lsr_image_begin(r, p, "fork", e->ts);
		/* its BPF entry is the parent's as of the fork: set it to what we know now */
		if (p->py_state == PY_READY)
			lsr_push_proc(r, p);
		break;
	}
	case LS_PE_LIB:
		if (p)
			lsr_lib_started(r, p, (uint32_t)e->exit_code, e->cpu_ns, e->gen);
		break;
	case LS_PE_SEEN:
		if (!p) {
			p = proc_of_record(r, e->pid, e->ppid, e->ts, e->start_ns);
			if (!p)
				return;
			if (e->nspid)
				p->nspid = e->nspid;
			p->cgroup_id = (int64_t)e->cgroup_id;
			lsr_read_identity(p);
			lsr_image_begin(r, p, "attach", e->ts);
		}
		lsr_discover(r, p, now);
		break;
	case LS_PE_EXIT:
		if (p)
			proc_exited(r, p, e->ts, e->exit_code);
		break;
	case LS_PE_THREAD_EXIT:
		if (p)
			thread_ended(r, p, e->tid, e->cpu_ns);
		break;
	default:
		r->st.bad_records++;
	}
}

void ls_recorder__reap(struct ls_recorder *r, uint64_t now_ns, uint64_t written, uint64_t read)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		if (p->exited)
			continue;
		if (ls_procfs__alive(p->pid)) {
			p->vanished = false;
		} else if (!p->vanished) {
			/*
			 * records still in the ring buffer may hold its exit: decide once they are
			 * read (a reader behind its writers may take seconds)
			 */
			p->vanished = true;
			p->vanished_pos = written;
		} else if (read >= p->vanished_pos) {
			proc_exited(r, p, now_ns, -1);
			r->ops->set_proc(r->ctx, p->pid, NULL);
		}
	}
}
