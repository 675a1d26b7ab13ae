// SPDX-License-Identifier: MIT
/*
 * Python tokenizer (see pytok.h). One pass over the bytes with a small mode stack for f/t-strings:
 * a string mode scans literal text, a field mode scans ordinary tokens until the '}' (or format
 * spec ':') at the depth where the field opened, which is how PEP 701 lets replacement fields
 * nest and reuse the enclosing quote.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "pytok_int.h"

/*
 * Decodes one character at s[0..n) as the WHATWG UTF-8 decoder does. Returns the bytes it takes;
 * *units is its UTF-16 length (an invalid maximal subpart is one U+FFFD, one unit) and *valid
 * whether it was a well-formed character.
 */
static uint32_t u8_step(const uint8_t *s, size_t n, int *units, bool *valid)
{
	uint8_t b = s[0], lo = 0x80, hi = 0xBF;
	uint32_t need, i;

	*units = 1;
	*valid = true;
	if (b < 0x80)
		return 1;
	if (b >= 0xC2 && b <= 0xDF) {
		need = 1;
	} else if (b >= 0xE0 && b <= 0xEF) {
		need = 2;
		if (b == 0xE0)
			lo = 0xA0;
		else if (b == 0xED)
			hi = 0x9F;
	} else if (b >= 0xF0 && b <= 0xF4) {
		need = 3;
		if (b == 0xF0)
			lo = 0x90;
		else if (b == 0xF4)
			hi = 0x8F;
	} else {
		*valid = false;
		return 1;
	}
	for (i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*valid = false;
			return i;
		}
		lo = 0x80;
		hi = 0xBF;
	}
	if (need == 3)
		*units = 2;
	return need + 1;
}

size_t ls_pytok__utf16_len(const char *s, size_t len)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t i = 0, u = 0;
	int units;
	bool valid;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			u++;
			continue;
		}
		i += u8_step(p + i, len - i, &units, &valid);
		u += units;
	}
	return u;
}

static uint32_t col16_at(struct ls_pytok_lexer *lx, uint32_t ls, uint32_t off)
{
	int units;
	bool valid;
	uint32_t n;

	if (lx->c_ls != ls || off < lx->c_off) {
		lx->c_ls = ls;
		lx->c_off = ls;
		lx->c_u16 = 0;
	}
	while (lx->c_off < off) {
		uint64_t w;

		if (lx->c_off + 8 <= off) { /* eight ASCII bytes at a time */
			memcpy(&w, lx->s + lx->c_off, 8);
			if (!(w & 0x8080808080808080ull)) {
				lx->c_off += 8;
				lx->c_u16 += 8;
				continue;
			}
		}
		if (lx->s[lx->c_off] < 0x80) {
			lx->c_off++;
			lx->c_u16++;
			continue;
		}
		n = u8_step(lx->s + lx->c_off, lx->len - lx->c_off, &units, &valid);
		lx->c_off += n;
		lx->c_u16 += units;
	}
	return lx->c_u16;
}

int pytok_emit(struct ls_pytok_lexer *lx, struct ls_pytok *tok, int kind, uint32_t start,
	       uint32_t end, uint32_t tl, uint32_t tls)
{
	memset(tok, 0, sizeof(*tok));
	tok->kind = kind;
	tok->start = start;
	tok->end = end;
	tok->line = tl;
	tok->col = start - tls;
	tok->col16 = col16_at(lx, tls, start);
	tok->end_line = lx->line;
	tok->end_col = end - lx->line_start;
	tok->end_col16 = col16_at(lx, lx->line_start, end);
	if (kind != LS_PYTOK_NL && kind != LS_PYTOK_NEWLINE && kind != LS_PYTOK_COMMENT &&
	    kind != LS_PYTOK_INDENT && kind != LS_PYTOK_DEDENT && kind != LS_PYTOK_ENDMARKER)
		lx->line_has_code = true;
	lx->zero_run = end > start ? 0 : lx->zero_run + 1;
	return kind;
}

