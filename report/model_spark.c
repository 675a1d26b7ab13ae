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

bool lsm_has_spark(struct loader *L)
{
	sqlite3_stmt *st;
	bool any = false;

	if (L->schema < 7 || lsm_prepare(L, "SELECT 1 FROM spark_logs LIMIT 1", &st))
		return false;
	any = lsm_step(L, st) > 0;
	sqlite3_finalize(st);
	return any;
}

static int load_stored(struct loader *L, struct ls_spark *s)
{
	sqlite3_stmt *st;
	int64_t cur = -1;
	int app = -1, rc = 0, err;

	err = lsm_prepare(L,
			  "SELECT l.id, l.path, l.codec, l.note, e.event FROM spark_logs l"
			  " LEFT JOIN spark_events e ON e.log_id = l.id ORDER BY l.id, e.seq",
			  &st);
	if (err)
		return err;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *line = (const char *)sqlite3_column_text(st, 4);

		if (id != cur) {
			const char *codec = (const char *)sqlite3_column_text(st, 2), *note;
			const char *c = NULL;

			/* the codec's own static name: a stored string is not kept */
			for (int k = LS_SPARK_PLAIN; k <= LS_SPARK_ZSTD && codec; k++)
				if (!strcmp(codec, ls_spark_codec__name(k)))
					c = ls_spark_codec__name(k);
			cur = id;
			app = ls_spark__begin_app(s, (const char *)sqlite3_column_text(st, 1), c);
			if (app < 0) {
				err = app;
				break;
			}
			note = (const char *)sqlite3_column_text(st, 3);
			if (note)
				ls_spark__note(s, "%s: %s", s->apps[app].log ?: "spark log", note);
		}
		if (line)
			err = ls_spark__event(s, app, line, (size_t)sqlite3_column_bytes(st, 4));
	}
	sqlite3_finalize(st);
	return err ?: (rc < 0 ? rc : 0);
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
