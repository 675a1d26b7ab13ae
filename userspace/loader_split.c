// SPDX-License-Identifier: MIT
/*
 * The skeleton's load, with its programs verified on two CPUs at once. Verification is most of
 * start-up (every program that reports a sample verifies its own copy of the stack walker: 30 ms
 * each on a 2-vCPU VM), and libbpf verifies one program after another. So the configured skeleton
 * is loaded as three instances of the same object: the first creates every map and loads no
 * program; the caller's and a second one each take the first's maps (bpf_map__reuse_fd, the
 * frozen .rodata too, so both verify against the same settings) and load their share of the
 * programs, the second on a thread of its own; the largest maps are created on a third meanwhile.
 * And the load's memory is faulted in at once.
 */
#include <errno.h>
#include <stdbool.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h" /* before the skeleton: it and gpu_records.h define the .bss types */
#include "gpu_records.h"
#include "linescope.skel.h"
#include "loader_split.h"
#include "log.h"

/*
 * The second instance's share: programs attached by the skeleton's own attach, and named nowhere
 * else (handle_sample, the iterators and the USDT programs are attached by name through the
 * caller's skeleton). About half of wall mode's verification.
 */
static const char *const second_share[] = {
	"handle_switch", "handle_rseq", "handle_sys_exit",
	"handle_fork",	 "handle_exec", "handle_gpu_waking",
};

static bool in_second_share(const char *name)
{
	for (size_t i = 0; i < sizeof(second_share) / sizeof(second_share[0]); i++)
		if (!strcmp(name, second_share[i]))
			return true;
	return false;
}

/*
 * The largest preallocated maps, created on a thread of their own while the maps instance
 * creates the rest: an LRU map's elements are all allocated and touched at its creation, and
 * agg_known (131,072 of them) and codes_seen took 19 and 9 ms of a 45 ms map set-up here.
 */
static const char *const premade_names[] = {"agg_known", "codes_seen"};
#define NPREMADE (sizeof(premade_names) / sizeof(premade_names[0]))

struct premade {
	const struct linescope_bpf *skel; /* the configured one: the maps' definitions */
	int fd[NPREMADE];
	int err;
};

static void *create_premade(void *arg)
{
	struct premade *pm = arg;

	for (size_t i = 0; i < NPREMADE; i++) {
		const struct bpf_map *m =
			bpf_object__find_map_by_name(pm->skel->obj, premade_names[i]);
		LIBBPF_OPTS(bpf_map_create_opts, o);

		if (!m) {
			pm->err = -ENOENT;
			break;
		}
		o.map_flags = bpf_map__map_flags(m);
		pm->fd[i] = bpf_map_create(bpf_map__type(m), premade_names[i], bpf_map__key_size(m),
					   bpf_map__value_size(m), bpf_map__max_entries(m), &o);
		if (pm->fd[i] < 0) {
			pm->err = -errno;
			break;
		}
	}
	return NULL;
}

static int premade_fd(const struct premade *pm, const char *name)
{
	for (size_t i = 0; i < NPREMADE; i++)
		if (!strcmp(name, premade_names[i]))
			return pm->fd[i];
	return -1;
}

/* The caller's settings on another instance: .rodata, map sizes and which maps are created. */
static int copy_settings(const struct linescope_bpf *from, struct linescope_bpf *to)
{
	struct bpf_map *m, *t = NULL;
	int err;

	memcpy(to->rodata, from->rodata, sizeof(*to->rodata));
	bpf_object__for_each_map(m, from->obj)
	{
		t = bpf_object__next_map(to->obj, t);
		if (!t || strcmp(bpf_map__name(m), bpf_map__name(t)))
			return -EINVAL;
		err = bpf_map__set_max_entries(t, bpf_map__max_entries(m));
		if (!err)
			err = bpf_map__set_autocreate(t, bpf_map__autocreate(m));
		if (err)
			return err;
	}
	return 0;
}

/* Every map of `to` is the one `maps` created or pm made (or, like them, not created). */
static int reuse_maps(const struct linescope_bpf *maps, const struct premade *pm,
		      struct linescope_bpf *to)
{
	struct bpf_map *m, *t = NULL;
	int err, fd;

	bpf_object__for_each_map(m, maps->obj)
	{
		t = bpf_object__next_map(to->obj, t);
		if (!t)
			return -EINVAL;
		fd = premade_fd(pm, bpf_map__name(m));
		if (fd >= 0) {
			err = bpf_map__reuse_fd(t, fd);
			if (err)
				return err;
			continue;
		}
		if (bpf_map__fd(m) < 0) {
			bpf_map__set_autocreate(t, false);
			continue;
		}
		err = bpf_map__reuse_fd(t, bpf_map__fd(m));
		if (err)
			return err;
	}
	return 0;
}