int pytok_emit_op(struct ls_pytok_lexer *lx, struct ls_pytok *tok, uint32_t n, uint16_t flags)
{
	uint32_t start = lx->pos, op = 0, i;

	for (i = 0; i < n; i++)
		op |= (uint32_t)lx->s[start + i] << (8 * i);
	lx->pos += n;
	pytok_emit(lx, tok, LS_PYTOK_OP, start, lx->pos, lx->line, lx->line_start);
	tok->op = op;
	tok->flags = flags;
	return LS_PYTOK_OP;
}

static bool is_name_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Valid non-ASCII characters belong to identifiers; CPython checks PEP 3131 later, we need not. */
static uint32_t name_char_len(const struct ls_pytok_lexer *lx, uint32_t i)
{
	int c = lx->s[i], units;
	bool valid;
	uint32_t n;

	if (c < 0x80)
		return ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || is_digit(c))
			       ? 1
			       : 0;
	n = u8_step(lx->s + i, lx->len - i, &units, &valid);
	return valid ? n : 0;
}

static void skip_digits(const struct ls_pytok_lexer *lx, uint32_t *i, bool hex)
{
	for (;;) {
		int c = peek(lx, *i);

		if (is_digit(c) || (hex && ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))) {
			(*i)++;
		} else if (c == '_') {
			int d = peek(lx, *i + 1);

			if (!(is_digit(d) || (hex && ((d | 0x20) >= 'a' && (d | 0x20) <= 'f'))))
				return;
			(*i)++;
		} else {
			return;
		}
	}
}

static int scan_number(struct ls_pytok_lexer *lx, struct ls_pytok *tok)
{
	uint32_t i = lx->pos, start = lx->pos;
	int c = lx->s[i], x = peek(lx, i + 1) | 0x20;

	if (c == '0' && (x == 'x' || x == 'o' || x == 'b')) {
		uint32_t j = i + 2;

		if (peek(lx, j) == '_')
			j++;
		skip_digits(lx, &j, x == 'x');
		if (j > i + 2 && lx->s[j - 1] != '_') {
			lx->pos = j;
			return pytok_emit(lx, tok, LS_PYTOK_NUMBER, start, j, lx->line,
					  lx->line_start);
		}
	}
	if (c != '.')
		skip_digits(lx, &i, false);
	if (peek(lx, i) == '.') {
		i++;
		skip_digits(lx, &i, false);
	}
	if ((peek(lx, i) | 0x20) == 'e') {
		uint32_t j = i + 1;

		if (peek(lx, j) == '+' || peek(lx, j) == '-')
			j++;
		if (is_digit(peek(lx, j))) {
			skip_digits(lx, &j, false);
			i = j;
		}
	}
	if ((peek(lx, i) | 0x20) == 'j')
		i++;
	lx->pos = i;
	return pytok_emit(lx, tok, LS_PYTOK_NUMBER, start, i, lx->line, lx->line_start);
}

static int at_eof(struct ls_pytok_lexer *lx, struct ls_pytok *tok)
{
	uint32_t vline = lx->len > lx->line_start ? lx->line + 1 : lx->line;
	int kind;

	if (lx->nmodes && !lx->eof_error_sent) {
		lx->eof_error_sent = true;
		pop_modes(lx, 0);
		pytok_emit(lx, tok, LS_PYTOK_ERRORTOKEN, lx->len, lx->len, lx->line,
			   lx->line_start);
		tok->flags = LS_PYTOK_F_UNTERMINATED;
		return LS_PYTOK_ERRORTOKEN;
	}
	pop_modes(lx, 0);
	if (lx->line_has_code) {
		pytok_emit(lx, tok, LS_PYTOK_NEWLINE, lx->len, lx->len, lx->line, lx->line_start);
		lx->line_has_code = false;
		return LS_PYTOK_NEWLINE;
	}
	if (lx->nindent > 0) {
		lx->nindent--;
		kind = LS_PYTOK_DEDENT;
	} else {
		kind = LS_PYTOK_ENDMARKER;
		lx->done = true;
	}
	memset(tok, 0, sizeof(*tok));
	tok->kind = kind;
	tok->start = tok->end = lx->len;
	tok->line = tok->end_line = vline;
	return kind;
}

