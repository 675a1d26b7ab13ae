// SPDX-License-Identifier: MIT
/* Source snapshots, read inside the process's root (containers work) with its own rights. */
#include <ctype.h>
#include <errno.h>
#include <iconv.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include "array.h"
#include "log.h"
#include "monoclock.h"
#include "procfs.h"
#include "sources.h"

void ls_sources_init(struct ls_sources *s)
{
	memset(s, 0, sizeof(*s));
	s->nfiles = s->files_flushed = 1;
	s->nsrcs = s->srcs_flushed = 1;
	ls_hashmap_init(&s->by_hash);
	ls_hashmap_init(&s->by_key);
	ls_hashmap_init(&s->by_view);
}

void ls_sources_release(struct ls_sources *s)
{
	for (size_t i = 1; i < s->nfiles; i++) {
		free(s->files[i].path);
		free(s->files[i].unavailable);
	}
	for (size_t i = 1; i < s->nsrcs; i++)
		free(s->srcs[i].text);
	for (size_t i = 0; i < s->nreads; i++)
		free(s->reads[i].path);
	free(s->files);
	free(s->srcs);
	free(s->reads);
	ls_hashmap_release(&s->by_hash);
	ls_hashmap_release(&s->by_key);
	ls_hashmap_release(&s->by_view);
	memset(s, 0, sizeof(*s));
}

const char *ls_sources__kind(const char *path)
{
	const char *p;

	if (!strncmp(path, "<frozen ", 8))
		return "library";
	if (strstr(path, "/site-packages/") || strstr(path, "/dist-packages/"))
		return "library";
	/* <prefix>/lib/python3.N/... is the standard library of some interpreter */
	for (p = strstr(path, "/lib/python"); p; p = strstr(p + 1, "/lib/python")) {
		const char *q = p + 11;

		if (q[0] >= '2' && q[0] <= '9' && q[1] == '.') {
			q += 2;
			while (*q >= '0' && *q <= '9')
				q++;
			if (*q == '/' || !strncmp(q, "t/", 2))
				return "library";
		}
	}
	return "python";
}

/*
 * The text of path as pid reads it (with its rights; with as's in our root, for one that ended),
 * and what fstat said of the file read. Length, or -errno with why.
 */
static ssize_t read_file(pid_t pid, const struct ls_creds *as, const char *path, char **out,
			 struct stat *stp, char *why, size_t whylen)
{
	struct stat st;
	ssize_t n, total = 0;
	char *buf;
	int fd, err;

