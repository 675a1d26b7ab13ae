/* SPDX-License-Identifier: MIT */
/*
 * IPython cells that python-usdt announced (LS_TM_CELL messages, bpf/linescope.h): put together
 * from their parts and kept per process by compile name, for ls_notebooks to verify against the
 * name's hash like any other text it finds. Bounded: LS_NBUSDT_MAX_BYTES in all, refused parts
 * counted. Not thread-safe.
 */
#ifndef LS_NBUSDT_H
#define LS_NBUSDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hashmap.h"

#define LS_NBUSDT_MAX_BYTES (64u << 20)

struct ls_nbusdt_cell {
	int64_t proc_id; /* the process row of the kernel that announced it */
	int number;	 /* the execution count IPython cached it under */
	bool has_raw;	 /* raw is the text as typed (else only what was compiled is known) */
	size_t name_len, raw_len, text_len, id_len;
	char *data; /* name, raw, text, cell id: one allocation, each NUL-terminated */
};

struct ls_nbusdt_part; /* an announcement being put together (nbusdt.c) */

struct ls_nbusdt {
	struct ls_nbusdt_cell *cells;
	size_t n, cap;
	struct ls_hashmap by_name; /* interned hash of (proc_id, name) -> index */
	struct ls_nbusdt_part *parts;
	size_t nparts, pcap;
	size_t bytes;	  /* held by cells and parts */
	uint64_t refused; /* parts that were malformed, out of order, or over the bound */
};

void ls_nbusdt_init(struct ls_nbusdt *u);
void ls_nbusdt_release(struct ls_nbusdt *u);

/* One LS_TM_CELL message of process proc_id. 0, 1 when refused (counted), or -ENOMEM. */
int ls_nbusdt__record(struct ls_nbusdt *u, int64_t proc_id, const void *msg, size_t len);
/*
 * Whether a's texts hash to its name (hash: an ipykernel name's murmur2; input > 0 with sha48: an
 * IPython shell's <ipython-input-N-HASH>): the text as typed for ipykernel's names, else the one
 * compiled (its trailing newlines stripped, 0 to 4 tried back); for a shell's, the compiled text,
 * shown as typed when that has as many lines. 1 with *text (the caller frees it) and *len, 0 when
 * neither hashes to it, -ENOMEM.
 */
int ls_nbusdt__verify(const struct ls_nbusdt_cell *a, int input, uint64_t sha48, uint32_t hash,
		      char **text, size_t *len);
/* The cell process proc_id announced under name, or NULL. */
const struct ls_nbusdt_cell *ls_nbusdt__find(const struct ls_nbusdt *u, int64_t proc_id,
					     const char *name);

static inline const char *ls_nbusdt_cell__name(const struct ls_nbusdt_cell *c)
{
	return c->data;
}

static inline const char *ls_nbusdt_cell__raw(const struct ls_nbusdt_cell *c)
{
	return c->data + c->name_len + 1;
}

static inline const char *ls_nbusdt_cell__text(const struct ls_nbusdt_cell *c)
{
	return c->data + c->name_len + 1 + c->raw_len + 1;
}

/* The front end's id of the notebook cell it ran from, or "" */
static inline const char *ls_nbusdt_cell__id(const struct ls_nbusdt_cell *c)
{
	return c->data + c->name_len + 1 + c->raw_len + 1 + c->text_len + 1;
}

#endif
