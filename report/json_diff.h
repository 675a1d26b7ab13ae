/* SPDX-License-Identifier: MIT */
/*
 * JSON of a diff (diff.h): `report NEW --diff BASE --format json` (docs/json-output.md, "Diffs")
 * and the `diff` member of the HTML report's data (docs/report-data.md). New references.
 */
#ifndef LS_JSON_DIFF_H
#define LS_JSON_DIFF_H

#include <jansson.h>
#include "diff.h"

json_t *ls_json__diff(const struct ls_diff *d, const char *path, const char *base_path);
json_t *ls_json__diff_data(const struct ls_diff *d, const char *base_path);

#endif