	fd = as ? ls_procfs__open_as(getpid(), as, path)
		: ls_procfs__open_file(pid, path, LS_VIEW_TARGET);
	if (fd < 0) {
		if (fd == -EACCES || fd == -EPERM)
			snprintf(why, whylen, "unreadable by the profiled process");
		else if (fd == -EINVAL)
			snprintf(why, whylen, "source is not a regular file");
		else if (fd == -ENOENT)
			snprintf(why, whylen,
				 "deleted or moved before it could be read (no such file)");
		else
			snprintf(why, whylen, "cannot read source: %s", strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) || st.st_size > LS_MAX_SOURCE_BYTES) {
		snprintf(why, whylen, "source larger than %d MB not stored",
			 LS_MAX_SOURCE_BYTES >> 20);
		close(fd);
		return -EFBIG;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (total < st.st_size) {
		n = read(fd, buf + total, st.st_size - total);
		if (n <= 0) {
			if (n < 0) {
				err = -errno;
				snprintf(why, whylen, "cannot read source: %s", strerror(errno));
				free(buf);
				close(fd);
				return err;
			}
			break;
		}
		total += n;
	}
	close(fd);
	buf[total] = 0;
	*out = buf;
	*stp = st;
	return total;
}

/*
 * The PEP 263 declaration of lines 1-2 ("# -*- coding: latin-1 -*-", "# vim: set
 * fileencoding=cp1252 :"), as CPython's tokenizer finds it: a comment line whose text matches
 * coding[:=]\s*([-\w.]+). Line 2 counts only when line 1 is a comment or blank. Writes the name
 * into enc and returns true when there is one.
 */
static bool coding_cookie(const char *t, size_t len, char *enc, size_t enclen)
{
	const char *end = t + len;

	for (int line = 0; line < 2 && t < end; line++) {
		const char *eol = memchr(t, '\n', end - t), *p = t, *c;
		size_t n;

		if (!eol)
			eol = end;
		while (p < eol && (*p == ' ' || *p == '\t' || *p == '\f'))
			p++;
		if (p < eol && *p == '#') {
			for (c = p; c + 7 <= eol; c++) {
				if (memcmp(c, "coding", 6) || (c[6] != ':' && c[6] != '='))
					continue;
				c += 7;
				while (c < eol && (*c == ' ' || *c == '\t'))
					c++;
				for (n = 0; c + n < eol && n + 1 < enclen &&
					    (isalnum((unsigned char)c[n]) || strchr("-_.", c[n]));
				     n++)
					enc[n] = c[n];
				enc[n] = 0;
				if (n)
					return true;
			}
		} else if (p < eol && *p != '\r') {
			return false; /* code on line 1: line 2 is not looked at */
		}
		t = eol + 1;
	}
	return false;
}

/*
 * Sources are stored as UTF-8, the encoding CPython's columns count in: one with a PEP 263
 * declaration of another encoding is converted (iconv). 0; -EILSEQ with why when it does not
 * decode as declared (the text is then stored as it is, and the report repairs it).
 */
static int decode_source(char **text, ssize_t *len, char *why, size_t whylen)
{
	char enc[64], *out, *in = *text, *o;
	size_t inleft = *len, cap = (size_t)*len * 4 + 1, oleft = cap;
	iconv_t cd;

	if (!coding_cookie(*text, *len, enc, sizeof(enc)))
		return 0;
	/* CPython's normalisation (tokenizer.c get_normal_name), then iconv's spelling */
	for (char *c = enc; *c; c++)
		*c = *c == '_' ? '-' : tolower((unsigned char)*c);
	if (!strcmp(enc, "utf-8") || !strncmp(enc, "utf-8-", 6) || !strcmp(enc, "utf8"))
		return 0;
	if (!strncmp(enc, "latin-1", 7) || !strncmp(enc, "iso-8859-1", 10) ||
	    !strncmp(enc, "iso-latin-1", 11))
		snprintf(enc, sizeof(enc), "ISO-8859-1");
	cd = iconv_open("UTF-8", enc);
	if (cd == (iconv_t)-1) {
		snprintf(why, whylen, "unknown encoding %s", enc);
		return -EILSEQ;
	}
	out = o = malloc(cap);
	if (!out) {
		iconv_close(cd);
		return -ENOMEM;
	}
	if (iconv(cd, &in, &inleft, &o, &oleft) == (size_t)-1) {
		snprintf(why, whylen, "does not decode as its declared %s", enc);
		iconv_close(cd);
		free(out);
		return -EILSEQ;
	}
	iconv_close(cd);
	*o = 0;
	free(*text);
	*text = out;
	*len = o - out;
	return 0;
}

struct src_probe {
	const struct ls_sources *s;
	const char *text;
	size_t len;
	const char *path;
	int64_t source_id;
};

static bool same_text(const void *ctx, uint64_t idx)
{
	const struct src_probe *q = ctx;

	return q->s->srcs[idx].len == q->len && !memcmp(q->s->srcs[idx].text, q->text, q->len);
}

static bool same_file(const void *ctx, uint64_t idx)
{
	const struct src_probe *q = ctx;

	return q->s->files[idx].source_id == q->source_id &&
	       !strcmp(q->s->files[idx].path, q->path);
}

static int64_t add_source(struct ls_sources *s, char *text, size_t len)
{
	XXH128_hash_t h = XXH3_128bits(text, len);
	struct src_probe q = {.s = s, .text = text, .len = len};
	uint64_t *slot = ls_hashmap__intern(&s->by_hash, h.low64 ^ h.high64, same_text, &q);
	struct ls_source *src, *v;

	if (!slot) {
		free(text);
		return -ENOMEM;
	}
	if (*slot != LS_HASHMAP_EMPTY) {
		free(text);
		return *slot;
	}
	v = ls_array_grow(s->srcs, &s->scap, s->nsrcs, sizeof(*v), 64);
	if (!v) {
		free(text);
		return -ENOMEM;
	}
	s->srcs = v;
	src = &s->srcs[s->nsrcs];
	snprintf(src->hash, sizeof(src->hash), "%016llx%016llx", (unsigned long long)h.high64,
		 (unsigned long long)h.low64);
	src->text = text;
	src->len = len;
	*slot = s->nsrcs;
	return s->nsrcs++;
}

static int64_t add_file(struct ls_sources *s, const char *path, int64_t source_id, const char *why)
{
	struct src_probe q = {.s = s, .path = path, .source_id = source_id};
	uint64_t key = XXH3_64bits(path, strlen(path)) ^ ls_hash64(source_id + 1),
		 *slot = ls_hashmap__intern(&s->by_key, key, same_file, &q);
	struct ls_file *f, *v;

	if (!slot)
		return -ENOMEM;
	if (*slot != LS_HASHMAP_EMPTY)
		return *slot;
	v = ls_array_grow(s->files, &s->fcap, s->nfiles, sizeof(*v), 64);
	if (!v)
		return -ENOMEM;
	s->files = v;
	f = &s->files[s->nfiles];
	f->path = strdup(path);
	f->source_id = source_id;
	f->kind = ls_sources__kind(path);
	f->unavailable = why ? strdup(why) : NULL;
	f->dirty = false;
	if (!f->path)
		return -ENOMEM;
	*slot = s->nfiles;
	return s->nfiles++;
}

/* ls_sources__lookup(), and the identity of the file read (st_ino 0 when none was) */
static int64_t lookup(struct ls_sources *s, pid_t pid, const struct ls_creds *as, const char *path,
		      struct stat *st)
{
	char why[256] = "";
	char *text = NULL;
	int64_t src = -1;
	ssize_t n;

