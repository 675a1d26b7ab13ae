// SPDX-License-Identifier: MIT
/* IPython history reader: rows newest first from a database image; hostile images refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ipyhistory.h"

/* An image of a database made by sql (the caller frees it with sqlite3_free) */
static unsigned char *image(const char *sql, size_t *len)
{
	sqlite3_int64 n = 0;
	unsigned char *buf;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	buf = sqlite3_serialize(db, "main", &n, 0);
	assert_non_null(buf);
	sqlite3_close(db);
	*len = n;
	return buf;
}

#define HISTORY_SQL                                                                          \
	"CREATE TABLE history (session integer, line integer, source text, source_raw text," \
	" PRIMARY KEY (session, line));"

static void test_rows(void **state)
{
	struct ls_ipyhist h;
	char why[256] = "";
	size_t len;
	unsigned char *buf =
		image(HISTORY_SQL "INSERT INTO history VALUES (1, 1, 'a', 'a'),"
				  " (2, 1, 'get_ipython().run_line_magic(''time'', ''x'')',"
				  " '%time x'), (2, 2, NULL, NULL), (1, 2, 'b', 'b');",
		      &len);

	assert_int_equal(ls_ipyhistory__parse((char *)buf, len, &h, why, sizeof(why)), 0);
	assert_int_equal(h.n, 3);
	assert_string_equal(h.cells[0].text, "%time x"); /* the raw text, newest first */
	assert_int_equal(h.cells[0].session, 2);
	assert_int_equal(h.cells[0].line, 1);
	assert_string_equal(h.cells[1].text, "b");
	assert_string_equal(h.cells[2].text, "a");
	ls_ipyhist_release(&h);
	sqlite3_free(buf);
}

static void test_refused(void **state)
{
	struct ls_ipyhist h;
	char why[256] = "", junk[4096];
	unsigned char *buf;
	size_t len;

	/* not a database */
	memset(junk, 'x', sizeof(junk));
	assert_int_equal(ls_ipyhistory__parse(junk, sizeof(junk), &h, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not an SQLite database"));
	assert_int_equal(ls_ipyhistory__parse(junk, 10, &h, why, sizeof(why)), -EINVAL);
	/* a database without the table */
	buf = image("CREATE TABLE other(x);", &len);
	assert_int_equal(ls_ipyhistory__parse((char *)buf, len, &h, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not an IPython history database"));
	sqlite3_free(buf);
	/* a history whose pages after the header are garbage */
	buf = image(HISTORY_SQL "INSERT INTO history VALUES (1, 1, 'a', 'a');", &len);
	memset(buf + 100, 0xff, len - 100);
	assert_true(ls_ipyhistory__parse((char *)buf, len, &h, why, sizeof(why)) < 0);
	assert_int_equal(h.n, 0);
	sqlite3_free(buf);
	/* a view in place of the table reads like one: only innocuous functions (trusted_schema
	 * off) */
	buf = image("CREATE TABLE t(session, line, source, source_raw);"
		    "CREATE VIEW history AS SELECT session, line, source, upper(source_raw)"
		    " AS source_raw FROM t;",
		    &len);
	assert_int_equal(ls_ipyhistory__parse((char *)buf, len, &h, why, sizeof(why)), 0);
	assert_int_equal(h.n, 0);
	sqlite3_free(buf);
}

static void test_wal(void **state)
{
	struct ls_ipyhist h;
	char why[256] = "";
	size_t len;
	unsigned char *buf =
		image(HISTORY_SQL "INSERT INTO history VALUES (1, 1, 'a', 'a');", &len);

	/* as a WAL database's header says: still read, from its main file */
	buf[18] = buf[19] = 2;
	assert_int_equal(ls_ipyhistory__parse((char *)buf, len, &h, why, sizeof(why)), 0);
	assert_int_equal(h.n, 1);
	ls_ipyhist_release(&h);
	sqlite3_free(buf);
}

/* From a file as a kernel names it (as root, as CI runs these: ls_asuser opens it) */
static void test_load(void **state)
{
	char dir[] = "/tmp/ls-hist-XXXXXX", db[64], link[64], big[64];
	struct ls_ipyhist h;
	unsigned char *buf;
	char why[256] = "";
	int kept = -1;
	size_t len;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/history.sqlite", dir);
	snprintf(link, sizeof(link), "%s/link.sqlite", dir);
	snprintf(big, sizeof(big), "%s/big.sqlite", dir);
	buf = image(HISTORY_SQL "INSERT INTO history VALUES (1, 1, 'a', 'a');", &len);
	f = fopen(db, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	sqlite3_free(buf);
	assert_int_equal(ls_ipyhistory__load(getpid(), db, &kept, &h, why, sizeof(why)), 0);
	assert_int_equal(h.n, 1);
	ls_ipyhist_release(&h);
	/* a symlink to it is not followed */
	assert_int_equal(symlink(db, link), 0);
	assert_int_equal(ls_ipyhistory__load(getpid(), link, &kept, &h, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "symlink"));
	/* a database past the limit is not read (a sparse file: no disk needed) */
	f = fopen(big, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), LS_IPYHIST_MAX_BYTES + 1), 0);
	fclose(f);
	assert_int_equal(ls_ipyhistory__load(getpid(), big, &kept, &h, why, sizeof(why)), -EFBIG);
	assert_non_null(strstr(why, "larger than"));
	assert_int_equal(ls_ipyhistory__load(getpid(), "/no/such/history.sqlite", &kept, &h, why,
					     sizeof(why)),
			 -ENOENT);
	close(kept);
	unlink(db);
	unlink(link);
	unlink(big);
	rmdir(dir);
}

/* Writes a history image with rows cells to path, in place (as SQLite does) */
static void write_rows(const char *path, int rows)
{
	char sql[512] = HISTORY_SQL;
	unsigned char *buf;
	size_t len;
	FILE *f;

	for (int i = 1; i <= rows; i++)
		snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql),
			 "INSERT INTO history VALUES (1, %d, 'c', 'c');", i);
	buf = image(sql, &len);
	f = fopen(path, "r+") ?: fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
	sqlite3_free(buf);
}

/*
 * A shell writes its last cells as it exits: once it is gone, the database is read from the
 * descriptor opened with its rights while it ran, never again by path
 */
static void test_read_at_exit(void **state)
{
	char dir[] = "/tmp/ls-hist-XXXXXX", db[64], why[256] = "";
	int kept = -1, none = -1, status;
	struct ls_ipyhist h;
	pid_t child;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/history.sqlite", dir);
	write_rows(db, 1);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	assert_int_equal(ls_ipyhistory__load(child, db, &kept, &h, why, sizeof(why)), 0);
	assert_int_equal(h.n, 1);
	ls_ipyhist_release(&h);
	assert_true(kept >= 0);
	write_rows(db, 3); /* the cells it wrote as it exited */
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(ls_ipyhistory__load(child, db, &none, &h, why, sizeof(why)), -ESRCH);
	assert_int_equal(ls_ipyhistory__load(child, db, &kept, &h, why, sizeof(why)), 0);
	assert_int_equal(h.n, 3);
	ls_ipyhist_release(&h);
	/* the same again: the descriptor stays kept and is read from its start */
	assert_int_equal(ls_ipyhistory__load(child, db, &kept, &h, why, sizeof(why)), 0);
	assert_int_equal(h.n, 3);
	ls_ipyhist_release(&h);
	close(kept);
	unlink(db);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),	     cmocka_unit_test(test_refused),
		cmocka_unit_test(test_wal),	     cmocka_unit_test(test_load),
		cmocka_unit_test(test_read_at_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
