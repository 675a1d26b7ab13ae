/* SPDX-License-Identifier: MIT */
/*
 * Python tokenizer over UTF-8 source bytes, for the report's static symbol index.
 *
 * Tokens follow CPython 3.12+ (PEP 701): an f-string (or PEP 750 t-string) is FSTRING_START,
 * FSTRING_MIDDLE literal parts, ordinary tokens for each replacement field between OP '{' and
 * OP '}' (flagged LS_PYTOK_F_FIELD), and FSTRING_END. Other strings of every prefix are one STRING.
 * Comments, NL/NEWLINE, INDENT/DEDENT and ENDMARKER are reported like Python's tokenize module.
 *
 * Lines: "\r\n", "\r" and "\n" each end a line (as CPython's compiler sees a file); lines are
 * 1-based. Columns are counted from the start of the line, in bytes (col) and in UTF-16 code units
 * (col16: what JavaScript string indexes count, astral characters are 2 units) as a WHATWG UTF-8
 * TextDecoder would decode the line, so each maximal invalid subsequence counts as one U+FFFD.
 * A UTF-8 byte order mark at offset 0 is skipped and does not count in line 1's columns.
 * Sources in other encodings (PEP 263 cookies) must be transcoded to UTF-8 by the caller.
 *
 * Any input is accepted: malformed code (unterminated strings, NUL bytes, invalid UTF-8, stray
 * characters, bad dedents) yields ERRORTOKENs and the tokenizer recovers at the next token or line.
 * It never reads past len, never loops and always ends with exactly one ENDMARKER.
 * Not thread-safe per lexer; separate lexers are independent.
 */
#ifndef LS_PYTOK_H
#define LS_PYTOK_H

#include <stddef.h>
#include <stdint.h>

enum ls_pytok_kind {
	LS_PYTOK_ENDMARKER = 0,
	LS_PYTOK_NAME, /* identifiers and keywords, including soft keywords */
	LS_PYTOK_NUMBER,
	LS_PYTOK_STRING,	 /* a whole non-f/t string literal, prefix included */
	LS_PYTOK_FSTRING_START,	 /* prefix and opening quote(s) of an f- or t-string */
	LS_PYTOK_FSTRING_MIDDLE, /* literal text of an f/t-string or format spec ("{{" kept as is)
				  */
	LS_PYTOK_FSTRING_END,	 /* closing quote(s) */
	LS_PYTOK_OP,
	LS_PYTOK_COMMENT, /* '#' to the end of the line, line break excluded */
	LS_PYTOK_NEWLINE, /* end of a logical line */
	LS_PYTOK_NL,	  /* line break that does not end a logical line */
	LS_PYTOK_INDENT,
	LS_PYTOK_DEDENT,
	LS_PYTOK_ERRORTOKEN,
	LS_PYTOK__KIND_COUNT,
};

enum ls_pytok_flags {
	LS_PYTOK_F_RAW = 1 << 0,	  /* STRING/FSTRING_*: r prefix */
	LS_PYTOK_F_BYTES = 1 << 1,	  /* STRING: b prefix */
	LS_PYTOK_F_UNICODE = 1 << 2,	  /* STRING: u prefix */
	LS_PYTOK_F_FORMAT = 1 << 3,	  /* FSTRING_*: f-string */
	LS_PYTOK_F_TEMPLATE = 1 << 4,	  /* FSTRING_*: t-string (PEP 750) */
	LS_PYTOK_F_TRIPLE = 1 << 5,	  /* STRING/FSTRING_*: triple-quoted */
	LS_PYTOK_F_UNTERMINATED = 1 << 6, /* ERRORTOKEN: a string or f-string that never closed */
	LS_PYTOK_F_FIELD = 1 << 7, /* OP '{' or '}' delimiting an f/t-string replacement field */
	LS_PYTOK_F_SPEC = 1 << 8,  /* OP ':' starting a replacement field's format spec */
	LS_PYTOK_F_CONVERSION = 1 << 9, /* OP '!' before a conversion (!r, !s, !a) */
};

/* OP tokens carry their text packed in op, so `tok.op == LS_PYOP2('*', '=')` tests for "*=". */
#define LS_PYOP1(a)	  ((uint32_t)(uint8_t)(a))
#define LS_PYOP2(a, b)	  (LS_PYOP1(a) | (uint32_t)(uint8_t)(b) << 8)
#define LS_PYOP3(a, b, c) (LS_PYOP2(a, b) | (uint32_t)(uint8_t)(c) << 16)

struct ls_pytok {
	uint8_t kind;	    /* enum ls_pytok_kind */
	uint8_t prefix_len; /* STRING/FSTRING_START: bytes of prefix letters before the quote */
	uint16_t flags;	    /* enum ls_pytok_flags */
	uint32_t op;	    /* OP: packed text (LS_PYOPn), else 0 */
	uint32_t start;	    /* byte offset of the first byte in the text */
	uint32_t end;	    /* byte offset one past the last byte */
	uint32_t line;	    /* 1-based line of start */
	uint32_t end_line;  /* 1-based line of end (differs for multi-line strings) */
	uint32_t col;	    /* byte column of start within line */
	uint32_t end_col;   /* byte column of end within end_line */
	uint32_t col16;	    /* UTF-16 column of start */
	uint32_t end_col16; /* UTF-16 column of end */
};

struct ls_pytok_lexer;

/*
 * Creates a lexer over text[0..len). The text is borrowed and must outlive the lexer. Sources of
 * 4 GiB or more are refused with -EFBIG. Returns 0 or -ENOMEM.
 */
int ls_pytok__new(const char *text, size_t len, struct ls_pytok_lexer **out);
void ls_pytok__free(struct ls_pytok_lexer *lx);

/*
 * Stores the next token in *tok and returns its kind (>= 0). After ENDMARKER every call returns
 * ENDMARKER again.
 */
int ls_pytok__next(struct ls_pytok_lexer *lx, struct ls_pytok *tok);

/*
 * Tokenizes the whole text into a malloc'ed array the caller frees with free(); *n counts the
 * tokens, the last being ENDMARKER. Returns 0 or a negative errno.
 */
int ls_pytok__all(const char *text, size_t len, struct ls_pytok **toks, size_t *n);

/* "NAME", "OP", ... (Python's token names); "?" for an unknown kind. Static storage. */
const char *ls_pytok__kind_name(int kind);

/*
 * UTF-16 code units of s[0..len) as a WHATWG UTF-8 decoder counts them (each maximal invalid
 * subsequence is one U+FFFD). Used for columns; exposed so callers can convert other offsets.
 */
size_t ls_pytok__utf16_len(const char *s, size_t len);

#endif