	st->st_ino = 0;
	if (path[0] == '<') {
		/* <string>, <stdin>, <frozen x>: code without a file */
		return add_file(s, path, -1, "code without a source file");
	}
	n = read_file(pid, as, path, &text, st, why, sizeof(why));
	if (n >= 0 && decode_source(&text, &n, why, sizeof(why)) == -ENOMEM) {
		free(text);
		return -ENOMEM;
	}
	if (why[0])
		ls_dbg("pid %d: %s: %s", pid, path, why);
	if (n >= 0) {
		src = add_source(s, text, n);
		if (src < 0)
			return src;
	} else if (n == -ENOMEM) {
		return n;
	} else {
		ls_dbg("pid %d: %s: %s", pid, path, why);
	}
	return add_file(s, path, src, src < 0 ? why : NULL);
}

int64_t ls_sources__lookup(struct ls_sources *s, pid_t pid, const char *path)
{
	struct stat st;

	return lookup(s, pid, NULL, path, &st);
}

struct view_probe {
	const struct ls_sources *s;
	uint64_t view;
	const char *path;
};

static bool same_view_read(const void *ctx, uint64_t idx)
{
	const struct view_probe *q = ctx;
	const struct ls_view_read *r = &q->s->reads[idx];

	return r->view == q->view && !strcmp(r->path, q->path);
}

/* Whether st is the file r read, unchanged since: same inode, size, contents and mode times */
static bool unchanged_file(const struct stat *st, const struct ls_view_read *r)
{
	return st->st_dev == r->dev && st->st_ino == r->ino && (uint64_t)st->st_size == r->size &&
	       ls_timespec_ns(&st->st_mtim) == r->mtime_ns &&
	       ls_timespec_ns(&st->st_ctim) == r->ctime_ns;
}

#define ENDED "the process ended before its source could be read"

int64_t ls_sources__lookup_in(struct ls_sources *s, pid_t pid, const struct ls_source_view *v,
			      const char *path, uint64_t now_ns)
{
	struct view_probe q = {s, v ? v->id : 0, path};
	struct ls_view_read *r, *nv;
	bool gone = v && v->gone;
	uint64_t *slot;
	struct stat st;
	int64_t fid;

	if (!q.view || path[0] != '/') {
		/* ended with no view of its own, or a path relative to a cwd that is gone: its pid
		 * may be another process's by now */
		if (gone && path[0] != '<')
			return add_file(s, path, -1, ENDED);
		return ls_sources__lookup(s, pid, path);
	}
	slot = ls_hashmap__intern(&s->by_view, XXH3_64bits(path, strlen(path)) ^ ls_hash64(q.view),
				  same_view_read, &q);
	if (!slot)
		return -ENOMEM;
	if (*slot != LS_HASHMAP_EMPTY && s->reads[*slot].file > 0) {
		r = &s->reads[*slot];
		if (now_ns - r->read_ns < LS_SOURCES_VIEW_TTL_NS)
			return r->file;
		/* later, while the path still names the very file read, unchanged: the read stands */
		if ((!gone || v->in_ours) &&
		    !ls_procfs__identify(gone ? getpid() : pid, path, &st) &&
		    unchanged_file(&st, r)) {
			r->read_ns = now_ns;
			return r->file;
		}
	}
	/* ended, in a root we cannot enter: only a read of another process could serve it */
	if (gone && !v->in_ours)
		return add_file(s, path, -1, ENDED);
	if (*slot == LS_HASHMAP_EMPTY) {
		nv = ls_array_grow(s->reads, &s->rcap, s->nreads, sizeof(*nv), 64);
		if (!nv)
			return -ENOMEM; /* the empty slot stays: a later intern fills it */
		s->reads = nv;
		nv[s->nreads] = (struct ls_view_read){.view = q.view, .path = strdup(path)};
		if (!nv[s->nreads].path)
			return -ENOMEM;
		*slot = s->nreads++;
	}
	r = &s->reads[*slot]; /* the lookup below inserts into other maps only */
	fid = lookup(s, pid, gone ? v->gone : NULL, path, &st);
	r->file = 0;
	if (fid > 0 && s->files[fid].source_id > 0 && st.st_ino) {
		r->file = fid;
		r->read_ns = now_ns;
		r->dev = st.st_dev;
		r->ino = st.st_ino;
		r->size = st.st_size;
		r->mtime_ns = ls_timespec_ns(&st.st_mtim);
		r->ctime_ns = ls_timespec_ns(&st.st_ctim);
	}
	return fid;
}

int64_t ls_sources__add_text(struct ls_sources *s, const char *path, char *text, size_t len,
			     const char *why)
{
	int64_t src = -1;

	if (text) {
		src = add_source(s, text, len);
		if (src < 0)
			return src;
	}
	return add_file(s, path, src, src < 0 ? why : NULL);
}

int ls_sources__set_text(struct ls_sources *s, int64_t file, char *text, size_t len,
			 const char *why)
{
	struct ls_file *f = &s->files[file];
	int64_t src = -1;
	char *w = NULL;

	if (text) {
		src = add_source(s, text, len);
		if (src < 0)
			return src;
	} else if (why && !(w = strdup(why))) {
		return -ENOMEM;
	}
	/* by_key still finds it under (path, -1): a second lookup of both is a new file, harmless
	 */
	f->source_id = src;
	free(f->unavailable);
	f->unavailable = w;
	f->dirty = (size_t)file < s->files_flushed;
	return 0;
}
