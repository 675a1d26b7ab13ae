// SPDX-License-Identifier: MIT
/*
 * CPython discovery for the recorder's processes: /proc and the interpreter file (python.c),
 * retries, the layouts and `procs` entries BPF gets, interpreter executables published to BPF's
 * `images` (images.c), and files found not to be Python, which settle their other processes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "images.h"
#include "libsearch.h"
#include "log.h"
#include "recorder_int.h"

/*
 * Discovery retries. An exec'd process maps libpython within milliseconds, a process may also
 * dlopen it later: retries start 1 ms apart and back off to one a second (see discover()).
 */
#define MS		1000000ULL
#define RETRY_EXEC_NS	(1 * MS)   /* the exec record of what /proc showed is on its way */
#define RETRY_OTHER_NS	(100 * MS) /* any other failure */
#define NO_PYTHON_AFTER 3	   /* tries that found no interpreter file: not Python */
/* no interpreter yet: the delay before the next try, by how many were made */
static const struct {
	int below; /* tries */
	uint64_t delay_ns;
} discovery_backoff[] = {{5, 1 * MS}, {20, 5 * MS}, {40, 100 * MS}, {INT_MAX, 1000 * MS}};

static uint64_t discovery_delay(int tries)
{
	size_t i = 0;

	while (tries >= discovery_backoff[i].below)
		i++;
	return discovery_backoff[i].delay_ns;
}

/* Settles the images that ended undecided and ran the file k (found not to be Python). */
static void settle_undecided(struct ls_recorder *r, const struct ls_image_key *k)
{
	for (size_t i = 0; i < r->nundecided;) {
		struct undecided *u = &r->undecided[i];
		struct rexec *x = &r->procs[u->proc]->execs[u->exec];

		if (memcmp(&u->image, k, sizeof(*k))) {
			i++;
			continue;
		}
		if (x->state == PY_UNKNOWN || x->state == PY_PENDING) {
			x->state = PY_NONE;
			free(x->note);
			x->note = strdup("not a CPython process");
			x->dirty = true;
		}
		*u = r->undecided[--r->nundecided];
	}
}

/* p's current image is not Python, nor is any other process of its file. */
void lsr_not_python(struct ls_recorder *r, struct rproc *p)
{
	p->py_state = PY_NONE;
	if (p->has_image && !ls_images__is_none(&r->images, &p->image) &&
	    ls_images__mark_none(&r->images, &p->image) == 0)
		settle_undecided(r, &p->image);
}

/* p's current image ends before it could be looked at: its file may tell later. */
void lsr_undecided(struct ls_recorder *r, struct rproc *p)
{
	struct undecided *u =
		ls_array_grow(r->undecided, &r->undecidedcap, r->nundecided, sizeof(*u), 16);

	if (!u || !p->nexecs)
		return; /* counted unresolved, as it is */
	r->undecided = u;
	r->undecided[r->nundecided++] = (struct undecided){.image = p->image,
							   .proc = (uint32_t)(p->id - 1),
							   .exec = (uint32_t)(p->nexecs - 1)};
}

/* The BPF slot of layout L, or -ENOSPC: never another interpreter's offsets (slot 0 was). */
static int layout_id(struct ls_recorder *r, const struct ls_pylayout *L)
{
	for (unsigned i = 0; i < r->nlayouts; i++)
		if (!memcmp(&r->layouts[i], L, sizeof(*L)))
			return i;
	if (r->nlayouts == r->max_layouts)
		return -ENOSPC;
	r->layouts[r->nlayouts] = *L;
	r->ops->set_layout(r->ctx, r->nlayouts, L);
	return r->nlayouts++;
}

void lsr_push_proc(struct ls_recorder *r, struct rproc *p)
{
	struct ls_proc bp = {.flags = LS_PF_PENDING};

	if (p->py_state == PY_READY)
		bp = p->py.proc;
	if (p->exited)
		return;
	/* refused when the kernel's entry is of a newer exec than we know: its record follows */
	bp.gen = p->gen;
	r->ops->set_proc(r->ctx, p->pid, &bp);
}

/*
 * An entry BPF sets by itself (at an exec, at a shared build's start) walks with layout slot
 * proc->layout_id: pi's, installed now, since a file probed before any process ran it has none
 * yet (slot 0 was another interpreter's, or empty). 0, or -ENOSPC.
 */
static int with_layout(struct ls_recorder *r, const struct ls_pyinfo *pi, struct ls_proc *proc)
{
	int id = layout_id(r, &pi->layout);

	if (id < 0)
		return id;
	proc->layout_id = id;
	return 0;
}

