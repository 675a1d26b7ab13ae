// SPDX-License-Identifier: MIT
/*
 * Cells that python-usdt announces (LS_TM_CELL): put together from parts sent as the extension
 * sends them, refused when out of order, inconsistent or over the bound, kept per process; and,
 * through ls_notebooks, a cell's text kept only when it hashes to the cell's name.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ipycell.h"
#include "linescope.h"
#include "nbusdt.h"
#include "notebooks.h"

/* Sends name + raw + text in parts of at most `part` bytes, as python-usdt/cells.c does */
static int announce_id(struct ls_nbusdt *u, int64_t proc, uint32_t seq, const char *name,
		       const char *raw, const char *text, const char *id, size_t part)
{
	size_t nl = strlen(name), rl = raw ? strlen(raw) : 0, tl = strlen(text), il = strlen(id);
	size_t total = nl + rl + tl + il;
	char *all = malloc(total + 1), msg[sizeof(struct ls_trace_cell) + 4096];
	struct ls_trace_cell *h = (void *)msg;
	int err = 0;

	assert_true(part <= 4096);
	snprintf(all, total + 1, "%s%s%s%s", name, raw ? raw : "", text, id);
	for (size_t off = 0; !err && off < total; off += part) {
		size_t n = total - off < part ? total - off : part;

		*h = (struct ls_trace_cell){.kind = LS_TM_CELL,
					    .seq = seq,
					    .off = off,
					    .part_len = n,
					    .name_len = nl,
					    .raw_len = rl,
					    .text_len = tl,
					    .id_len = il,
					    .number = 5,
					    .flags = raw ? 0 : LS_TCELL_NO_RAW};
		memcpy(h + 1, all + off, n);
		err = ls_nbusdt__record(u, proc, msg, sizeof(*h) + n);
	}
	free(all);
	return err;
}

static int announce(struct ls_nbusdt *u, int64_t proc, uint32_t seq, const char *name,
		    const char *raw, const char *text, size_t part)
{
	return announce_id(u, proc, seq, name, raw, text, "", part);
}

static void test_parts(void **state)
{
	struct ls_nbusdt u;
	const struct ls_nbusdt_cell *c;
	char big[20000];

	ls_nbusdt_init(&u);
	/* a cell larger than a message: six parts of 3000 bytes and a last one */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	big[0] = '#';
	assert_int_equal(announce(&u, 7, 1, "/tmp/ipykernel_1/2.py", "a = %time 1", big, 3000), 0);
	c = ls_nbusdt__find(&u, 7, "/tmp/ipykernel_1/2.py");
	assert_non_null(c);
	assert_true(c->has_raw);
	assert_int_equal(c->number, 5);
	assert_string_equal(ls_nbusdt_cell__name(c), "/tmp/ipykernel_1/2.py");
	assert_string_equal(ls_nbusdt_cell__raw(c), "a = %time 1");
	assert_string_equal(ls_nbusdt_cell__text(c), big);
	/* kept per process: another process's cell of that name is another */
	assert_null(ls_nbusdt__find(&u, 8, "/tmp/ipykernel_1/2.py"));
	assert_null(ls_nbusdt__find(&u, 7, "/tmp/ipykernel_1/2.p"));
	/* no raw text: known as compiled only */
	assert_int_equal(announce(&u, 8, 1, "<ipython-input-3-0123456789ab>", NULL, "b = 2\n", 100),
			 0);
	c = ls_nbusdt__find(&u, 8, "<ipython-input-3-0123456789ab>");
	assert_non_null(c);
	assert_false(c->has_raw);
	assert_string_equal(ls_nbusdt_cell__text(c), "b = 2\n");
	assert_int_equal(u.refused, 0);
	ls_nbusdt_release(&u);
}

