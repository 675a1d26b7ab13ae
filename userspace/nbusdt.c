// SPDX-License-Identifier: MIT
/* IPython cells announced by python-usdt, put together from their parts (see nbusdt.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "array.h"
#include "ipycell.h"
#include "linescope.h"
#include "nbusdt.h"

struct ls_nbusdt_part {
	int64_t proc_id;
	struct ls_trace_cell hdr; /* of the first part */
	char *buf;		  /* name + raw + text so far */
	size_t got;
};

struct probe {
	const struct ls_nbusdt *u;
	int64_t proc_id;
	const char *name;
	size_t len;
};

void ls_nbusdt_init(struct ls_nbusdt *u)
{
	memset(u, 0, sizeof(*u));
	ls_hashmap_init(&u->by_name);
}

void ls_nbusdt_release(struct ls_nbusdt *u)
{
	for (size_t i = 0; i < u->n; i++)
		free(u->cells[i].data);
	for (size_t i = 0; i < u->nparts; i++)
		free(u->parts[i].buf);
	free(u->cells);
	free(u->parts);
	ls_hashmap_release(&u->by_name);
	memset(u, 0, sizeof(*u));
}

static uint64_t key_of(int64_t proc_id, const char *name, size_t len)
{
	return XXH3_64bits(name, len) ^ ls_hash64((uint64_t)proc_id);
}

static bool same_cell(const void *ctx, uint64_t idx)
{
	const struct probe *q = ctx;
	const struct ls_nbusdt_cell *c = &q->u->cells[idx];

	return c->proc_id == q->proc_id && c->name_len == q->len &&
	       !memcmp(c->data, q->name, q->len);
}

/* The finished announcement p becomes a cell; its buffer is taken. 0 or -ENOMEM. */
static int keep(struct ls_nbusdt *u, struct ls_nbusdt_part *p)
{
	const struct ls_trace_cell *h = &p->hdr;
	struct probe q = {.u = u, .proc_id = p->proc_id, .name = p->buf, .len = h->name_len};
	uint64_t *slot = ls_hashmap__intern(&u->by_name, key_of(p->proc_id, p->buf, h->name_len),
					    same_cell, &q);
	struct ls_nbusdt_cell *c, *v;
	char *d;

	if (!slot)
		return -ENOMEM;
	if (*slot != LS_HASHMAP_EMPTY)
		return 0; /* announced again (attached again, or the same text): the first stays */
	v = ls_array_grow(u->cells, &u->cap, u->n, sizeof(*v), 16);
	d = malloc(p->got + 4);
	if (!v || !d) {
		free(d);
		if (v)
			u->cells = v;
		return -ENOMEM;
	}
	u->cells = v;
	/* name \0 raw \0 text \0 id \0 */
	{
		const uint32_t lens[4] = {h->name_len, h->raw_len, h->text_len, h->id_len};
		size_t from = 0, to = 0;

		for (int i = 0; i < 4; i++) {
			memcpy(d + to, p->buf + from, lens[i]);
			d[to + lens[i]] = 0;
			from += lens[i];
			to += lens[i] + 1;
		}
	}
	c = &u->cells[u->n];
	*c = (struct ls_nbusdt_cell){
		.proc_id = p->proc_id,
		.number = h->number,
		.has_raw = !(h->flags & LS_TCELL_NO_RAW),
		.name_len = h->name_len,
		.raw_len = h->raw_len,
		.text_len = h->text_len,
		.id_len = h->id_len,
		.data = d,
	};
	*slot = u->n++;
	u->bytes += p->got + 4;
	return 0;
}

static struct ls_nbusdt_part *part_of(struct ls_nbusdt *u, int64_t proc_id)
{
	struct ls_nbusdt_part *v;

	for (size_t i = 0; i < u->nparts; i++)
		if (u->parts[i].proc_id == proc_id)
			return &u->parts[i];
	v = ls_array_grow(u->parts, &u->pcap, u->nparts, sizeof(*v), 4);
	if (!v)
		return NULL;
	u->parts = v;
	memset(&v[u->nparts], 0, sizeof(*v));
	v[u->nparts].proc_id = proc_id;
	return &v[u->nparts++];
}

