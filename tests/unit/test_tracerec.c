// SPDX-License-Identifier: MIT
/*
 * python-usdt's messages (userspace/tracerec.c), hand-built: batches add up per (thread,
 * function, line), sequence gaps count as lost batches, malformed messages and counts that would
 * overflow are refused and counted; and the same through the recorder into a profile.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "linescope.h"
#include "recorder.h"
#include "store.h"
#include "tracerec.h"
#include "../lib/sql_query.h"
#include "../lib/tmp_profile.h"

#define PID 4500001 /* above PID_MAX_LIMIT: /proc never answers */

LS_TEST_PROFILE_FIXTURE("tracerec")

/* A record being built: ls_trace_rec, then the message. */
struct msg {
	union {
		struct ls_trace_rec h;
		unsigned char b[sizeof(struct ls_trace_rec) + LS_TRACE_MAX_MSG];
	};
	size_t len;
};

static void *msg_begin(struct msg *m, uint32_t tid)
{
	memset(m, 0, sizeof(*m));
	m->h.type = LS_REC_TRACE;
	m->h.pid = PID;
	m->h.tid = tid;
	m->len = sizeof(m->h);
	return m->b + m->len;
}

static void msg_add(struct msg *m, const void *p, size_t n)
{
	assert_true(m->len + n <= sizeof(m->b));
	memcpy(m->b + m->len, p, n);
	m->len += n;
	m->h.size = m->len - sizeof(m->h);
}

static void code_msg(struct msg *m, uint32_t id, const char *file, const char *qual, int first)
{
	struct ls_trace_code c = {.kind = LS_TM_CODE,
				  .code = id,
				  .firstlineno = first,
				  .filename_len = strlen(file),
				  .qualname_len = strlen(qual)};

	msg_begin(m, PID);
	msg_add(m, &c, sizeof(c));
	msg_add(m, file, strlen(file));
	msg_add(m, qual, strlen(qual));
}

static void batch_msg(struct msg *m, uint32_t tid, uint64_t seq, const struct ls_trace_line *ln,
		      uint32_t n)
{
	struct ls_trace_batch b = {.kind = LS_TM_BATCH, .tid = tid, .nlines = n, .seq = seq};

	msg_begin(m, tid);
	msg_add(m, &b, sizeof(b));
	msg_add(m, ln, n * sizeof(*ln));
}

struct namer {
	int calls;
	char last[128];
};

/* Function ids 101, 102, ... in the order code objects are named. */
static int64_t name_fn(void *ctx, int64_t proc_id, const char *filename, const char *qualname,
		       int firstlineno)
{
	struct namer *n = ctx;

	snprintf(n->last, sizeof(n->last), "%s:%s:%d", filename, qualname, firstlineno);
	return 100 + ++n->calls;
}

