/* SPDX-License-Identifier: MIT */
/*
 * The tokenizer's insides, shared by pytok.c (the main scanner) and pytok_str.c (strings and
 * f/t-strings): the lexer state, its mode stack and the helpers both sides step it with.
 */
#ifndef LS_PYTOK_INT_H
#define LS_PYTOK_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "pytok.h"

/* CPython allows 100 indentation levels and 150 nested f-strings; deeper input is an error. */
#define MAX_INDENT 100
#define MAX_MODES  200

enum mode_kind {
	M_STR,	 /* inside the literal text of an f/t-string */
	M_FIELD, /* inside a replacement field: expression, then optionally the format spec */
};

struct fmode {
	uint8_t kind;
	uint8_t spec;	/* M_FIELD: the format spec has started */
	uint8_t quote;	/* M_STR */
	uint8_t triple; /* M_STR */
	uint16_t flags; /* M_STR: token flags for FSTRING_* */
	int depth;	/* M_FIELD: paren depth before its '{' */
};

struct ls_pytok_lexer {
	const uint8_t *s;
	uint32_t len;
	uint32_t pos;
	uint32_t line;
	uint32_t line_start;
	/* UTF-16 column cursor: columns are asked for in increasing order within a line */
	uint32_t c_ls, c_off, c_u16;
	int paren;
	bool at_bol;	    /* next scan begins a physical line whose indentation counts */
	bool blank_line;    /* current line holds only a comment or nothing: its break is NL */
	bool line_has_code; /* a token since the last NEWLINE: EOF owes a NEWLINE */
	bool done;
	bool eof_error_sent;
	int pending_dedents;
	uint32_t dedent_pos;
	int nindent;
	int indents[MAX_INDENT + 1];
	int nmodes;
	int zero_run; /* consecutive zero-width tokens: a backstop against any livelock */
	struct fmode modes[MAX_MODES];
};

/* Length of the line break at i ("\r\n", "\r" or "\n"), 0 if none. */
static inline uint32_t nl_len(const struct ls_pytok_lexer *lx, uint32_t i)
{
	if (i >= lx->len)
		return 0;
	if (lx->s[i] == '\n')
		return 1;
	if (lx->s[i] == '\r')
		return (i + 1 < lx->len && lx->s[i + 1] == '\n') ? 2 : 1;
	return 0;
}

static inline int peek(const struct ls_pytok_lexer *lx, uint32_t i)
{
	return i < lx->len ? lx->s[i] : -1;
}

static inline void new_line(struct ls_pytok_lexer *lx, uint32_t next_start)
{
	lx->line++;
	lx->line_start = next_start;
}

static inline int field_top(const struct ls_pytok_lexer *lx)
{
	return lx->nmodes && lx->modes[lx->nmodes - 1].kind == M_FIELD;
}

/* Pops modes down to index idx (inclusive); popped fields give back their paren depth. */
static inline void pop_modes(struct ls_pytok_lexer *lx, int idx)
{
	while (lx->nmodes > idx) {
		struct fmode *m = &lx->modes[--lx->nmodes];

		if (m->kind == M_FIELD)
			lx->paren = m->depth;
	}
}

static inline int str_mode_idx(const struct ls_pytok_lexer *lx)
{
	int i;

	for (i = lx->nmodes - 1; i >= 0; i--)
		if (lx->modes[i].kind == M_STR)
			return i;
	return -1;
}

/* Fills *tok for [start, end) that began on line tl (whose first byte is tls). */
int pytok_emit(struct ls_pytok_lexer *lx, struct ls_pytok *tok, int kind, uint32_t start,
	       uint32_t end, uint32_t tl, uint32_t tls);
/* An operator token of n bytes at lx->pos, with flags. */
int pytok_emit_op(struct ls_pytok_lexer *lx, struct ls_pytok *tok, uint32_t n, uint16_t flags);

/* pytok_str.c */
int pytok_prefix_flags(const uint8_t *p, uint32_t n);
int pytok_scan_string(struct ls_pytok_lexer *lx, struct ls_pytok *tok, uint32_t start, uint32_t q,
		      int flags);
int pytok_start_fstring(struct ls_pytok_lexer *lx, struct ls_pytok *tok, uint32_t start, uint32_t q,
			int flags);
int pytok_scan_fstring_text(struct ls_pytok_lexer *lx, struct ls_pytok *tok);

#endif /* LS_PYTOK_INT_H */
