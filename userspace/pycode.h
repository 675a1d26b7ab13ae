/* SPDX-License-Identifier: MIT */
/*
 * Code objects of one target process: read from its memory on first sight (filename, qualified
 * name, first line, location table), cached by (address, fingerprint) so that a freed and reused
 * address never maps to the old function, and instruction offsets resolved to lines.
 * One cache per process image: free it on exec and exit. Not thread-safe.
 */
#ifndef LS_PYCODE_H
#define LS_PYCODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"
#include "python.h"

struct ls_pycode {
	uint64_t addr;
	uint32_t fp;
	int firstlineno;
	char *filename; /* UTF-8, owned */
	char *qualname; /* UTF-8, owned */
	uint8_t *linetable;
	uint32_t ltlen;
	int nunits;	  /* code units covered by the table; -1 until decoded */
	const int *lines; /* nearest line per unit, decoded on first use (owned: lines_owned) */
	bool lines_owned; /* else the cache's line tables own them */
	uint32_t func_id; /* set by the owner of the cache (0: unassigned) */
};

/*
 * Decoded line tables by content, shared by the code caches of every process: a fork's children,
 * or processes of one program, hold the same code objects, and each would decode them again.
 */
struct ls_linetables {
	struct ls_hashmap map; /* content hash -> index into v */
	struct ls_linetab *v;
	size_t n, cap;
};

void ls_linetables_init(struct ls_linetables *t);
void ls_linetables_release(struct ls_linetables *t);

struct ls_pycode_chunk;

struct ls_pycode_cache {
	pid_t pid;
	const struct ls_pyinfo *py;  /* borrowed; must outlive the cache */
	struct ls_linetables *lines; /* borrowed, or NULL: each code object decodes its own */
	struct ls_hashmap map;	     /* (addr ^ fp << 32) -> struct ls_pycode * */
	/* where the code objects live, freed whole with the cache (one replaced stays till then) */
	struct ls_pycode_chunk *chunks;
	size_t owned_lines; /* code objects whose decoded lines are their own */
	uint64_t reads, stale, failed, described;
};

void ls_pycode_cache_init(struct ls_pycode_cache *c, pid_t pid, const struct ls_pyinfo *py,
			  struct ls_linetables *lines);
void ls_pycode_cache_release(struct ls_pycode_cache *c);

/*
 * The code object at addr whose fingerprint is fp. Valid until the cache is released.
 * -EFAULT when unreadable, -ESTALE when the memory no longer holds that code object.
 */
int ls_pycode_cache__get(struct ls_pycode_cache *c, uint64_t addr, uint32_t fp,
			 struct ls_pycode **out);

/* Line to attribute to the instruction at byte offset instr of code, one of c's. */
int ls_pycode__line(struct ls_pycode_cache *c, struct ls_pycode *code, int32_t instr);

/*
 * Adds a code object described by the BPF walker (LS_REC_CODE). Fields the record had to cut are
 * completed from the target's memory when it is still readable. 0 or -ENOMEM.
 */
int ls_pycode_cache__add(struct ls_pycode_cache *c, const struct ls_code_rec *r);

/*
 * Reads a str object of the target into UTF-8 (invalid code points replaced). Returns the
 * length, or a negative errno. Exposed for tests.
 */
int ls_pycode__read_str(pid_t pid, const struct ls_pylayout *L, uint64_t addr, char *buf,
			size_t len);

/* Converts raw str data (kind 1, 2 or 4 bytes per code point) to UTF-8 in buf. Returns length. */
size_t ls_pycode__raw_to_utf8(const uint8_t *raw, size_t bytes, unsigned kind, char *buf,
			      size_t len);

#endif
