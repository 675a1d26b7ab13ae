// SPDX-License-Identifier: MIT
/* IPython history reader: SQLite over a copy of the database, deserialized read-only. */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "ipyhistory.h"
#include "procfs.h"

void ls_ipyhist_release(struct ls_ipyhist *h)
{
	for (size_t i = 0; i < h->n; i++) {
		free(h->cells[i].text);
		free(h->cells[i].source);
	}
	free(h->cells);
	h->cells = NULL;
	h->n = 0;
}

static int read_rows(sqlite3 *db, struct ls_ipyhist *h, char *why, size_t whylen)
{
	static const char sql[] = "SELECT session, line, source_raw, source FROM history"
				  " ORDER BY session DESC, line DESC LIMIT ?";
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, err = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(why, whylen, "not an IPython history database: %s", sqlite3_errmsg(db));
		return -EINVAL;
	}
	sqlite3_bind_int(st, 1, LS_IPYHIST_MAX_ROWS);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 2), *src;
		struct ls_ipyhist_cell *c, *v;

		if (!t)
			continue;
		v = ls_array_grow(h->cells, &cap, h->n, sizeof(*v), 64);
		if (!v) {
			err = -ENOMEM;
			break;
		}
		h->cells = v;
		c = &h->cells[h->n];
		memset(c, 0, sizeof(*c));
		c->len = sqlite3_column_bytes(st, 2);
		c->text = malloc(c->len + 1);
		if (!c->text) {
			err = -ENOMEM;
			break;
		}
		memcpy(c->text, t, c->len + 1);
		/* the transformed text (what IPython compiled), when it is not the raw one */
		src = sqlite3_column_text(st, 3);
		if (src &&
		    ((size_t)sqlite3_column_bytes(st, 3) != c->len || memcmp(src, t, c->len))) {
			c->slen = sqlite3_column_bytes(st, 3);
			c->source = malloc(c->slen + 1);
			if (!c->source) {
				free(c->text);
				err = -ENOMEM;
				break;
			}
			memcpy(c->source, src, c->slen + 1);
		}
		c->session = sqlite3_column_int64(st, 0);
		c->line = sqlite3_column_int64(st, 1);
		h->n++;
	}
	if (!err && rc != SQLITE_DONE) {
		snprintf(why, whylen, "history database unreadable: %s", sqlite3_errmsg(db));
		err = -EIO;
	} else if (err) {
		snprintf(why, whylen, "out of memory reading the history database");
	}
	sqlite3_finalize(st);
	return err;
}

int ls_ipyhistory__parse(char *buf, size_t len, struct ls_ipyhist *h, char *why, size_t whylen)
{
	sqlite3 *db = NULL;
	int err;

	memset(h, 0, sizeof(*h));
	if (len < 100 || memcmp(buf, "SQLite format 3", 16)) {
		snprintf(why, whylen, "history file is not an SQLite database");
		return -EINVAL;
	}
	/*
	 * A WAL database (header bytes 18-19 = 2) cannot be deserialized; as a legacy one its main
	 * file reads, without the rows still in its -wal
	 */
	if (buf[18] == 2 && buf[19] == 2)
		buf[18] = buf[19] = 1;
	if (sqlite3_open_v2("ipyhistory", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
	    SQLITE_OK) {
		snprintf(why, whylen, "cannot open an in-memory database");
		sqlite3_close(db);
		return -ENOMEM;
	}
	/* hostile input: no triggers or views run on our behalf, no schema writes, bounded size */
	sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_limit(db, SQLITE_LIMIT_LENGTH, LS_IPYHIST_MAX_BYTES);
	if (sqlite3_deserialize(db, "main", (unsigned char *)buf, len, len,
				SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
		snprintf(why, whylen, "history database unreadable: %s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return -EINVAL;
	}
	err = read_rows(db, h, why, whylen);
	sqlite3_close(db); /* before the caller frees buf: the database lives in it */
	if (err)
		ls_ipyhist_release(h);
	return err;
}

int ls_ipyhistory__load(pid_t pid, const char *path, int *kept, struct ls_ipyhist *h, char *why,
			size_t whylen)
{
	char *buf = NULL;
	size_t len = 0;
	int err;

	memset(h, 0, sizeof(*h));
	err = ls_procfs__read_file_kept(pid, path, LS_READ_NOFOLLOW, LS_IPYHIST_MAX_BYTES, &buf,
					&len, kept);
	if (err) {
		if (err == -EFBIG)
			snprintf(why, whylen, "history database larger than %d MB not read",
				 LS_IPYHIST_MAX_BYTES >> 20);
		else if (err == -EINVAL)
			snprintf(why, whylen,
				 "history database is a symlink or not a regular file");
		else if (err == -EACCES || err == -EPERM)
			snprintf(why, whylen, "history database unreadable by the kernel's user");
		else if (err == -ESRCH)
			snprintf(why, whylen,
				 "the kernel ended before its history database could be read");
		else
			snprintf(why, whylen, "no history database: %s", strerror(-err));
		return err;
	}
	err = ls_ipyhistory__parse(buf, len, h, why, whylen);
	free(buf);
	return err;
}