/* A header that can be trusted: lengths that add up and fit, a part inside them */
static bool valid(const struct ls_trace_cell *h, size_t len)
{
	uint64_t total = (uint64_t)h->name_len + h->raw_len + h->text_len + h->id_len;

	return total <= LS_TRACE_CELL_MAX && h->name_len > 0 && h->id_len < LS_TRACE_CELL_ID &&
	       h->part_len == len - sizeof(*h) && (uint64_t)h->off + h->part_len <= total &&
	       (h->part_len > 0 || total == h->off);
}

int ls_nbusdt__record(struct ls_nbusdt *u, int64_t proc_id, const void *msg, size_t len)
{
	const struct ls_trace_cell *h = msg;
	struct ls_nbusdt_part *p;
	size_t total;
	int err;

	if (len < sizeof(*h) || !valid(h, len)) {
		u->refused++;
		return 1;
	}
	p = part_of(u, proc_id);
	if (!p)
		return -ENOMEM;
	total = (size_t)h->name_len + h->raw_len + h->text_len + h->id_len;
	if (h->off == 0) {
		/* a new announcement; one cut short (its process lost a part) goes */
		if (p->buf) {
			u->refused++;
			u->bytes -= (size_t)p->hdr.name_len + p->hdr.raw_len + p->hdr.text_len +
				    p->hdr.id_len;
			free(p->buf);
			p->buf = NULL;
		}
		if (u->bytes + total > LS_NBUSDT_MAX_BYTES) {
			u->refused++;
			return 1;
		}
		p->buf = malloc(total ? total : 1);
		if (!p->buf)
			return -ENOMEM;
		p->hdr = *h;
		p->got = 0;
		u->bytes += total;
	} else if (!p->buf || h->seq != p->hdr.seq || h->off != p->got ||
		   h->name_len != p->hdr.name_len || h->raw_len != p->hdr.raw_len ||
		   h->text_len != p->hdr.text_len || h->id_len != p->hdr.id_len) {
		u->refused++;
		return 1;
	}
	memcpy(p->buf + p->got, h + 1, h->part_len);
	p->got += h->part_len;
	if (p->got < total)
		return 0;
	u->bytes -= total;
	err = keep(u, p);
	free(p->buf);
	p->buf = NULL;
	return err;
}

const struct ls_nbusdt_cell *ls_nbusdt__find(const struct ls_nbusdt *u, int64_t proc_id,
					     const char *name)
{
	size_t len = strlen(name);
	struct probe q = {.u = u, .proc_id = proc_id, .name = name, .len = len};
	uint64_t idx;

	if (!ls_hashmap__find(&u->by_name, key_of(proc_id, name, len), same_cell, &q, &idx))
		return NULL;
	return &u->cells[idx];
}

int ls_nbusdt__verify(const struct ls_nbusdt_cell *a, int input, uint64_t sha48, uint32_t hash,
		      char **text, size_t *len)
{
	const char *raw = ls_nbusdt_cell__raw(a), *compiled = ls_nbusdt_cell__text(a), *shown;
	size_t slen;
	int nl = -1;

	shown = compiled;
	/* linecache ends every line with a newline: the hashes are tried with 0 to 4 added back */
	for (slen = a->text_len; slen && compiled[slen - 1] == '\n'; slen--)
		;
	if (input > 0) {
		nl = ls_ipycell__verify_sha48(compiled, slen, sha48);
		if (nl >= 0 && a->has_raw &&
		    ls_ipycell__count_lines(raw, a->raw_len) ==
			    ls_ipycell__count_lines(compiled, a->text_len))
			shown = raw, slen = a->raw_len;
	} else {
		if (a->has_raw)
			nl = ls_ipycell__verify(raw, a->raw_len, hash);
		if (nl >= 0)
			shown = raw, slen = a->raw_len;
		else
			nl = ls_ipycell__verify(compiled, slen, hash);
	}
	if (nl == -ENOMEM)
		return nl;
	if (nl < 0)
		return 0;
	*text = ls_ipycell__with_newlines(shown, slen, nl, len);
	return *text ? 1 : -ENOMEM;
}