static void test_batches_add_up(void **state)
{
	struct ls_trace_line l1[] = {
		{.code = 1, .line = 11, .hits = 3, .own_ns = 30, .total_ns = 40},
		{.code = 1, .line = LS_TRACE_CALLS, .hits = 1, .total_ns = 100},
		{.code = 2, .line = 20, .hits = 2, .own_ns = 5, .total_ns = 5},
	};
	struct ls_trace_line l2[] = {
		{.code = 1, .line = 11, .hits = 2, .own_ns = 20, .total_ns = 25}};
	struct ls_trace_line l3[] = {
		{.code = 2, .line = 20, .hits = 7, .own_ns = 7, .total_ns = 7}};
	struct ls_trace_state on = {.kind = LS_TM_STATE, .state = LS_TRACE_ON, .session = 1};
	struct ls_tracerec_stats st;
	struct namer nm = {0};
	struct ls_tracerec *t = NULL;
	struct ls_store *s = NULL;
	struct msg *m = malloc(sizeof(*m));
	sqlite3 *db;

	assert_non_null(m);
	assert_int_equal(ls_tracerec__new(name_fn, &nm, &t), 0);
	assert_null(ls_tracerec__state(t, 1));
	msg_begin(m, PID);
	msg_add(m, &on, sizeof(on));
	ls_tracerec__record(t, 1, m, m->len);
	assert_string_equal(ls_tracerec__state(t, 1), "on");
	code_msg(m, 1, "/src/app.py", "Job.run", 10);
	ls_tracerec__record(t, 1, m, m->len);
	assert_string_equal(nm.last, "/src/app.py:Job.run:10");
	code_msg(m, 2, "/src/app.py", "helper", 19);
	ls_tracerec__record(t, 1, m, m->len);
	assert_int_equal(nm.calls, 2);

	batch_msg(m, 5, 0, l1, 3);
	ls_tracerec__record(t, 1, m, m->len);
	batch_msg(m, 5, 1, l2, 1);
	ls_tracerec__record(t, 1, m, m->len);
	/* batches 2 and 3 lost: numbers are per process, whichever thread a batch counts */
	batch_msg(m, 6, 4, l3, 1);
	ls_tracerec__record(t, 1, m, m->len);
	ls_tracerec__stats(t, &st);
	assert_int_equal(st.batches, 3);
	assert_int_equal(st.lost_batches, 2);
	assert_int_equal(st.bad, 0);
	/* the same messages from another process have their own code ids and sequence */
	code_msg(m, 1, "/src/other.py", "main", 1);
	ls_tracerec__record(t, 2, m, m->len);
	batch_msg(m, 5, 0, l2, 1);
	ls_tracerec__record(t, 2, m, m->len);
	ls_tracerec__stats(t, &st);
	assert_int_equal(st.batches, 4);
	assert_int_equal(st.lost_batches, 2);
	assert_null(ls_tracerec__state(t, 2));

	ls_test_profile_remove(path);
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_tracerec__flush(t, s), 0);
	assert_int_equal(ls_store__commit(s), 0);
	db = ls_test_open_ro(path);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM trace"), 5);
	assert_int_equal(ls_test_q_int(db, "SELECT hits FROM trace WHERE process_id = 1 AND tid = 5"
					   " AND function_id = 101 AND line = 11"),
			 5);
	assert_int_equal(
		ls_test_q_int(db, "SELECT own_ns FROM trace WHERE process_id = 1 AND line = 11"),
		50);
	assert_int_equal(
		ls_test_q_int(db, "SELECT total_ns FROM trace WHERE process_id = 1 AND line = 11"),
		65);
	assert_int_equal(ls_test_q_int(db, "SELECT hits FROM trace WHERE line = -1"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT total_ns FROM trace WHERE line = -1"), 100);
	assert_int_equal(ls_test_q_int(db, "SELECT hits FROM trace WHERE tid = 5 AND line = 20"),
			 2);
	assert_int_equal(ls_test_q_int(db, "SELECT hits FROM trace WHERE tid = 6 AND line = 20"),
			 7);
	/* process 2's code 1 is its own function (103), not process 1's */
	assert_int_equal(ls_test_q_int(db, "SELECT function_id FROM trace WHERE process_id = 2"),
			 103);
	sqlite3_close(db);

	/* a rolled-back flush: everything is written again; the totals are the same */
	ls_tracerec__unflush(t);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_tracerec__flush(t, s), 0);
	assert_int_equal(ls_store__commit(s), 0);
	db = ls_test_open_ro(path);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM trace"), 5);
	assert_int_equal(ls_test_q_int(db, "SELECT sum(hits) FROM trace"), 5 + 1 + 2 + 7 + 2);
	sqlite3_close(db);
	ls_store__free(s);
	ls_tracerec__free(t);
	free(m);
}

static void test_malformed(void **state)
{
	struct ls_trace_line ok = {.code = 1, .line = 3, .hits = 1, .own_ns = 1, .total_ns = 1};
	struct ls_trace_line lines[2] = {ok, {.code = 9, .line = 4, .hits = 1}};
	struct ls_trace_line huge = {.code = 1, .line = 3, .hits = UINT64_MAX};
	struct ls_trace_state off = {
		.kind = LS_TM_STATE, .state = LS_TRACE_UNAVAILABLE, .reason = LS_TR_BUSY};
	struct ls_tracerec_stats st;
	struct namer nm = {0};
	struct ls_tracerec *t = NULL;
	struct msg *m = malloc(sizeof(*m));
	uint64_t bad = 0;
	uint32_t kind;

	assert_non_null(m);
	assert_int_equal(ls_tracerec__new(name_fn, &nm, &t), 0);
	code_msg(m, 1, "/a.py", "f", 1);
	ls_tracerec__record(t, 1, m, m->len);

	/* shorter than its header and a kind; a size past the record; no process row */
	ls_tracerec__record(t, 1, m, sizeof(m->h) + 2);
	bad++;
	m->h.size = m->len; /* more than follows */
	ls_tracerec__record(t, 1, m, m->len);
	bad++;
	m->h.size = m->len - sizeof(m->h);
	ls_tracerec__record(t, 0, m, m->len);
	bad++;
	/* each message shorter than its struct, and a kind that does not exist */
	for (kind = LS_TM_STATE; kind <= LS_TM_BATCH + 1; kind++) {
		msg_begin(m, PID);
		msg_add(m, &kind, sizeof(kind));
		ls_tracerec__record(t, 1, m, m->len);
		bad++;
	}
	/* names longer than the message */
	code_msg(m, 2, "/b.py", "g", 1);
	m->h.size -= 1;
	ls_tracerec__record(t, 1, m, m->len - 1);
	bad++;
	/* more lines than the message holds, by one and by an overflowing count */
	batch_msg(m, 5, 0, lines, 2);
	((struct ls_trace_batch *)(&m->h + 1))->nlines = 3;
	ls_tracerec__record(t, 1, m, m->len);
	bad++;
	((struct ls_trace_batch *)(&m->h + 1))->nlines = UINT32_MAX;
	ls_tracerec__record(t, 1, m, m->len);
	bad++;
	ls_tracerec__stats(t, &st);
	assert_int_equal(st.bad, bad);
	assert_int_equal(st.batches, 0);
	assert_int_equal(nm.calls, 1);

	/* a line of a code id never named: that line refused, the other kept */
	batch_msg(m, 5, 0, lines, 2);
	ls_tracerec__record(t, 1, m, m->len);
	bad++;
	/* counts that would make a total overflow: refused, the total kept */
	batch_msg(m, 5, 1, &huge, 1);
	ls_tracerec__record(t, 1, m, m->len);
	bad++;
	huge.hits = INT64_MAX;
	batch_msg(m, 5, 2, &huge, 1);
	ls_tracerec__record(t, 1, m, m->len);
	bad++;
	huge.hits = 0;
	huge.own_ns = UINT64_MAX / 2 + 1;
	batch_msg(m, 5, 3, &huge, 1);
	ls_tracerec__record(t, 1, m, m->len);
	bad++;
	ls_tracerec__stats(t, &st);
	assert_int_equal(st.bad, bad);
	assert_int_equal(st.batches, 4);
	assert_int_equal(st.lost_batches, 0);

	/* a process that cannot trace says why */
	msg_begin(m, PID);
	msg_add(m, &off, sizeof(off));
	ls_tracerec__record(t, 1, m, m->len);
	assert_non_null(strstr(ls_tracerec__state(t, 1), "unavailable"));

	ls_test_profile_remove(path);
	{
		struct ls_store *s = NULL;
		sqlite3 *db;

		assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
		assert_int_equal(ls_store__publish(s), 0);
		assert_int_equal(ls_store__begin(s), 0);
		assert_int_equal(ls_tracerec__flush(t, s), 0);
		assert_int_equal(ls_store__commit(s), 0);
		db = ls_test_open_ro(path);
		assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM trace"), 1);
		assert_int_equal(ls_test_q_int(db, "SELECT hits FROM trace WHERE line = 3"), 1);
		assert_int_equal(ls_test_q_int(db, "SELECT own_ns FROM trace WHERE line = 3"), 1);
		sqlite3_close(db);
		ls_store__free(s);
	}
	ls_tracerec__free(t);
	free(m);
}

