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
json_t *ls_json__lines(const struct ls_model *m);

/* A JSON string of text, with invalid UTF-8 replaced by U+FFFD. NULL text gives JSON null. */
json_t *ls_json__str(const char *text);
json_t *ls_json__strn(const char *text, size_t len);
/* A file name or command line, escaped as everywhere else (ls_escape__name). */
json_t *ls_json__name(const char *name);

#endif
