/* SPDX-License-Identifier: MIT */
/*
 * Text hygiene for the HTML report: UTF-8 repair before JSON is built, and the escaping that lets
 * a JSON document sit inside a <script> element and a title inside <title>.
 *
 * Nothing here allocates except ls_utf8_sanitize(); nothing keeps state, so every function is
 * thread-safe.
 */
#ifndef LS_ESCAPE_H
#define LS_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * Length of the well-formed UTF-8 sequence at s[0..n) (1 to 4) as a positive number, or, when s
 * starts an ill-formed sequence, minus the length of its maximal subpart (the longest prefix that
 * could start a well-formed sequence, at least one byte). n must be at least 1.
 * Overlong forms, surrogates (U+D800..U+DFFF), code points above U+10FFFF and truncated
 * sequences are ill-formed.
 */
int ls_utf8_seq(const unsigned char *s, size_t n);

/*
 * Copies in[0..len) to a new NUL-terminated buffer *out (length in *out_len, may be NULL) with
 * every maximal subpart of an ill-formed sequence replaced by U+FFFD, the practice Unicode
 * recommends (one replacement per maximal subpart) and browsers follow.
 * Returns the number of replacements (0: the text was valid), or -ENOMEM with *out untouched.
 * The caller frees *out. jansson rejects invalid UTF-8, so source text goes through here first.
 */
int ls_utf8_sanitize(const char *in, size_t len, char **out, size_t *out_len);

/*
 * A name that may not be text (a file name is bytes: Python keeps undecodable ones as
 * surrogateescape, which the recorder turns back into the bytes), shown the same way in every
 * output: well-formed UTF-8 as it is, every other byte as \xHH, and control characters too when
 * `controls` (text output; JSON escapes them itself). Writes at most len-1 bytes and a NUL into
 * out; returns the length.
 */
size_t ls_escape__name(const char *in, bool controls, char *out, size_t len);

/*
 * Writes JSON text so that it can be the content of a <script type="application/json"> element:
 * '<', '>', '&', U+2028 and U+2029 become \uXXXX escapes, and an ill-formed UTF-8 subpart becomes
 * \ufffd. Valid JSON has these characters only inside strings, where the escapes mean the same
 * thing, so the output is still the same JSON document and cannot close the element.
 * Returns 0 or -EIO when the stream fails.
 */
int ls_escape__json_script(FILE *out, const char *json, size_t len);

/*
 * Writes NUL-terminated text as HTML character data or attribute value: & < > " ' become
 * character references and ill-formed UTF-8 becomes U+FFFD. Returns 0 or -EIO.
 */
int ls_escape__html(FILE *out, const char *text);

#endif
