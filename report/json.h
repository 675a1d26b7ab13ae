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

json_t *ls_json__report_data(const struct ls_model *m);
json_t *ls_json__lines(const struct ls_model *m);

/* A JSON string of text, with invalid UTF-8 replaced by U+FFFD. NULL text gives JSON null. */
json_t *ls_json__str(const char *text);
json_t *ls_json__strn(const char *text, size_t len);

#endif
