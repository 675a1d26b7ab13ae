// SPDX-License-Identifier: MIT
/*
 * The model's Spark applications: the event logs stored in the profile (--spark-events when
 * recording) and those named on `report --spark-events`, read now; then folded into actions
 * and anchored to the profile's lines (spark.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "asuser.h"
#include "log.h"
#include "model_int.h"
#include "spark.h"
#include "spark_codec.h"
#include "spark_follow.h"

struct stored_load {
	struct ls_spark *s;
	int64_t cur; /* the log being read */
	int app;
};

static int stored_row(void *ctx, const struct ls_prow_spark *r)
{
	struct stored_load *c = ctx;
	struct ls_spark *s = c->s;

	if (r->log_id != c->cur) {
		const char *codec = NULL;

		/* the codec's own static name: a stored string is not kept */
		for (int k = LS_SPARK_PLAIN; k <= LS_SPARK_ZSTD && r->codec; k++)
			if (!strcmp(r->codec, ls_spark_codec__name(k)))
				codec = ls_spark_codec__name(k);
		c->cur = r->log_id;
		c->app = ls_spark__begin_app(s, r->path, codec);
		if (c->app < 0)
			return c->app;
		if (r->note)
			ls_spark__note(s, "%s: %s", s->apps[c->app].log ?: "spark log", r->note);
	}
	return r->event ? ls_spark__event(s, c->app, r->event, r->len) : 0;
}

static int load_stored(struct loader *L, struct ls_spark *s)
{
	struct stored_load c = {s, -1, -1};

	return ls_profile__spark(L->prof, stored_row, &c);
}

struct read_ctx {
	struct ls_spark *s;
	int base;    /* the follower's app 0 */
	bool failed; /* a log could not be read to its end */
};

static int on_app(void *ctx, int app, const char *path, const char *codec)
{
	struct read_ctx *c = ctx;
	int i = ls_spark__begin_app(c->s, path, codec);

	if (i < 0)
		return i;
	if (app == 0)
		c->base = i;
	return 0;
}

static int on_line(void *ctx, int app, const char *line, size_t len)
{
	struct read_ctx *c = ctx;

	return ls_spark__event(c->s, c->base + app, line, len);
}

static void on_failed(void *ctx, int app, const char *why)
{
	struct read_ctx *c = ctx;

	ls_err(-EINVAL, "spark log %s: %s", c->s->apps[c->base + app].log, why);
	c->failed = true;
}

int ls_spark__read_paths(struct ls_spark *s, const char *const *paths, size_t n)
{
	static const struct ls_spark_follow_ops ops = {on_app, on_line, on_failed, NULL};
	struct read_ctx c = {s, (int)s->napps, false};
	struct ls_spark_follow *f;
	struct ls_creds cr, *crp = NULL;
	const char *uid = getenv("SUDO_UID"), *gid = getenv("SUDO_GID");
	int err;

	/* under sudo, the logs are read with the rights of the user who asked */
	if (geteuid() == 0 && uid && gid &&
	    !ls_creds__of_user((uid_t)strtoul(uid, NULL, 10), (gid_t)strtoul(gid, NULL, 10), &cr))
		crp = &cr;
	/* named here, a path must be there: a recording's may appear later, a report's not */
	for (size_t i = 0; i < n; i++) {
		int fd = ls_asuser__open(crp, AT_FDCWD, paths[i], O_RDONLY, 0, LS_OPEN_REGULAR);

		if (fd == -EINVAL)
			fd = ls_asuser__open(crp, AT_FDCWD, paths[i], O_RDONLY, 0, LS_OPEN_DIR);
		if (fd < 0)
			return ls_err(fd, "cannot read spark events %s: %s", paths[i],
				      strerror(-fd));
		close(fd);
	}
	err = ls_spark_follow__new(paths, n, -1, crp, &f);
	if (err)
		return err;
	err = ls_spark_follow__poll(f, &ops, &c, true);
	ls_spark_follow__free(f);
	return err ?: c.failed ? -EINVAL : 0;
}

int lsm_load_spark(struct loader *L, bool stored, const char *const *paths, size_t n)
{
	struct ls_spark *s;
	int err = 0;

	if (!n && !stored)
		return 0;
	s = ls_spark__new();
	if (!s)
		return -ENOMEM;
	if (stored)
		err = load_stored(L, s);
	if (!err && n)
		err = ls_spark__read_paths(s, paths, n);
	if (!err)
		err = ls_spark__finish(s);
	if (err) {
		ls_spark__free(s);
		return err;
	}
	ls_spark__match(s, L->m);
	L->m->spark = s;
	return 0;
}