/* Tells BPF about an interpreter executable (see ls_images__learn). */
static void learn_image(struct ls_recorder *r, const struct ls_pyinfo *pi)
{
	struct ls_image_ent *e;
	struct ls_image img;

	if (!pi->in_exe || !r->ops->set_image)
		return;
	e = ls_images__learn(&r->images, pi);
	if (!e)
		return;
	ls_python__image(&e->pi, &img);
	img.proc.tsd_mode = e->published_tsd;
	if (!with_layout(r, &e->pi, &img.proc))
		r->ops->set_image(r->ctx, &e->pi.image, &img);
}

/*
 * A shared build: its libpython's start is probed in every process from now on, so that a later
 * exec of it is walked from its interpreter's start, not from when /proc is read (a short process
 * may be gone by then). Once per library file; a slot is kept even when the probe fails.
 */
static void learn_lib(struct ls_recorder *r, const struct ls_pyinfo *pi)
{
	struct ls_lib_image lib;
	struct ls_pyinfo *t;

	if (!pi->shared || !pi->lib_start || !r->ops->set_lib || r->nlibs == LS_LIB_IMAGES)
		return;
	for (unsigned i = 0; i < r->nlibs; i++)
		if (!memcmp(&r->libs[i]->lib, &pi->lib, sizeof(pi->lib)))
			return;
	memset(&lib, 0, sizeof(lib));
	lib.proc = pi->proc;
	if (with_layout(r, pi, &lib.proc))
		return;
	t = malloc(sizeof(*t));
	if (!t)
		return;
	*t = *pi;
	ls_proc_move(&lib.proc, -(int64_t)pi->bias);
	lib.proc.gen = 0;
	/* not checked yet: the thread-list walk, as `images` publishes (images.c) */
	if (!pi->tsd_verified && pi->proc.tsd_mode == LS_TS_GLIBC_TSD)
		lib.proc.tsd_mode = LS_TS_THREAD_LIST;
	lib.start_vaddr = pi->lib_start;
	r->libs[r->nlibs] = t;
	r->ops->set_lib(r->ctx, r->nlibs++, pi->path, pi->lib_start_off, &lib);
}

void lsr_lib_started(struct ls_recorder *r, struct rproc *p, uint32_t slot, uint64_t bias,
		     uint32_t gen)
{
	if (slot >= r->nlibs || p->exited || gen != p->gen)
		return; /* the record is of an image since replaced */
	/*
	 * The kernel walked it from its runtime's start (its exec record's pending push leaves
	 * that entry): what it could not walk came before, with no line to miss
	 */
	if (p->nexecs && r->ops->set_pending)
		p->execs[p->nexecs - 1].early = true;
	if (p->py_state == PY_READY)
		return; /* discovery was first */
	ls_python__move(r->libs[slot], bias, &p->py);
	if (lsr_python_ready(r, p)) {
		ls_warn(0, "pid %d: %s", p->pid, p->note);
		return;
	}
	/* the kernel's entry is set already, unless userspace pushed a pending one over it since */
	lsr_push_proc(r, p);
	ls_info("pid %d: CPython %s (%s) in %s, from its start", p->pid, p->py.version, p->py.build,
		p->py.path);
}

/*
 * A shared build's executable, before its exec: the libpython the loader will map for it (our
 * environment is the command's), probed from its interpreter's start like one a process mapped.
 * pi is scratch space.
 */
static void learn_needed_lib(struct ls_recorder *r, const char *exe, struct ls_pyinfo *pi)
{
	char lib[PATH_MAX], why[256];
	int err = ls_libsearch__find(exe, "libpython", getenv("LD_LIBRARY_PATH"), lib, sizeof(lib));

	if (err) {
		ls_dbg("%s: its libpython not found before its exec: %s", exe, strerror(-err));
		return;
	}
	err = ls_python__probe_lib(lib, pi, why, sizeof(why));
	if (!err)
		learn_lib(r, pi);
	ls_dbg("%s: %s", exe, err ? why : "its libpython known before its exec");
}

int ls_recorder__learn_exe(struct ls_recorder *r, const char *path)
{
	struct ls_pyinfo *pi = malloc(sizeof(*pi));
	char why[256];
	int err;

	if (!pi)
		return -ENOMEM;
	err = ls_python__probe_exe(path, pi, why, sizeof(why));
	if (err == 0)
		learn_image(r, pi);
	else if (err == -ENOENT) /* its exec (env's, a shell's) is settled at its record */
		ls_images__mark_none(&r->images, &pi->image);
	ls_dbg("%s: %s", path, err ? why : "CPython, known before its exec");
	if (err == -EAGAIN)
		learn_needed_lib(r, path, pi);
	free(pi);
	return err;
}