/*
 * The load's allocations (libbpf's copy of the kernel BTF and its index: tens of MB) each fault
 * their pages in one at a time, which a VM can make cost 10 us a page: 40 ms of a 140 ms load
 * here. The heap is grown once by that much and populated in one call (2.5 ms for 16 MB), and
 * kept.
 */
#define PREFAULT_BYTES (40u << 20) /* three instances, two kernel BTF parses at once */

static void prefault_heap(void)
{
	uintptr_t lo, hi;
	char *p;

	mallopt(M_MMAP_THRESHOLD, PREFAULT_BYTES * 2); /* from the heap, not fresh mappings */
	mallopt(M_ARENA_MAX,
		1); /* the second share's thread too: an arena of its own faults anew */
	mallopt(M_TRIM_THRESHOLD, PREFAULT_BYTES * 2);
	p = malloc(PREFAULT_BYTES);
	if (!p)
		return;
	lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	hi = ((uintptr_t)p + PREFAULT_BYTES) & ~(uintptr_t)4095;
	madvise((void *)lo, hi - lo, 23 /* MADV_POPULATE_WRITE, 5.14+; else a no-op */);
	free(p);
}

/*
 * Then the thresholds glibc's own adjustment reaches once a large block was freed (setting one
 * turns that off): blocks up to 32 MB come from the heap, which keeps up to 64 MB free, so that
 * the recording's buffers do not fault their pages in again at every use.
 */
static void prefault_done(void)
{
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

static void *load_second(void *arg)
{
	struct linescope_bpf *s = arg;

	return (void *)(long)linescope_bpf__load(s);
}

int ls_loader_split__load(struct linescope_bpf *skel, bool split, struct linescope_bpf **second)
{
	struct premade pm = {.skel = skel};
	struct linescope_bpf *maps = NULL, *s = NULL;
	struct bpf_program *p, *q = NULL;
	pthread_t thread, made_thread;
	bool made;
	void *ret;
	int err;

	*second = NULL;
	for (size_t i = 0; i < NPREMADE; i++)
		pm.fd[i] = -1;
	prefault_heap();
	if (!split) {
		err = linescope_bpf__load(skel);
		prefault_done();
		return err;
	}
	made = !pthread_create(&made_thread, NULL, create_premade, &pm);
	maps = linescope_bpf__open();
	s = linescope_bpf__open();
	if (!maps || !s) {
		err = -errno;
		goto out;
	}
	/* the maps alone, but those the thread makes */
	err = copy_settings(skel, maps);
	bpf_object__for_each_program(p, maps->obj) bpf_program__set_autoload(p, false);
	for (size_t i = 0; made && i < NPREMADE && !err; i++) {
		struct bpf_map *m = bpf_object__find_map_by_name(maps->obj, premade_names[i]);

		err = m ? bpf_map__set_autocreate(m, false) : -ENOENT;
	}
	if (!err)
		err = linescope_bpf__load(maps);
	if (made) {
		pthread_join(made_thread, NULL);
		made = false;
		if (!err)
			err = pm.err;
	}
	if (err)
		goto out;
	/* the two shares */
	err = copy_settings(skel, s);
	if (!err)
		err = reuse_maps(maps, &pm, s);
	if (!err)
		err = reuse_maps(maps, &pm, skel);
	if (err)
		goto out;
	bpf_object__for_each_program(p, skel->obj)
	{
		bool second_one = in_second_share(bpf_program__name(p));

		q = bpf_object__next_program(s->obj, q);
		bpf_program__set_autoload(q, second_one && bpf_program__autoload(p));
		if (second_one)
			bpf_program__set_autoload(p, false);
	}
	err = -pthread_create(&thread, NULL, load_second, s);
	if (err) { /* one after the other, then */
		err = linescope_bpf__load(s);
		if (!err)
			err = linescope_bpf__load(skel);
		goto out;
	}
	err = linescope_bpf__load(skel);
	pthread_join(thread, &ret);
	if (!err)
		err = (int)(long)ret;
out:
	if (made)
		pthread_join(made_thread, NULL);
	for (size_t i = 0; i < NPREMADE; i++)
		if (pm.fd[i] >= 0)
			close(pm.fd[i]); /* the shares hold their own descriptors */
	prefault_done();
	linescope_bpf__destroy(maps); /* the others hold their maps */
	if (err)
		linescope_bpf__destroy(s);
	else
		*second = s;
	return err;
}
