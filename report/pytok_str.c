// SPDX-License-Identifier: MIT
/*
 * Strings for the Python tokenizer (see pytok.c): string prefixes, plain strings as one token, and
 * f/t-strings as START, MIDDLE and END tokens around their replacement fields (PEP 701).
 */
#include <stdbool.h>
#include <string.h>

#include "pytok_int.h"

/* r, u, b, f, t, br, rb, fr, rf, tr, rt in any case; returns flags | 0x8000, or 0 if none. */
int pytok_prefix_flags(const uint8_t *p, uint32_t n)
{
	int f = 0, i, c;

	if (n < 1 || n > 2)
		return 0;
	for (i = 0; i < (int)n; i++) {
		c = p[i] | 0x20;
		int bit = c == 'r'   ? LS_PYTOK_F_RAW
			  : c == 'b' ? LS_PYTOK_F_BYTES
			  : c == 'u' ? LS_PYTOK_F_UNICODE
			  : c == 'f' ? LS_PYTOK_F_FORMAT
			  : c == 't' ? LS_PYTOK_F_TEMPLATE
				     : 0;
		if (!bit || (f & bit))
			return 0;
		f |= bit;
	}
	if (n == 2 && !(f & LS_PYTOK_F_RAW))
		return 0; /* two letters: r with one of b, f, t */
	if (f & LS_PYTOK_F_UNICODE && n != 1)
		return 0;
	return f | 0x8000;
}

/*
 * A plain string whose prefix starts at start and quote is at q. Backslash escapes the next byte
 * even in raw strings (r"\"" does not end at the second quote). An unterminated single-quoted
 * string becomes an ERRORTOKEN up to its line break; a triple-quoted one runs to the end.
 */
int pytok_scan_string(struct ls_pytok_lexer *lx, struct ls_pytok *tok, uint32_t start, uint32_t q,
		      int flags)
{
	uint32_t tl = lx->line, tls = lx->line_start, i, n;
	uint8_t quote = lx->s[q];
	bool triple = peek(lx, q + 1) == quote && peek(lx, q + 2) == quote;

	i = q + (triple ? 3 : 1);
	for (;;) {
		if (i >= lx->len)
			break;
		if (lx->s[i] == '\\') {
			n = nl_len(lx, i + 1);
			if (n) {
				new_line(lx, i + 1 + n);
				i += 1 + n;
			} else {
				i += i + 1 < lx->len ? 2 : 1;
			}
			continue;
		}
		n = nl_len(lx, i);
		if (n) {
			if (!triple)
				break;
			new_line(lx, i + n);
			i += n;
			continue;
		}
		if (lx->s[i] == quote) {
			if (!triple) {
				lx->pos = i + 1;
				goto done;
			}
			if (peek(lx, i + 1) == quote && peek(lx, i + 2) == quote) {
				lx->pos = i + 3;
				goto done;
			}
		}
		i++;
	}
	lx->pos = i;
	pytok_emit(lx, tok, LS_PYTOK_ERRORTOKEN, start, i, tl, tls);
	tok->flags = LS_PYTOK_F_UNTERMINATED;
	/* a broken string inside a one-line f-string's field: give up the f-string at this line */
	if (!triple && lx->nmodes) {
		int si = str_mode_idx(lx);

		if (si >= 0 && !lx->modes[si].triple)
			pop_modes(lx, 0);
	}
	return LS_PYTOK_ERRORTOKEN;
done:
	pytok_emit(lx, tok, LS_PYTOK_STRING, start, lx->pos, tl, tls);
	tok->flags = (flags & 0x7fff) | (triple ? LS_PYTOK_F_TRIPLE : 0);
	tok->prefix_len = q - start;
	return LS_PYTOK_STRING;
}