/* Indentation of a new logical line; returns a token kind or -1 to go on scanning. */
static int line_begin(struct ls_pytok_lexer *lx, struct ls_pytok *tok)
{
	uint32_t i = lx->pos;
	int col = 0, c;

	lx->at_bol = false;
	for (;; i++) {
		c = peek(lx, i);
		if (c == ' ')
			col++;
		else if (c == '\t')
			col = (col / 8 + 1) * 8;
		else if (c == '\f')
			col = 0;
		else
			break;
	}
	if (c < 0 || c == '#' || c == '\r' || c == '\n') {
		lx->blank_line = true;
		return -1;
	}
	if (col > lx->indents[lx->nindent]) {
		uint32_t start = lx->pos;

		lx->pos = i;
		if (lx->nindent >= MAX_INDENT) {
			pytok_emit(lx, tok, LS_PYTOK_ERRORTOKEN, i, i, lx->line, lx->line_start);
			return LS_PYTOK_ERRORTOKEN;
		}
		lx->indents[++lx->nindent] = col;
		return pytok_emit(lx, tok, LS_PYTOK_INDENT, start, i, lx->line, lx->line_start);
	}
	lx->pos = i;
	while (col < lx->indents[lx->nindent]) {
		lx->nindent--;
		lx->pending_dedents++;
	}
	lx->dedent_pos = i;
	if (col !=
	    lx->indents[lx->nindent]) /* dedent to a column no block used: IndentationError */
		return pytok_emit(lx, tok, LS_PYTOK_ERRORTOKEN, i, i, lx->line, lx->line_start);
	return -1;
}

static int scan_op(struct ls_pytok_lexer *lx, struct ls_pytok *tok)
{
	int c = lx->s[lx->pos], d = peek(lx, lx->pos + 1), e = peek(lx, lx->pos + 2);
	struct fmode *f = field_top(lx) ? &lx->modes[lx->nmodes - 1] : NULL;
	int floor = f ? f->depth + 1 : 0;

	switch (c) {
	case '(':
	case '[':
	case '{':
		lx->paren++;
		return pytok_emit_op(lx, tok, 1, 0);
	case '}':
		if (f && lx->paren == floor) {
			pop_modes(lx, lx->nmodes - 1);
			return pytok_emit_op(lx, tok, 1, LS_PYTOK_F_FIELD);
		}
		/* fall through */
	case ')':
	case ']':
		if (lx->paren > floor)
			lx->paren--;
		return pytok_emit_op(lx, tok, 1, 0);
	case ',':
	case ';':
	case '~':
		return pytok_emit_op(lx, tok, 1, 0);
	case ':':
		if (f && lx->paren == floor) {
			f->spec = 1;
			return pytok_emit_op(lx, tok, 1, LS_PYTOK_F_SPEC);
		}
		return pytok_emit_op(lx, tok, d == '=' ? 2 : 1, 0);
	case '.':
		return pytok_emit_op(lx, tok, d == '.' && e == '.' ? 3 : 1, 0);
	case '!':
		if (f && lx->paren == floor && d != '=')
			return pytok_emit_op(lx, tok, 1, LS_PYTOK_F_CONVERSION);
		/* fall through */
	case '+':
	case '%':
	case '&':
	case '|':
	case '^':
	case '@':
	case '=':
		return pytok_emit_op(lx, tok, d == '=' ? 2 : 1, 0);
	case '-':
		return pytok_emit_op(lx, tok, d == '=' || d == '>' ? 2 : 1, 0);
	case '*':
	case '/':
	case '<':
	case '>':
		if (d == c)
			return pytok_emit_op(lx, tok, e == '=' ? 3 : 2, 0);
		if (d == '=' || (c == '<' && d == '>'))
			return pytok_emit_op(lx, tok, 2, 0);
		return pytok_emit_op(lx, tok, 1, 0);
	}
	return -1;
}

