// SPDX-License-Identifier: MIT
/* ld.so's search for a library an executable needs (see libsearch.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elffile.h"
#include "libsearch.h"

#if defined(__x86_64__)
#define TRIPLET	 "x86_64-linux-gnu"
#define CACHE_ID 0x0303 /* FLAG_ELF_LIBC6 | FLAG_X8664_LIB64 */
#elif defined(__aarch64__)
#define TRIPLET	 "aarch64-linux-gnu"
#define CACHE_ID 0x0a03 /* FLAG_ELF_LIBC6 | FLAG_AARCH64_LIB64 */
#else
#define TRIPLET	 "unknown"
#define CACHE_ID -1 /* the cache's entries are not read */
#endif

#define CACHE_PATH  "/etc/ld.so.cache"
#define CACHE_MAGIC "glibc-ld.so.cache1.1" /* the format glibc has written alone since 2.32 */
#define CACHE_MAX   (64 << 20)

/* glibc's cache_file_new and file_entry_new; offsets are from the start of the file */
struct cache_head {
	char magic[20];
	uint32_t nlibs, len_strings;
	uint8_t flags, pad[3];
	uint32_t ext_offset, unused[3];
};

struct cache_entry {
	int32_t flags;
	uint32_t key, value, osversion;
	uint64_t hwcap; /* non-zero: a glibc-hwcaps variant, which ld.so takes only on such a CPU */
};

/* path, when it is a regular file, resolved into out */
static int found(const char *path, char *out, size_t len)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) || !S_ISREG(st.st_mode))
		return -ENOENT;
	if (strlen(real) >= len)
		return -ENAMETOOLONG;
	memcpy(out, real, strlen(real) + 1);
	return 0;
}

/* dir (n bytes, $ORIGIN expanded) / name; -ENOENT when it holds no such file */
static int in_dir(const char *dir, size_t n, const char *origin, const char *name, char *out,
		  size_t len)
{
	char cand[PATH_MAX];
	size_t at = 0;

	for (size_t i = 0; i < n; i++) {
		const char *tok = NULL;
		size_t skip = 0;

		if (dir[i] == '$') {
			if (n - i >= 7 && !memcmp(dir + i, "$ORIGIN", 7))
				tok = origin, skip = 7;
			else if (n - i >= 9 && !memcmp(dir + i, "${ORIGIN}", 9))
				tok = origin, skip = 9;
			else
				return -ENOENT; /* $LIB, $PLATFORM: not ours to guess */
		}
		if (tok) {
			if (at + strlen(tok) >= sizeof(cand))
				return -ENOENT;
			memcpy(cand + at, tok, strlen(tok));
			at += strlen(tok);
			i += skip - 1;
		} else if (at + 1 < sizeof(cand)) {
			cand[at++] = dir[i];
		} else {
			return -ENOENT;
		}
	}
	if (!at || at + 1 + strlen(name) >= sizeof(cand))
		return -ENOENT; /* an empty entry (the working directory) is not followed */
	snprintf(cand + at, sizeof(cand) - at, "/%s", name);
	return found(cand, out, len);
}

/* the first entry of a colon-separated list that holds name */
static int in_list(const char *list, const char *origin, const char *name, char *out, size_t len)
{
	for (const char *p = list; p;) {
		const char *end = strchrnul(p, ':');
		int err = in_dir(p, end - p, origin, name, out, len);

		if (err != -ENOENT)
			return err;
		p = *end ? end + 1 : NULL;
	}
	return -ENOENT;
}

/* name's entry in ld.so.cache for this machine's ABI (every offset range-checked) */
static int in_cache(const char *name, char *out, size_t len)
{
	const struct cache_head *h;
	const struct cache_entry *e;
	int fd = open(CACHE_PATH, O_RDONLY | O_CLOEXEC), err = -ENOENT;
	struct stat st;
	size_t size;
	char *m;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(*h) || st.st_size > CACHE_MAX) {
		close(fd);
		return -ENOENT;
	}
	size = st.st_size;
	m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -ENOENT;
	h = (const void *)m;
	e = (const void *)(h + 1);
	if (CACHE_ID < 0 || memcmp(h->magic, CACHE_MAGIC, sizeof(h->magic)) ||
	    h->nlibs > (size - sizeof(*h)) / sizeof(*e))
		goto out;
	for (uint32_t i = 0; i < h->nlibs && err == -ENOENT; i++) {
		const char *key = m + e[i].key, *val = m + e[i].value;

		if (e[i].flags != CACHE_ID || e[i].hwcap || e[i].key >= size ||
		    e[i].value >= size || !memchr(key, 0, size - e[i].key) ||
		    !memchr(val, 0, size - e[i].value) || strcmp(key, name))
			continue;
		err = found(val, out, len);
	}
out:
	munmap(m, size);
	return err;
}

static int in_defaults(const char *name, char *out, size_t len)
{
	static const char *const dirs[] = {
		"/lib/" TRIPLET, "/usr/lib/" TRIPLET, "/lib64", "/usr/lib64", "/lib", "/usr/lib"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		int err = in_dir(dirs[i], strlen(dirs[i]), "", name, out, len);

		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

/* a name without a slash, in ld.so's order; llp NULL for none (or a set-id executable) */
static int search(const char *name, const char *rpath, const char *runpath, const char *llp,
		  const char *origin, char *out, size_t len)
{
	int err = -ENOENT;

	if (rpath && !runpath)
		err = in_list(rpath, origin, name, out, len);
	if (err == -ENOENT && llp)
		err = in_list(llp, origin, name, out, len);
	if (err == -ENOENT && runpath)
		err = in_list(runpath, origin, name, out, len);
	if (err == -ENOENT)
		err = in_cache(name, out, len);
	return err == -ENOENT ? in_defaults(name, out, len) : err;
}

int ls_libsearch__find(const char *exe, const char *prefix, const char *ld_library_path, char *out,
		       size_t len)
{
	const char *name;
	char origin[PATH_MAX];
	struct ls_elf *elf;
	struct stat st;
	bool setid;
	int err;

	if (!realpath(exe, origin))
		return -errno;
	*strrchr(origin, '/') = 0; /* realpath() is absolute: "/x" leaves "" */
	err = ls_elf__open(exe, &elf);
	if (err)
		return err;
	name = ls_elf__dyn_str(elf, DT_NEEDED, prefix);
	setid = !ls_elf__stat(elf, &st) && (st.st_mode & (S_ISUID | S_ISGID));
	if (!name)
		err = -ENOENT;
	else if (strchr(name, '/'))
		err = found(name, out, len); /* as named, from the working directory we share */
	else
		err = search(name, ls_elf__dyn_str(elf, DT_RPATH, ""),
			     ls_elf__dyn_str(elf, DT_RUNPATH, ""), setid ? NULL : ld_library_path,
			     origin, out, len);
	ls_elf__free(elf);
	return err;
}
