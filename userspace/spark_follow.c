// SPDX-License-Identifier: MIT
/* Spark event logs read as they grow: discovery, one open descriptor per part, line splitting. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "array.h"
#include "asuser.h"
#include "log.h"
#include "spark_codec.h"
#include "spark_follow.h"

#define LINE_MAX_BYTES (64u << 20) /* a longer line is cut (and then fails to parse: counted) */
#define POLL_MAX_BYTES (64u << 20) /* read per log and poll, so one log cannot stall the rest */
#define MAX_LOGS       4096
#define V2_PREFIX      "eventlog_v2_"

struct log {
	int app;    /* index given to ops->app, in the order logs start: -1 before */
	char *path; /* the file, or a rolling log's directory */
	int dirfd;  /* rolling: its directory; else -1 */
	int fd;	    /* the part being read; -1 none yet */
	long index; /* rolling: that part's number */
	off_t off;
	struct ls_spark_dec *dec;
	char *partial; /* the line read so far */
	size_t npartial, cappartial;
	bool cut;     /* the line in partial was cut at LINE_MAX_BYTES: skip to its end */
	bool failed;  /* reported; read no more */
	bool started; /* ops->app was called */
	enum ls_spark_codec codec; /* of the first part */
	const struct ls_spark_follow_ops *ops;
	void *ctx;
	uint64_t *lines;
	int *napps; /* the follower's count of started logs */
};

struct seen {
	dev_t dev;
	ino_t ino;
};

struct ls_spark_follow {
	char **roots;
	bool *warned, *found;
	size_t nroots;
	int64_t since_s;
	struct ls_creds creds;
	bool has_creds;
	struct log *logs;
	size_t nlogs, caplogs;
	struct seen *seen;
	size_t nseen, capseen;
	uint64_t bytes, lines;
	int napps;
};

int ls_spark_follow__new(const char *const *paths, size_t n, int64_t since_s,
			 const struct ls_creds *creds, struct ls_spark_follow **out)
{
	struct ls_spark_follow *f = calloc(1, sizeof(*f));

	if (!f || !(f->roots = calloc(n ?: 1, sizeof(*f->roots))) ||
	    !(f->warned = calloc(n ?: 1, sizeof(*f->warned))) ||
	    !(f->found = calloc(n ?: 1, sizeof(*f->found)))) {
		ls_spark_follow__free(f);
		return -ENOMEM;
	}
	for (; f->nroots < n; f->nroots++)
		if (!(f->roots[f->nroots] = strdup(paths[f->nroots]))) {
			ls_spark_follow__free(f);
			return -ENOMEM;
		}
	f->since_s = since_s;
	if (creds) {
		f->creds = *creds;
		f->has_creds = true;
	}
	*out = f;
	return 0;
}

static void close_part(struct log *l)
{
	if (l->fd >= 0)
		close(l->fd);
	l->fd = -1;
	ls_spark_dec__free(l->dec);
	l->dec = NULL;
	l->off = 0;
}

void ls_spark_follow__free(struct ls_spark_follow *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nlogs; i++) {
		struct log *l = &f->logs[i];

		close_part(l);
		if (l->dirfd >= 0)
			close(l->dirfd);
		free(l->path);
		free(l->partial);
	}
	for (size_t i = 0; i < f->nroots; i++)
		free(f->roots[i]);
	free(f->roots);
	free(f->warned);
	free(f->found);
	free(f->logs);
	free(f->seen);
	free(f);
}

void ls_spark_follow__counts(const struct ls_spark_follow *f, uint64_t *bytes, uint64_t *lines)
{
	*bytes = f->bytes;
	*lines = f->lines;
}

static const struct ls_creds *creds_of(const struct ls_spark_follow *f)
{
	return f->has_creds ? &f->creds : NULL;
}

/* true once per file or directory: a renamed `.inprogress` log is the same inode. */
static bool first_sight(struct ls_spark_follow *f, int fd)
{
	struct stat st;
	struct seen *v;

	if (fstat(fd, &st))
		return false;
	for (size_t i = 0; i < f->nseen; i++)
		if (f->seen[i].dev == st.st_dev && f->seen[i].ino == st.st_ino)
			return false;
	v = ls_array_grow(f->seen, &f->capseen, f->nseen, sizeof(*v), 16);
	if (!v)
		return false;
	f->seen = v;
	v[f->nseen++] = (struct seen){st.st_dev, st.st_ino};
	return true;
}