static int scan(struct ls_pytok_lexer *lx, struct ls_pytok *tok)
{
	uint32_t start, n, i;
	int c, r, units;
	bool valid;

	for (;;) {
		if (lx->pending_dedents) {
			lx->pending_dedents--;
			return pytok_emit(lx, tok, LS_PYTOK_DEDENT, lx->dedent_pos, lx->dedent_pos,
					  lx->line, lx->line_start);
		}
		if (lx->at_bol) {
			r = line_begin(lx, tok);
			if (r >= 0)
				return r;
			continue;
		}
		if (lx->nmodes && !field_top(lx) && lx->pos < lx->len)
			return pytok_scan_fstring_text(lx, tok);
		if (lx->nmodes && field_top(lx) && lx->modes[lx->nmodes - 1].spec &&
		    lx->pos < lx->len)
			return pytok_scan_fstring_text(lx, tok);
		while (lx->pos < lx->len &&
		       (lx->s[lx->pos] == ' ' || lx->s[lx->pos] == '\t' || lx->s[lx->pos] == '\f'))
			lx->pos++;
		if (lx->pos >= lx->len)
			return at_eof(lx, tok);

		start = lx->pos;
		c = lx->s[start];
		n = nl_len(lx, start);
		if (n) {
			int kind = (lx->paren > 0 || lx->nmodes || lx->blank_line ||
				    !lx->line_has_code)
					   ? LS_PYTOK_NL
					   : LS_PYTOK_NEWLINE;

			memset(tok, 0, sizeof(*tok));
			tok->kind = kind;
			tok->start = start;
			tok->end = start + n;
			tok->line = tok->end_line = lx->line;
			tok->col = start - lx->line_start;
			tok->end_col = tok->col + n;
			tok->col16 = col16_at(lx, lx->line_start, start);
			tok->end_col16 = tok->col16 + n;
			lx->zero_run = 0;
			lx->pos = start + n;
			new_line(lx, lx->pos);
			if (kind == LS_PYTOK_NEWLINE)
				lx->line_has_code = false;
			lx->blank_line = false;
			lx->at_bol = lx->paren == 0 && !lx->nmodes;
			return kind;
		}
		if (c == '#') {
			i = start;
			while (i < lx->len && lx->s[i] != '\n' && lx->s[i] != '\r')
				i++;
			lx->pos = i;
			return pytok_emit(lx, tok, LS_PYTOK_COMMENT, start, i, lx->line,
					  lx->line_start);
		}
		if (c == '\\') {
			n = nl_len(lx, start + 1);
			if (n) { /* explicit line joining: no token, no indentation on the next line
				  */
				lx->pos = start + 1 + n;
				new_line(lx, lx->pos);
				continue;
			}
			lx->pos = start + 1;
			return pytok_emit(lx, tok, LS_PYTOK_ERRORTOKEN, start, start + 1, lx->line,
					  lx->line_start);
		}
		if (is_digit(c) || (c == '.' && is_digit(peek(lx, start + 1))))
			return scan_number(lx, tok);
		if (c == '"' || c == '\'')
			return pytok_scan_string(lx, tok, start, start, 0);
		if (is_name_start(c) && (n = name_char_len(lx, start))) {
			int pf;

			i = start + n;
			while (i < lx->len && (n = name_char_len(lx, i)))
				i += n;
			if (i < lx->len && (lx->s[i] == '"' || lx->s[i] == '\'') &&
			    (pf = pytok_prefix_flags(lx->s + start, i - start))) {
				if (pf & (LS_PYTOK_F_FORMAT | LS_PYTOK_F_TEMPLATE))
					return pytok_start_fstring(lx, tok, start, i, pf);
				return pytok_scan_string(lx, tok, start, i, pf);
			}
			lx->pos = i;
			return pytok_emit(lx, tok, LS_PYTOK_NAME, start, i, lx->line,
					  lx->line_start);
		}
		r = scan_op(lx, tok);
		if (r >= 0)
			return r;
		/* anything else: one character (or one invalid UTF-8 subpart) of error */
		n = c < 0x80 ? 1 : u8_step(lx->s + start, lx->len - start, &units, &valid);
		lx->pos = start + n;
		return pytok_emit(lx, tok, LS_PYTOK_ERRORTOKEN, start, start + n, lx->line,
				  lx->line_start);
	}
}

