// SPDX-License-Identifier: MIT
/*
 * Verified programs kept across runs. A load costs a parse of the kernel's BTF per instance and
 * the verification of every program (150-250 ms on a 2-vCPU VM, most of start-up), and it gives
 * the same programs each time for the same object and settings. So a run that loaded them pins
 * its maps and programs in bpffs under a key of its configuration (ls_keep__store), and the next
 * run with that key takes their descriptors instead (ls_keep__bind): no BTF, no verifier. What a
 * fresh load would hold is restored at bind: hash maps emptied, arrays zeroed or set to their
 * initial image, the ring buffer's unread records skipped, an outer map's slots cleared but
 * for those that hold the entry's own (emptied) maps: the loader takes the aggregate slot as set.
 * .rodata and .kconfig are frozen and part of the key.
 *
 * Layout: /sys/fs/bpf/linescope/<key as 16 hex digits>/m<index> and p<index> (bpffs refuses
 * dots in names, and libbpf renames a reused map after the kernel's 15-character name, so the
 * object's own order names them). A run holds an flock on its entry's directory; only entries
 * nobody holds are replaced. bpffs is root's alone (mode 0700), so nothing there is a user's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <xxhash.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h" /* before the skeleton: it and gpu_records.h define the .bss types */
#include "gpu_records.h"
#include "linescope.skel.h"
#include "loader_keep.h"
#include "log.h"

#define BPFFS	     "/sys/fs/bpf"
#define KEEP_DIR     BPFFS "/linescope"
#define BPF_FS_MAGIC 0xcafe4a11
#define MAX_OBJS     64 /* maps or programs of the object */

struct ls_keep {
	int dir_fd; /* the entry, flock'ed */
	int prog_fd[MAX_OBJS];
	int nprogs;
	void *bss; /* the kept .bss, mapped; skel->bss points here */
	size_t bss_len;
};

uint64_t ls_keep__key(const struct linescope_bpf *skel)
{
	XXH3_state_t *st = XXH3_createState();
	struct bpf_program *p;
	struct bpf_map *m;
	const void *elf;
	size_t sz;
	uint64_t key;

	if (!st)
		return 0;
	XXH3_64bits_reset(st);
	elf = linescope_bpf__elf_bytes(&sz);
	XXH3_64bits_update(st, elf, sz);
	XXH3_64bits_update(st, skel->rodata, sizeof(*skel->rodata));
	bpf_object__for_each_map(m, skel->obj)
	{
		uint32_t v[2] = {bpf_map__max_entries(m), bpf_map__autocreate(m)};

		XXH3_64bits_update(st, v, sizeof(v));
	}
	bpf_object__for_each_program(p, skel->obj)
	{
		uint8_t on = bpf_program__autoload(p);

		XXH3_64bits_update(st, &on, 1);
	}
	key = XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return key;
}

/* /sys/fs/bpf as bpffs: mounted there where it is not (a systemd machine has it already) */
static int bpffs_ready(void)
{
	struct statfs sf;

	if (statfs(BPFFS, &sf))
		return -errno;
	if (sf.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", BPFFS, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700"))
		return -errno;
	return 0;
}

static void entry_name(char *buf, size_t len, uint64_t key)
{
	snprintf(buf, len, "%016" PRIx64, key);
}

/*
 * The kept object checked against what skel would create (a stale or foreign pin is refused);
 * *id: its id, which an outer map's slot holds (reset_outer)
 */
static int map_matches(int fd, const struct bpf_map *m, __u32 *id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != bpf_map__type(m) || info.key_size != bpf_map__key_size(m) ||
	    info.value_size != bpf_map__value_size(m) ||
	    info.max_entries != bpf_map__max_entries(m))
		return -ESTALE;
	*id = info.id;
	return 0;
}

/* An array of one value of len bytes (what ls_keep__probe_put makes). */
static int map_sized(int fd, size_t len)
{
	struct bpf_map_info info = {};
	__u32 n = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &n))
		return -errno;
	return info.type == BPF_MAP_TYPE_ARRAY && info.key_size == 4 && info.value_size == len &&
			       info.max_entries == 1
		       ? 0
		       : -ESTALE;
}

static int prog_matches(int fd, const struct bpf_program *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	return info.type == bpf_program__type(p) ? 0 : -ESTALE;
}

/* An object's name in the entry dir_fd is open on: m<index> (a map) or p<index> (a program) */
static void pin_path(char *path, size_t len, int dir_fd, char kind, int index)
{
	snprintf(path, len, "/proc/self/fd/%d/%c%d", dir_fd, kind, index);
}