/* Taken already, or too old when first seen (so a directory is not reopened every poll). */
static bool seen_ino(const struct ls_spark_follow *f, ino_t ino)
{
	for (size_t i = 0; i < f->nseen; i++)
		if (f->seen[i].ino == ino)
			return true;
	return false;
}

static bool recent(const struct ls_spark_follow *f, int fd)
{
	struct stat st;

	return f->since_s < 0 || (!fstat(fd, &st) && st.st_mtime >= f->since_s);
}

static int start(struct log *l)
{
	if (l->started)
		return 0;
	l->started = true;
	l->app = (*l->napps)++;
	return l->ops->app(l->ctx, l->app, l->path, ls_spark_codec__name(l->codec));
}

static int fail(struct log *l, const char *fmt, const char *arg)
{
	char why[512];
	int err = start(l);

	snprintf(why, sizeof(why), fmt, arg);
	l->failed = true;
	if (!err && l->ops->failed)
		l->ops->failed(l->ctx, l->app, why);
	return err;
}

/* A part's name: "events_<N>_<app>[...]" -> N; -1 for another file. */
static long part_index(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "events_", 7))
		return -1;
	n = strtol(name + 7, &end, 10);
	return end != name + 7 && *end == '_' && n >= 0 ? n : -1;
}

/* The codec of a file name, looking through the `.compact` of a compacted rolling part. */
static int codec_of(const char *name, enum ls_spark_codec *c)
{
	char buf[256];
	size_t n = strlen(name);

	if (n > 8 && n < sizeof(buf) && !strcmp(name + n - 8, ".compact")) {
		memcpy(buf, name, n - 8);
		buf[n - 8] = 0;
		name = buf;
	}
	return ls_spark_codec__of_name(name, c);
}

/* Starts reading file fd (named name) as the log's current part. */
static int start_part(struct log *l, int fd, const char *name)
{
	enum ls_spark_codec c;

	if (codec_of(name, &c)) {
		const char *dot = strrchr(name, '.');

		close(fd);
		return fail(l, "its codec %s is not supported (plain, lz4, snappy and zstd are)",
			    dot ? dot + 1 : name);
	}
	if (!l->started)
		l->codec = c;
	l->dec = ls_spark_dec__new(c);
	if (!l->dec) {
		close(fd);
		return -ENOMEM;
	}
	l->fd = fd;
	l->off = 0;
	return 0;
}

static struct log *add_log(struct ls_spark_follow *f, const char *path, int dirfd)
{
	struct log *v;

	if (f->nlogs >= MAX_LOGS)
		return NULL;
	v = ls_array_grow(f->logs, &f->caplogs, f->nlogs, sizeof(*v), 8);
	if (!v)
		return NULL;
	f->logs = v;
	v += f->nlogs;
	memset(v, 0, sizeof(*v));
	v->path = strdup(path);
	if (!v->path)
		return NULL;
	v->app = -1;
	v->dirfd = dirfd;
	v->fd = -1;
	v->index = -1;
	f->nlogs++;
	return v;
}