static void test_refused(void **state)
{
	char msg[sizeof(struct ls_trace_cell) + 64];
	struct ls_trace_cell *h = (void *)msg;
	struct ls_nbusdt u;

	ls_nbusdt_init(&u);
	/* lengths that do not add up to the part */
	*h = (struct ls_trace_cell){
		.kind = LS_TM_CELL, .seq = 1, .part_len = 10, .name_len = 3, .text_len = 3};
	assert_int_equal(ls_nbusdt__record(&u, 1, msg, sizeof(*h) + 10), 1);
	/* over the bound of one announcement */
	*h = (struct ls_trace_cell){.kind = LS_TM_CELL,
				    .seq = 1,
				    .part_len = 4,
				    .name_len = 4,
				    .text_len = LS_TRACE_CELL_MAX};
	assert_int_equal(ls_nbusdt__record(&u, 1, msg, sizeof(*h) + 4), 1);
	/* no name */
	*h = (struct ls_trace_cell){.kind = LS_TM_CELL, .seq = 1, .part_len = 4, .text_len = 4};
	assert_int_equal(ls_nbusdt__record(&u, 1, msg, sizeof(*h) + 4), 1);
	/* shorter than the header */
	assert_int_equal(ls_nbusdt__record(&u, 1, msg, 8), 1);
	/* a part that does not follow (lost in between): refused, and the cell never completes */
	*h = (struct ls_trace_cell){
		.kind = LS_TM_CELL, .seq = 2, .part_len = 4, .name_len = 4, .text_len = 8};
	memcpy(h + 1, "name", 4);
	assert_int_equal(ls_nbusdt__record(&u, 1, msg, sizeof(*h) + 4), 0);
	h->off = 8;
	assert_int_equal(ls_nbusdt__record(&u, 1, msg, sizeof(*h) + 4), 1);
	assert_null(ls_nbusdt__find(&u, 1, "name"));
	/* a new announcement replaces the one cut short, which is counted */
	assert_int_equal(announce(&u, 1, 3, "name", "r", "text", 2), 0);
	assert_non_null(ls_nbusdt__find(&u, 1, "name"));
	assert_int_equal(u.refused, 6);
	ls_nbusdt_release(&u);
}

/* Through ls_notebooks: verified by the name's hash, else not kept */
static void test_verified(void **state)
{
	const char *raw = "x = 1\n%time y = 2",
		   *compiled = "x = 1\nget_ipython().run_line_magic('time', 'y = 2')\n";
	char good[64], bad[64], plain[64], idcell[64];
	struct ls_notebooks n;
	struct ls_sources s;
	int64_t fg, fb, fp, fi;

	snprintf(good, sizeof(good), "/tmp/ipykernel_1/%u.py",
		 ls_ipycell__murmur2(raw, strlen(raw), LS_IPYCELL_SEED));
	snprintf(bad, sizeof(bad), "/tmp/ipykernel_1/%u.py",
		 ls_ipycell__murmur2("other", 5, LS_IPYCELL_SEED));
	/* known only as compiled (announced from linecache), which hashes as typed once newlines
	 * are added: a cell without magics */
	snprintf(plain, sizeof(plain), "/tmp/ipykernel_1/%u.py",
		 ls_ipycell__murmur2("z = 3", 5, LS_IPYCELL_SEED));
	snprintf(idcell, sizeof(idcell), "/tmp/ipykernel_1/%u.py",
		 ls_ipycell__murmur2("w = 4", 5, LS_IPYCELL_SEED));
	ls_sources_init(&s);
	ls_notebooks_init(&n);
	assert_int_equal(announce(&n.usdt, 4, 1, good, raw, compiled, 4000), 0);
	assert_int_equal(announce(&n.usdt, 4, 2, bad, raw, compiled, 4000), 0);
	assert_int_equal(announce(&n.usdt, 4, 3, plain, NULL, "z = 3\n", 4000), 0);
	/* sent with the front end's cell id, in parts: the cell is known by it */
	assert_int_equal(announce_id(&n.usdt, 4, 4, idcell, "w = 4", "w = 4\n", "c-77", 7), 0);
	fg = ls_notebooks__cell(&n, &s, getpid(), 4, NULL, good);
	fb = ls_notebooks__cell(&n, &s, getpid(), 4, NULL, bad);
	fp = ls_notebooks__cell(&n, &s, getpid(), 4, NULL, plain);
	fi = ls_notebooks__cell(&n, &s, getpid(), 4, NULL, idcell);
	assert_true(fg > 0 && fb > 0 && fp > 0 && fi > 0);
	assert_string_equal(n.cells[3].how, "python-usdt");
	assert_string_equal(n.cells[3].key, "id:c-77");
	assert_string_equal(s.srcs[s.files[fi].source_id].text, "w = 4");
	assert_null(n.cells[0].key); /* no id, and no notebook file to say which cell */
	assert_string_equal(n.cells[0].how, "python-usdt");
	assert_int_equal(n.cells[0].number, 5);
	assert_string_equal(s.srcs[s.files[fg].source_id].text, raw); /* shown as typed */
	assert_null(n.cells[1].how); /* its texts do not hash to its name: never guessed */
	assert_int_equal(s.files[fb].source_id, -1);
	assert_string_equal(n.cells[2].how, "python-usdt");
	assert_string_equal(s.srcs[s.files[fp].source_id].text, "z = 3");
	ls_notebooks_release(&n);
	ls_sources_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parts),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_verified),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
