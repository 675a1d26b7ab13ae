/* SPDX-License-Identifier: MIT */
/*
 * JSON views of a report model (jansson): the data block embedded in the HTML report
 * (docs/report-data.md) and the `report --format json` output (docs/json-output.md).
 * Returned objects are new references owned by the caller.
 */
#ifndef LS_JSON_H
#define LS_JSON_H

#include <jansson.h>
#include "model.h"

/* The report-data document as JSON text (malloc'ed; *len its length), or NULL on -ENOMEM. */
char *ls_json__report_text(const struct ls_model *m, size_t *len);
/* The same with a `diff` member for `report --diff` (d NULL: null), see json_diff.h. */
struct ls_diff;
char *ls_json__report_text_diff(const struct ls_model *m, const struct ls_diff *d,
				const char *base_path, size_t *len);
json_t *ls_json__lines(const struct ls_model *m);
/* The `run` object of `--format json`. */
json_t *ls_json__run(const struct ls_model *m);
/* Line `line` (1-based) of a file's text as a JSON string, or null. */
json_t *ls_json__line_text(const struct ls_mfile *f, int line);

/* Nanoseconds as a JSON number of seconds. */
json_t *ls_json__secs(int64_t ns);
/* A JSON string of text, with invalid UTF-8 replaced by U+FFFD. NULL text gives JSON null. */
json_t *ls_json__str(const char *text);
json_t *ls_json__strn(const char *text, size_t len);
/* A file name or command line, escaped as everywhere else (ls_escape__name). */
json_t *ls_json__name(const char *name);

#endif