static int get_pinned(int dir_fd, char kind, int index)
{
	char path[64];

	pin_path(path, sizeof(path), dir_fd, kind, index);
	return bpf_obj_get(path);
}

/* A hash map emptied in batches (a loop of single deletions would take a syscall pair each). */
static int reset_hash(int fd, const struct bpf_map *m)
{
	enum { BATCH = 1024 };
	size_t ks = bpf_map__key_size(m), vs = bpf_map__value_size(m);
	char *keys, *vals;
	__u64 in = 0, out = 0;
	bool first = true;
	int err = 0;

	if (bpf_map__type(m) == BPF_MAP_TYPE_PERCPU_HASH ||
	    bpf_map__type(m) == BPF_MAP_TYPE_LRU_PERCPU_HASH)
		vs = ((vs + 7) & ~(size_t)7) * libbpf_num_possible_cpus();
	keys = malloc(ks * BATCH);
	vals = malloc(vs * BATCH);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, o);
		__u32 n = BATCH;

		if (bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals, &n,
						    &o)) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		in = out;
		first = false;
	}
	free(keys);
	free(vals);
	return err;
}

/* One of the entry's own maps, reset with the others: ids[n] (take_maps). */
static bool own_map(__u32 id, const __u32 *ids, int n)
{
	for (int i = 0; i < n; i++)
		if (id && ids[i] == id)
			return true;
	return false;
}

/*
 * An array of maps' slots emptied, but for those that hold one of the entry's own maps (reset
 * too): the kernel waits for a grace period at each change of an outer map, 5-8 ms here, which
 * the aggregate slot cost every start (the loader takes it as set, loader.c agg_kept).
 */
static int reset_outer(int fd, const struct bpf_map *m, const __u32 *ids, int nids)
{
	int err = 0;

	for (__u32 i = 0; i < bpf_map__max_entries(m) && !err; i++) {
		__u32 id;

		if (bpf_map_lookup_elem(fd, &i, &id))
			err = errno == ENOENT ? 0 : -errno;
		else if (!own_map(id, ids, nids) && bpf_map_delete_elem(fd, &i) && errno != ENOENT)
			err = -errno;
	}
	return err;
}

/* Every element of an array set to image (or zeros) in one batch, or deleted (arrays of
 * descriptors, which take no batches): an update per element cost 35 us each here, 9 ms for the
 * USDT specs alone at every start. */
static int reset_array(int fd, const struct bpf_map *m, const void *image, size_t image_len)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	enum bpf_map_type t = bpf_map__type(m);
	size_t vs = bpf_map__value_size(m);
	__u32 n = bpf_map__max_entries(m), *keys;
	char *vals;
	int err = 0;

	if (t == BPF_MAP_TYPE_CGROUP_ARRAY) {
		for (__u32 i = 0; i < n && !err; i++)
			if (bpf_map_delete_elem(fd, &i) && errno != ENOENT)
				err = -errno;
		return err;
	}
	if (t == BPF_MAP_TYPE_PERCPU_ARRAY)
		vs = ((vs + 7) & ~(size_t)7) * libbpf_num_possible_cpus();
	keys = malloc(n * sizeof(*keys));
	vals = calloc(n, vs);
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < n; i++) {
		keys[i] = i;
		if (image && image_len <= vs)
			memcpy(vals + (size_t)i * vs, image, image_len);
	}
	if (bpf_map_update_batch(fd, keys, vals, &n, &o))
		err = -errno;
	free(keys);
	free(vals);
	return err;
}