int pytok_start_fstring(struct ls_pytok_lexer *lx, struct ls_pytok *tok, uint32_t start, uint32_t q,
			int flags)
{
	uint8_t quote = lx->s[q];
	bool triple = peek(lx, q + 1) == quote && peek(lx, q + 2) == quote;
	struct fmode *m;

	if (lx->nmodes >= MAX_MODES) /* too deep to follow: keep it as one opaque string */
		return pytok_scan_string(lx, tok, start, q, flags);
	m = &lx->modes[lx->nmodes++];
	memset(m, 0, sizeof(*m));
	m->kind = M_STR;
	m->quote = quote;
	m->triple = triple;
	m->flags = (flags & 0x7fff) | (triple ? LS_PYTOK_F_TRIPLE : 0);
	lx->pos = q + (triple ? 3 : 1);
	pytok_emit(lx, tok, LS_PYTOK_FSTRING_START, start, lx->pos, lx->line, lx->line_start);
	tok->flags = m->flags;
	tok->prefix_len = q - start;
	return LS_PYTOK_FSTRING_START;
}

/* Literal text of the innermost f-string, or of a format spec when a field is in its spec. */
int pytok_scan_fstring_text(struct ls_pytok_lexer *lx, struct ls_pytok *tok)
{
	int si = str_mode_idx(lx);
	struct fmode *sm = &lx->modes[si];
	bool in_spec = field_top(lx), raw = sm->flags & LS_PYTOK_F_RAW;
	uint32_t tl = lx->line, tls = lx->line_start, start = lx->pos, i = lx->pos, n;
	uint16_t sflags = sm->flags;

	while (i < lx->len) {
		int c = lx->s[i];

		if (c == sm->quote &&
		    (!sm->triple || (peek(lx, i + 1) == c && peek(lx, i + 2) == c))) {
			if (i > start)
				break;
			pop_modes(lx, si);
			lx->pos = i + (sm->triple ? 3 : 1);
			pytok_emit(lx, tok, LS_PYTOK_FSTRING_END, i, lx->pos, tl, tls);
			tok->flags = sflags;
			return LS_PYTOK_FSTRING_END;
		}
		n = nl_len(lx, i);
		if (n) {
			if (!sm->triple) {
				if (i > start)
					break;
				pop_modes(lx, si);
				pytok_emit(lx, tok, LS_PYTOK_ERRORTOKEN, i, i, tl, tls);
				tok->flags = LS_PYTOK_F_UNTERMINATED;
				return LS_PYTOK_ERRORTOKEN;
			}
			new_line(lx, i + n);
			i += n;
			continue;
		}
		if (c == '\\') {
			int d = peek(lx, i + 1);

			if (d == '{' || d == '}') {
				i++;
			} else if (!raw && !in_spec && d == 'N' && peek(lx, i + 2) == '{') {
				/* \N{NAME}: the braces are part of the escape, not a field */
				i += 3;
				while (i < lx->len && lx->s[i] != '}' && lx->s[i] != sm->quote &&
				       !nl_len(lx, i))
					i++;
				if (peek(lx, i) == '}')
					i++;
			} else if ((n = nl_len(lx, i + 1))) {
				new_line(lx, i + 1 + n);
				i += 1 + n;
			} else {
				i += d >= 0 ? 2 : 1;
			}
			continue;
		}
		if (c == '{') {
			if (!in_spec && peek(lx, i + 1) == '{') {
				i += 2;
				continue;
			}
			if (i > start)
				break;
			if (lx->nmodes >= MAX_MODES) { /* too deep: read the brace as text */
				i++;
				continue;
			}
			lx->modes[lx->nmodes++] =
				(struct fmode){.kind = M_FIELD, .depth = lx->paren};
			lx->paren++;
			return pytok_emit_op(lx, tok, 1, LS_PYTOK_F_FIELD);
		}
		if (c == '}') {
			if (in_spec) {
				if (i > start)
					break;
				pop_modes(lx, lx->nmodes - 1);
				return pytok_emit_op(lx, tok, 1, LS_PYTOK_F_FIELD);
			}
			i += peek(lx, i + 1) == '}' ? 2 : 1;
			continue;
		}
		i++;
	}
	/* i > start here: a text part; or the text runs to the end of input */
	lx->pos = i;
	pytok_emit(lx, tok, LS_PYTOK_FSTRING_MIDDLE, start, i, tl, tls);
	tok->flags = sflags;
	return LS_PYTOK_FSTRING_MIDDLE;
}