/* 0, or -ENOSPC with the process left without lines and a note saying why. */
int lsr_python_ready(struct ls_recorder *r, struct rproc *p)
{
	int id = layout_id(r, &p->py.layout);

	if (id < 0) {
		snprintf(p->note, sizeof(p->note),
			 "CPython %s: %d distinct interpreter layouts already in this session; its "
			 "samples are counted without lines",
			 p->py.version, r->max_layouts);
		p->py_state = PY_UNSUPPORTED;
		p->dirty = true;
		return id;
	}
	p->py.proc.layout_id = id;
	ls_pycode_cache_init(&p->codes, p->pid, &p->py, &r->linetabs);
	p->py_state = PY_READY;
	p->note[0] = 0;
	p->dirty = true;
	lsr_image_sync(p);
	return 0;
}

/* Whether the kernel's entry is of a newer exec than the records handled so far. */
static bool exec_in_flight(struct ls_recorder *r, const struct rproc *p)
{
	uint32_t gen;

	return r->ops->proc_gen && r->ops->proc_gen(r->ctx, p->pid, &gen) == 0 &&
	       ls_gen_newer(gen, p->gen);
}

/* Tries to find the interpreter; schedules a retry with backoff while it may still appear. */
void lsr_discover(struct ls_recorder *r, struct rproc *p, uint64_t now)
{
	char why[256];
	int err;

	if (p->exited || p->py_state == PY_READY || p->py_state == PY_NONE ||
	    p->py_state == PY_UNSUPPORTED)
		return;
	p->tries++;
	err = ls_python__discover(p->pid, &p->py, why, sizeof(why));
	if (exec_in_flight(r, p)) {
		/* /proc showed the image after an exec whose record is still to come: what was
		 * found belongs to that image, not to this one (the exec record rediscovers at
		 * once) */
		if (err == 0)
			learn_image(r, &p->py);
		p->py_state = PY_PENDING;
		p->next_try_ns = now + RETRY_EXEC_NS;
		return;
	}
	p->last_err = err; /* of this image */
	if (err == 0 && lsr_python_ready(r, p)) {
		ls_warn(0, "pid %d: %s", p->pid, p->note);
		return;
	}
	if (err == 0) {
		lsr_push_proc(r, p);
		/* read after the push: samples BPF could not walk were taken before the read */
		if (p->nexecs && ls_python__started(p->pid, &p->py) == 0)
			p->execs[p->nexecs - 1].early = true;
		learn_image(r, &p->py);
		learn_lib(r, &p->py);
		ls_info("pid %d: CPython %s (%s) in %s", p->pid, p->py.version, p->py.build,
			p->py.path);
		return;
	}
	snprintf(p->note, sizeof(p->note), "%s", why);
	p->dirty = true;
	if (err == -EAGAIN || err == -ENOENT) {
		uint64_t delay = discovery_delay(p->tries);

		p->py_state = PY_PENDING;
		p->next_try_ns = now + delay;
		if (err == -ENOENT && p->tries > NO_PYTHON_AFTER)
			lsr_not_python(r, p);
		return;
	}
	if (err == -ENOTSUP) {
		p->py_state = PY_UNSUPPORTED;
		ls_warn(0, "pid %d (%s): %s; its samples are counted without lines", p->pid,
			p->comm ? p->comm : "?", why);
		return;
	}
	if (err == -ESRCH)
		return;
	p->py_state = PY_PENDING;
	p->next_try_ns = now + RETRY_OTHER_NS;
}

void ls_recorder__tick(struct ls_recorder *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		if (p->exited || p->py_state != PY_READY || p->py.tsd_verified)
			continue;
		if (ls_python__verify_tsd(p->pid, &p->py) > 0)
			lsr_push_proc(r, p);
		learn_image(r, &p->py);
	}
	ls_notebooks__retry_soon(&r->notebooks, &r->sources, ls_mono_ns());
}

uint64_t ls_recorder__retry(struct ls_recorder *r, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		if (p->exited || p->py_state != PY_PENDING)
			continue;
		if (now_ns >= p->next_try_ns)
			lsr_discover(r, p, now_ns);
		if (p->py_state == PY_PENDING && p->next_try_ns < next)
			next = p->next_try_ns;
	}
	return next;
}
