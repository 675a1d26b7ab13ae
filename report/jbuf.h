/* SPDX-License-Identifier: MIT */
/*
 * A growable buffer of JSON text, for the large column tables of the report data where building
 * one jansson node per cell would dominate the render time. Embedded object; not thread-safe.
 * Appends never fail visibly: after an allocation failure the buffer is marked and
 * ls_jbuf__detach() returns NULL.
 */
#ifndef LS_JBUF_H
#define LS_JBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

struct ls_jbuf {
	char *s;
	size_t len, cap;
	bool failed;
};

void ls_jbuf_init(struct ls_jbuf *b);
void ls_jbuf_release(struct ls_jbuf *b);

void ls_jbuf__raw(struct ls_jbuf *b, const char *s, size_t n);
void ls_jbuf__str(struct ls_jbuf *b, const char *s); /* raw text, NUL-terminated */
void ls_jbuf__int(struct ls_jbuf *b, int64_t v);
/* ns as seconds, exactly: "1.001001001", "0.5", "0" */
void ls_jbuf__secs(struct ls_jbuf *b, int64_t ns);
/* the JSON text of v (consumed: its reference is released); null when v is NULL */
void ls_jbuf__json(struct ls_jbuf *b, json_t *v);

/*
 * The big column tables are written as text directly: one jansson node per cell would dominate
 * the render time of a large profile. COL(name, expr) writes ,"name":[expr for every row];
 * FIRST_COL opens the table's object with its first column instead.
 */
#define COL_AFTER(b, sep, name, n, i, expr)              \
	do {                                             \
		ls_jbuf__str(b, sep "\"" name "\":[");   \
		for (size_t i = 0; i < (n); i++) {       \
			if (i)                           \
				ls_jbuf__raw(b, ",", 1); \
			expr;                            \
		}                                        \
		ls_jbuf__raw(b, "]", 1);                 \
	} while (0)
#define COL(b, name, n, i, expr)       COL_AFTER(b, ",", name, n, i, expr)
#define FIRST_COL(b, name, n, i, expr) COL_AFTER(b, "{", name, n, i, expr)
/* ,"name":null: a column the profile has no data for */
void ls_jbuf__null_col(struct ls_jbuf *b, const char *name);

/* Takes the text (NUL-terminated; *len its length). NULL after an allocation failure. */
char *ls_jbuf__detach(struct ls_jbuf *b, size_t *len);

#endif