static void attach(struct ls_spark_follow *f, struct log *l, const struct ls_spark_follow_ops *ops,
		   void *ctx)
{
	l->ops = ops;
	l->ctx = ctx;
	l->lines = &f->lines;
	l->napps = &f->napps;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* The lowest-numbered part of a rolling log above index; its name into buf, -1 none. */
static long next_part(int dirfd, long index, char *buf, size_t len)
{
	int fd = dup(dirfd);
	long best = -1, n;
	struct dirent *de;
	DIR *d;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	rewinddir(d);
	while ((de = readdir(d)))
		if ((n = part_index(de->d_name)) > index && (best < 0 || n < best) &&
		    strlen(de->d_name) < len) {
			best = n;
			snprintf(buf, len, "%s", de->d_name);
		}
	closedir(d);
	return best;
}

/* A path named on the command line as given; a directory's entry neither a link nor above it. */
static int open_in(struct ls_spark_follow *f, int dirfd, const char *name, enum ls_open_want w)
{
	bool named = dirfd == AT_FDCWD;

	return ls_asuser__open(creds_of(f), dirfd, name, named ? O_RDONLY : O_RDONLY | O_NOFOLLOW,
			       named ? 0 : RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, w);
}

/* A rolling log: opens its next part once the current one is read to its end. */
static int roll(struct ls_spark_follow *f, struct log *l, bool at_end)
{
	char name[256];
	long n;
	int fd;

	if (l->dirfd < 0 || (l->fd >= 0 && !at_end))
		return 0;
	n = next_part(l->dirfd, l->index, name, sizeof(name));
	if (n < 0)
		return 0;
	fd = open_in(f, l->dirfd, name, LS_OPEN_REGULAR);
	if (fd < 0)
		return 0; /* not readable yet (or at all): tried again at the next poll */
	if (l->fd >= 0 && ls_spark_dec__pending(l->dec))
		ls_warn(0, "spark log %s: part %ld ended inside a compressed block", l->path,
			l->index);
	close_part(l);
	l->index = n;
	return start_part(l, fd, name);
}

static int emit(struct log *l, const char *s, size_t n)
{
	(*l->lines)++;
	return l->ops->line(l->ctx, l->app, s, n);
}

/* Room for n bytes of a line. */
static int reserve(struct log *l, size_t n)
{
	size_t cap = l->cappartial ?: 4096;
	char *v;

	if (n <= l->cappartial)
		return 0;
	while (cap < n)
		cap *= 2;
	v = realloc(l->partial, cap);
	if (!v)
		return -ENOMEM;
	l->partial = v;
	l->cappartial = cap;
	return 0;
}

/* Decoded bytes: whole lines go out, the rest waits in partial. */
static int on_bytes(void *ctx, const char *data, size_t len)
{
	struct log *l = ctx;

	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t take = nl ? (size_t)(nl - data) : len, room;
		int err = 0;

		room = l->cut ? 0 : LINE_MAX_BYTES - l->npartial;
		if (take > room)
			l->cut = true;
		if ((!l->cut || room) && take) {
			size_t k = take < room ? take : room;

			if (reserve(l, l->npartial + k))
				return -ENOMEM;
			memcpy(l->partial + l->npartial, data, k);
			l->npartial += k;
		}
		if (!nl)
			return 0;
		if (l->npartial)
			err = emit(l, l->partial, l->npartial);
		l->npartial = 0;
		l->cut = false;
		if (err)
			return err;
		data = nl + 1;
		len -= take + 1;
	}
	return 0;
}

/*
 * A single-file log's name now, through its descriptor: Spark renames `X.inprogress` to `X` in
 * the same directory when the application ends; the new name replaces the old one's last part.
 */
static int check_rename(struct log *l)
{
	char self[64], now[PATH_MAX], *path;
	const char *old = base_name(l->path), *cur;
	ssize_t n;

	if (l->dirfd >= 0 || l->fd < 0 || !l->ops->renamed)
		return 0;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", l->fd);
	n = readlink(self, now, sizeof(now) - 1);
	if (n <= 0)
		return 0;
	now[n] = 0;
	cur = base_name(now);
	if (!strcmp(cur, old) || strstr(now, " (deleted)"))
		return 0;
	if (asprintf(&path, "%.*s%s", (int)(old - l->path), l->path, cur) < 0)
		return -ENOMEM;
	free(l->path);
	l->path = path;
	l->ops->renamed(l->ctx, l->app, path);
	return 0;
}

static int read_part(struct ls_spark_follow *f, struct log *l, bool *at_end)
{
	char buf[65536];
	size_t total = 0;
	ssize_t n;
	int err;

	*at_end = false;
	while (l->fd >= 0 && !l->failed && total < POLL_MAX_BYTES) {
		n = pread(l->fd, buf, sizeof(buf), l->off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*at_end = true;
			return 0;
		}
		l->off += n;
		total += n;
		f->bytes += n;
		err = ls_spark_dec__feed(l->dec, buf, n, on_bytes, l);
		if (err == -EBADMSG)
			err = fail(l, "its compressed data is damaged: %s",
				   ls_spark_dec__why(l->dec));
		if (err)
			return err;
	}
	return 0;
}

static int take(struct ls_spark_follow *f, int dirfd, const char *name, const char *path,
		bool named, const struct ls_spark_follow_ops *ops, void *ctx);

