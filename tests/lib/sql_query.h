/* SPDX-License-Identifier: MIT */
/* Tests (cmocka): a profile opened read-only beside its writer, and one integer queried from it. */
#ifndef LS_TEST_SQL_QUERY_H
#define LS_TEST_SQL_QUERY_H

#include <sqlite3.h>
#include <stdint.h>

static inline sqlite3 *ls_test_open_ro(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return db;
}

/* The one integer the query gives; -999 when it gives no row. */
static inline int64_t ls_test_q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = -999;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

#endif