/* The ring buffer's unread records skipped: its consumer position set to the producer's. */
static int reset_ring(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t *cons, *prod;
	int err = 0;

	cons = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
	if (prod == MAP_FAILED)
		err = -errno;
	else
		__atomic_store_n(cons, __atomic_load_n(prod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	munmap(cons, page);
	if (prod != MAP_FAILED)
		munmap(prod, page);
	return err;
}

static int reset_map(int fd, struct bpf_map *m, const __u32 *ids, int nids)
{
	size_t image_len = 0;
	const void *image;

	if (bpf_map__map_flags(m) & BPF_F_RDONLY_PROG)
		return 0; /* .rodata, .kconfig: frozen, and in the key */
	switch (bpf_map__type(m)) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return reset_hash(fd, m);
	case BPF_MAP_TYPE_ARRAY:
		image = bpf_map__is_internal(m) ? bpf_map__initial_value(m, &image_len) : NULL;
		return reset_array(fd, m, image, image_len);
	case BPF_MAP_TYPE_PERCPU_ARRAY:
	case BPF_MAP_TYPE_CGROUP_ARRAY:
		return reset_array(fd, m, NULL, 0);
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
		return reset_outer(fd, m, ids, nids);
	case BPF_MAP_TYPE_RINGBUF:
		return reset_ring(fd);
	default:
		return -EOPNOTSUPP; /* not one this object has: do not guess its fresh state */
	}
}

static void close_all(int *fd, int n)
{
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

/* The kept descriptors (and ids) of every map skel creates and every program it loads, checked. */
static int get_entry(int dir_fd, struct linescope_bpf *skel, int *map_fd, __u32 *map_id, int *nmaps,
		     struct ls_keep *k)
{
	struct bpf_program *p;
	struct bpf_map *m;
	int i = 0, err = 0;

	bpf_object__for_each_map(m, skel->obj)
	{
		if (i == MAX_OBJS)
			return -E2BIG;
		map_fd[i] = -1;
		map_id[i] = 0;
		if (bpf_map__autocreate(m) && !err) {
			map_fd[i] = get_pinned(dir_fd, 'm', i);
			err = map_fd[i] < 0 ? -ENOENT : map_matches(map_fd[i], m, &map_id[i]);
		}
		*nmaps = ++i;
	}
	i = 0;
	bpf_object__for_each_program(p, skel->obj)
	{
		if (i == MAX_OBJS)
			return -E2BIG;
		k->prog_fd[i] = -1;
		if (bpf_program__autoload(p) && !err) {
			k->prog_fd[i] = get_pinned(dir_fd, 'p', i);
			err = k->prog_fd[i] < 0 ? -ENOENT : prog_matches(k->prog_fd[i], p);
		}
		k->nprogs = ++i;
	}
	return err;
}

/* skel's maps on the kept descriptors, reset; its .bss mapped in place of libbpf's copy */
static int take_maps(struct linescope_bpf *skel, const int *map_fd, const __u32 *map_id, int nmaps,
		     struct ls_keep *k)
{
	struct bpf_map *m;
	int i = 0, err;

	bpf_object__for_each_map(m, skel->obj)
	{
		int fd = map_fd[i++];

		if (fd < 0)
			continue;
		err = reset_map(fd, m, map_id, nmaps);
		if (!err)
			err = bpf_map__reuse_fd(m, fd);
		if (err)
			return err;
	}
	k->bss_len = (bpf_map__value_size(skel->maps.bss) + 4095) & ~(size_t)4095;
	k->bss = mmap(NULL, k->bss_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      bpf_map__fd(skel->maps.bss), 0);
	if (k->bss == MAP_FAILED) {
		k->bss = NULL;
		return -errno;
	}
	skel->bss = k->bss;
	return 0;
}

int ls_keep__bind(struct linescope_bpf *skel, uint64_t key, struct ls_keep **out)
{
	int map_fd[MAX_OBJS], nmaps = 0, err;
	__u32 map_id[MAX_OBJS];
	struct ls_keep *k;
	char name[32];

	*out = NULL;
	if (bpffs_ready())
		return -ENOENT;
	k = calloc(1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	entry_name(name, sizeof(name), key);
	k->dir_fd = open(KEEP_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (k->dir_fd >= 0) {
		int top = k->dir_fd;

		k->dir_fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(top);
	}
	if (k->dir_fd < 0 || flock(k->dir_fd, LOCK_EX | LOCK_NB)) {
		err = -ENOENT; /* nothing kept, or another run holds it */
		goto fail;
	}
	err = get_entry(k->dir_fd, skel, map_fd, map_id, &nmaps, k);
	if (err) {
		close_all(map_fd, nmaps);
		ls_info("kept BPF programs %s not used: %s", name, strerror(-err));
		goto fail; /* nothing of skel taken yet */
	}
	err = take_maps(skel, map_fd, map_id, nmaps, k);
	close_all(map_fd, nmaps); /* reuse_fd dup'ed the ones skel holds */
	if (err) {
		ls_keep__free(k);
		return err;
	}
	*out = k;
	return 0;
fail:
	close_all(k->prog_fd, k->nprogs);
	if (k->dir_fd >= 0)
		close(k->dir_fd);
	free(k);
	return -ENOENT;
}

int ls_keep__prog_fd(const struct ls_keep *k, int index)
{
	return index >= 0 && index < k->nprogs ? k->prog_fd[index] : -1;
}

void ls_keep__free(struct ls_keep *k)
{
	if (!k)
		return;
	close_all(k->prog_fd, k->nprogs);
	if (k->bss)
		munmap(k->bss, k->bss_len);
	if (k->dir_fd >= 0)
		close(k->dir_fd); /* and its lock */
	free(k);
}

/* Unpins an entry's objects and removes it, unless a run holds it. */
static void drop_entry(int top, const char *name)
{
	int fd = openat(top, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(fd, de->d_name, 0);
	unlinkat(top, name, AT_REMOVEDIR);
	closedir(d);
}

/* What a run may replace: every entry but the one being stored */
static void drop_others(int top, const char *keep)
{
	struct dirent *de;
	int fd = dup(top);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, keep))
			drop_entry(top, de->d_name);
	closedir(d);
}

/*
 * The probe's answer is a pinned one-element array (KEEP_DIR/probe) holding struct
 * ls_keep_probe: loading the probe's program takes 4-7 ms, and its answer is the kernel's.
 */
int ls_keep__probe_get(struct ls_keep_probe *p)
{
	__u32 zero = 0;
	int fd, err;

	if (bpffs_ready())
		return -ENOENT;
	fd = bpf_obj_get(KEEP_DIR "/probe");
	if (fd < 0)
		return -ENOENT;
	err = map_sized(fd, sizeof(*p)) ? -ENOENT : bpf_map_lookup_elem(fd, &zero, p) ? -ENOENT : 0;
	close(fd);
	p->why[sizeof(p->why) - 1] = 0;
	return err;
}

void ls_keep__probe_put(const struct ls_keep_probe *p)
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	__u32 zero = 0;
	int fd;

	if (bpffs_ready() || (mkdir(KEEP_DIR, 0700) && errno != EEXIST))
		return;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "ls_probe", 4, sizeof(*p), 1, &o);
	if (fd < 0)
		return;
	/* a concurrent run may have pinned one first: its answer is the same */
	if (!bpf_map_update_elem(fd, &zero, p, BPF_ANY))
		bpf_obj_pin(fd, KEEP_DIR "/probe");
	close(fd);
}

void ls_keep__drop_all(void)
{
	int top = open(KEEP_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (top < 0)
		return;
	drop_others(top, "");
	unlinkat(top, "probe", 0);
	close(top);
	rmdir(KEEP_DIR); /* unless a run holds an entry */
}

static int pin_at(int dir_fd, char kind, int index, int fd)
{
	char path[64];

	pin_path(path, sizeof(path), dir_fd, kind, index);
	return bpf_obj_pin(fd, path) ? -errno : 0;
}

static int pin_all(int dir_fd, const struct linescope_bpf *skel, const struct linescope_bpf *second)
{
	struct bpf_program *p, *q = NULL;
	struct bpf_map *m;
	int i = 0, err = 0;

	bpf_object__for_each_map(m, skel->obj)
	{
		if (bpf_map__fd(m) >= 0 && !err)
			err = pin_at(dir_fd, 'm', i, bpf_map__fd(m));
		i++;
	}
	i = 0;
	bpf_object__for_each_program(p, skel->obj)
	{
		int fd = bpf_program__fd(p);

		if (second) {
			q = bpf_object__next_program(second->obj, q);
			if (fd < 0 && q)
				fd = bpf_program__fd(q);
		}
		if (fd >= 0 && !err)
			err = pin_at(dir_fd, 'p', i, fd);
		i++;
	}
	return err;
}

int ls_keep__store(const struct linescope_bpf *skel, const struct linescope_bpf *second,
		   uint64_t key)
{
	char name[32], tmp[32];
	int top, fd, err;

	err = bpffs_ready();
	if (err)
		return err;
	if (mkdir(KEEP_DIR, 0700) && errno != EEXIST)
		return -errno;
	top = open(KEEP_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0)
		return -errno;
	entry_name(name, sizeof(name), key);
	snprintf(tmp, sizeof(tmp), "new%d", (int)getpid());
	drop_entry(top, tmp);
	if (mkdirat(top, tmp, 0700)) {
		err = -errno;
		close(top);
		return err;
	}
	fd = openat(top, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = fd < 0 ? -errno : pin_all(fd, skel, second);
	if (fd >= 0)
		close(fd);
	drop_others(top, tmp); /* ours too, under its key, when nobody holds it */
	if (!err && renameat(top, tmp, top, name))
		err = -errno; /* another run stored it meanwhile, or holds it */
	if (err)
		drop_entry(top, tmp);
	close(top);
	return err;
}