/* A directory of logs (spark.eventLog.dir): each log in it, and each rolling log's directory. */
static int take_dir(struct ls_spark_follow *f, int fd, const char *path,
		    const struct ls_spark_follow_ops *ops, void *ctx)
{
	int d2 = dup(fd), err = 0;
	DIR *d = d2 >= 0 ? fdopendir(d2) : NULL;
	struct dirent *de;
	char sub[4096];

	if (!d) {
		if (d2 >= 0)
			close(d2);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !strncmp(de->d_name, "appstatus_", 10) ||
		    seen_ino(f, de->d_ino))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
		err = take(f, fd, de->d_name, sub, false, ops, ctx);
		if (err == -ENOENT || err == -EACCES || err == -EINVAL || err == -ELOOP)
			err = 0; /* gone, or not ours to read: skipped */
	}
	closedir(d);
	return err;
}

/*
 * In a directory, a file whose suffix is neither a codec Spark names logs with nor none at all
 * (a README beside them) is not a log.
 */
static bool log_name(const char *name)
{
	enum ls_spark_codec c;
	const char *dot = strrchr(name, '.');

	return !codec_of(name, &c) || (dot && !strcmp(dot, ".lzf")) ||
	       (dot && !strcmp(dot, ".inprogress"));
}

/* Takes on a path named on the command line, or an entry of a directory of logs. */
static int take(struct ls_spark_follow *f, int dirfd, const char *name, const char *path,
		bool named, const struct ls_spark_follow_ops *ops, void *ctx)
{
	int fd = open_in(f, dirfd, name, LS_OPEN_REGULAR), err;
	struct log *l;

	if (fd == -EINVAL || fd == -ELOOP) {
		/* a directory: a rolling log, or (named) a directory of logs */
		fd = open_in(f, dirfd, name, LS_OPEN_DIR);
		if (fd < 0)
			return fd;
		if (strncmp(base_name(path), V2_PREFIX, strlen(V2_PREFIX))) {
			if (!named) {
				close(fd);
				return 0;
			}
			err = take_dir(f, fd, path, ops, ctx);
			close(fd);
			return err;
		}
		if (!first_sight(f, fd) || (!named && !recent(f, fd))) {
			close(fd);
			return 0;
		}
		l = add_log(f, path, fd);
		if (!l) {
			close(fd);
			return -ENOMEM;
		}
		attach(f, l, ops, ctx);
		return roll(f, l, true);
	}
	if (fd < 0)
		return fd;
	if (!first_sight(f, fd) || (!named && !recent(f, fd)) || (!named && !log_name(name))) {
		close(fd);
		return 0;
	}
	l = add_log(f, path, -1);
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	attach(f, l, ops, ctx);
	return start_part(l, fd, name);
}

static int discover(struct ls_spark_follow *f, const struct ls_spark_follow_ops *ops, void *ctx)
{
	for (size_t i = 0; i < f->nroots; i++) {
		int err = take(f, AT_FDCWD, f->roots[i], f->roots[i], true, ops, ctx);

		if (err == -ENOMEM)
			return err;
		if (!err)
			f->found[i] = true;
		/* gone once read: a log renamed when its application ended, read on through its fd
		 */
		if (err == -ENOENT && f->found[i])
			continue;
		if (err < 0 && !f->warned[i]) {
			f->warned[i] = true;
			ls_warn(err, "cannot read spark events %s: %s", f->roots[i],
				strerror(-err));
		} else if (err > 0) {
			return err;
		}
	}
	return 0;
}

int ls_spark_follow__poll(struct ls_spark_follow *f, const struct ls_spark_follow_ops *ops,
			  void *ctx, bool last)
{
	int err = discover(f, ops, ctx);

	for (size_t i = 0; i < f->nlogs && !err; i++) {
		struct log *l = &f->logs[i];
		bool at_end = false;

		l->ops = ops;
		l->ctx = ctx;
		if (!l->started && l->fd < 0)
			err = roll(f, l, true); /* a rolling log's first part may be there now */
		if (!err && !l->started && l->fd >= 0)
			err = start(l);
		if (!l->started)
			continue; /* a rolling log's directory without a part yet */
		for (int parts = 0; parts < 64 && !err && !l->failed; parts++) {
			long was = l->index;

			err = read_part(f, l, &at_end);
			if (!err && at_end)
				err = roll(f, l, true);
			if (l->index == was)
				break;
		}
		if (!err)
			err = check_rename(l);
		if (!err && last && !l->failed && l->npartial) {
			err = emit(l, l->partial, l->npartial);
			l->npartial = 0;
		}
		if (!err && last && l->dec && ls_spark_dec__pending(l->dec) && !l->failed)
			ls_warn(0,
				"spark log %s ends inside a compressed block (still being written?)",
				l->path);
	}
	return err;
}
