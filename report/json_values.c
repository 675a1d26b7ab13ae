// SPDX-License-Identifier: MIT
/* JSON values from the model's text and numbers: clean strings, escaped names, seconds. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "json_int.h"

/* a PATH_MAX name with every byte escaped as \xHH */
#define NAME_ESCAPED_MAX (4 * PATH_MAX + 1)

json_t *ls_json__strn(const char *text, size_t len)
{
	json_t *j;
	char *clean;

	if (!text)
		return json_null();
	j = json_stringn(text, len);
	if (j)
		return j;
	/* invalid UTF-8 (or NUL bytes): replace what is not text */
	if (ls_utf8_sanitize(text, len, &clean, &len) < 0)
		return json_string("");
	j = json_stringn(clean, len);
	free(clean);
	return j ? j : json_string("");
}

json_t *ls_json__str(const char *text)
{
	return text ? ls_json__strn(text, strlen(text)) : json_null();
}

json_t *ls_json__name(const char *name)
{
	char buf[NAME_ESCAPED_MAX];

	if (!name)
		return json_null();
	ls_escape__name(name, false, buf, sizeof(buf));
	return json_string(buf);
}

json_t *ls_json__secs(int64_t ns)
{
	return json_real(ns / NS_PER_S);
}

/* Source text of one line (1-based) of a file, or NULL. */
json_t *ls_json__line_text(const struct ls_mfile *f, int line)
{
	size_t len;
	const char *p = ls_mfile__line(f, line, &len);

	return p ? ls_json__strn(p, len) : json_null();
}