int ls_pytok__next(struct ls_pytok_lexer *lx, struct ls_pytok *tok)
{
	if (!lx->done && lx->zero_run > 2 * (MAX_INDENT + MAX_MODES) + 16) {
		/* cannot happen by design; if it ever did, end rather than spin */
		lx->pos = lx->len;
		lx->nindent = 0;
		lx->pending_dedents = 0;
		lx->line_has_code = false;
		lx->nmodes = 0;
		lx->eof_error_sent = true;
	}
	if (lx->done) {
		memset(tok, 0, sizeof(*tok));
		tok->kind = LS_PYTOK_ENDMARKER;
		tok->start = tok->end = lx->len;
		tok->line = tok->end_line = lx->len > lx->line_start ? lx->line + 1 : lx->line;
		return LS_PYTOK_ENDMARKER;
	}
	return scan(lx, tok);
}

int ls_pytok__new(const char *text, size_t len, struct ls_pytok_lexer **out)
{
	struct ls_pytok_lexer *lx;

	if (len >= UINT32_MAX)
		return -EFBIG;
	lx = calloc(1, sizeof(*lx));
	if (!lx)
		return -ENOMEM;
	lx->s = (const uint8_t *)(text ? text : "");
	lx->len = text ? len : 0;
	lx->line = 1;
	if (lx->len >= 3 && !memcmp(lx->s, "\xEF\xBB\xBF", 3))
		lx->pos = lx->line_start = 3;
	lx->c_ls = lx->c_off = lx->line_start;
	lx->at_bol = true;
	*out = lx;
	return 0;
}

void ls_pytok__free(struct ls_pytok_lexer *lx)
{
	free(lx);
}

int ls_pytok__all(const char *text, size_t len, struct ls_pytok **toks, size_t *n)
{
	struct ls_pytok_lexer *lx;
	struct ls_pytok *v = NULL, *nv;
	size_t cap = 0, cnt = 0;
	int err;

	err = ls_pytok__new(text, len, &lx);
	if (err)
		return err;
	for (;;) {
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64 + len / 2; /* Python averages ~0.3 tokens a byte */
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				ls_pytok__free(lx);
				return -ENOMEM;
			}
			v = nv;
		}
		if (ls_pytok__next(lx, &v[cnt++]) == LS_PYTOK_ENDMARKER)
			break;
	}
	ls_pytok__free(lx);
	*toks = v;
	*n = cnt;
	return 0;
}

const char *ls_pytok__kind_name(int kind)
{
	static const char *const names[LS_PYTOK__KIND_COUNT] = {
		[LS_PYTOK_ENDMARKER] = "ENDMARKER",
		[LS_PYTOK_NAME] = "NAME",
		[LS_PYTOK_NUMBER] = "NUMBER",
		[LS_PYTOK_STRING] = "STRING",
		[LS_PYTOK_FSTRING_START] = "FSTRING_START",
		[LS_PYTOK_FSTRING_MIDDLE] = "FSTRING_MIDDLE",
		[LS_PYTOK_FSTRING_END] = "FSTRING_END",
		[LS_PYTOK_OP] = "OP",
		[LS_PYTOK_COMMENT] = "COMMENT",
		[LS_PYTOK_NEWLINE] = "NEWLINE",
		[LS_PYTOK_NL] = "NL",
		[LS_PYTOK_INDENT] = "INDENT",
		[LS_PYTOK_DEDENT] = "DEDENT",
		[LS_PYTOK_ERRORTOKEN] = "ERRORTOKEN",
	};

	if (kind < 0 || kind >= LS_PYTOK__KIND_COUNT)
		return "?";
	return names[kind];
}