/* Through the recorder (--trace): the code objects become the profile's functions and files. */
static void test_through_recorder(void **state)
{
	static const struct ls_recorder_ops ops = {0};
	struct ls_trace_line l[] = {
		{.code = 7, .line = 12, .hits = 4, .own_ns = 400, .total_ns = 900}};
	struct ls_proc_event fork = {
		.type = LS_REC_PROC, .kind = LS_PE_FORK, .pid = PID, .ppid = 1, .ts = 1};
	struct ls_recorder *r = NULL;
	struct ls_store *s = NULL;
	struct msg *m = malloc(sizeof(*m));
	sqlite3 *db;

	assert_non_null(m);
	ls_test_profile_remove(path);
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_recorder__new(s, &ops, NULL, 0, &r), 0);
	assert_int_equal(ls_recorder__enable_trace(r), 0);
	ls_recorder__handle(r, &fork, sizeof(fork));
	code_msg(m, 7, "/srv/job.py", "Loader.step", 11);
	ls_recorder__handle(r, m, m->len);
	batch_msg(m, PID, 0, l, 1);
	ls_recorder__handle(r, m, m->len);
	batch_msg(m, PID, 3, l, 1); /* 1 and 2 lost */
	ls_recorder__handle(r, m, m->len);
	/* a pid that is no target: dropped */
	m->h.pid = PID + 1;
	ls_recorder__handle(r, m, m->len);
	ls_recorder__trace_note(r, PID, "on (test)");
	assert_int_equal(ls_recorder__flush(r), 0);

	db = ls_test_open_ro(path);
	assert_int_equal(ls_test_q_int(db, "SELECT hits FROM trace WHERE line = 12"), 8);
	assert_int_equal(ls_test_q_int(db, "SELECT total_ns FROM trace WHERE line = 12"), 1800);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM trace"), 1);
	assert_int_equal(
		ls_test_q_int(db, "SELECT count(*) FROM functions f JOIN files p ON"
				  " f.file_id = p.id JOIN trace t ON t.function_id = f.id WHERE"
				  " f.qualname = 'Loader.step' AND f.firstlineno = 11 AND"
				  " p.path = '/srv/job.py'"),
		1);
	assert_int_equal(ls_test_q_int(db, "SELECT value FROM stats WHERE key = 'trace_batches'"),
			 2);
	assert_int_equal(
		ls_test_q_int(db, "SELECT value FROM stats WHERE key = 'trace_lost_batches'"), 2);
	assert_int_equal(
		ls_test_q_int(db, "SELECT trace = 'on (test)' FROM processes WHERE pid = 4500001"),
		1);
	sqlite3_close(db);
	ls_recorder__free(r);
	ls_store__free(s);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_batches_add_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_through_recorder, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
