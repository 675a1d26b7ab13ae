/* SPDX-License-Identifier: MIT */
/* Internals of the profile reader (profile_read.c, profile_read_aux.c): not its API. */
#ifndef LS_PROFILE_INT_H
#define LS_PROFILE_INT_H

#include <sqlite3.h>
#include "profile.h"

struct ls_profile {
	struct ls_store *store;
	sqlite3 *db;
	int schema;
	int64_t damaged;
};

/*
 * A reader's callback, kept untyped between the public reader and its row function, which
 * casts it back to its own type.
 */
struct lsp_cb {
	struct ls_profile *p;
	void (*fn)(void);
	void *ctx;
};

#define LSP_CB(p, f, c)                       \
	(struct lsp_cb)                       \
	{                                     \
		(p), (void (*)(void))(f), (c) \
	}
/* calls the reader's callback with row r of type struct T */
#define LSP_CALL(T, cb, r) ((int (*)(void *, const struct T *))(cb)->fn)((cb)->ctx, (r))

/* Runs sql and calls row once per result row until it returns non-zero (returned). */
int lsp_each(struct ls_profile *p, const char *sql, int (*row)(sqlite3_stmt *st, struct lsp_cb *cb),
	     struct lsp_cb *cb);
const char *lsp_text(sqlite3_stmt *st, int col);
/* a column's integer, or -1 when it is NULL */
int64_t lsp_id(sqlite3_stmt *st, int col);

#endif
