/* SPDX-License-Identifier: MIT */
/*
 * Writes the self-contained HTML report: the embedded template with the stylesheet, the script
 * and the report data (docs/report-data.md) inlined, so the file works offline and its
 * Content-Security-Policy forbids every network request.
 */
#ifndef LS_HTML_H
#define LS_HTML_H

#include <stddef.h>
#include <stdio.h>

/*
 * Writes the report to out. data_json[0..len) is the report-data document (valid JSON, produced
 * by jansson); it is escaped for the script element (see ls_escape__json_script()). title (may be
 * NULL) becomes the page title, HTML-escaped.
 * Returns 0, -EINVAL for missing data or a broken embedded template, or -EIO when writing fails.
 * Logs nothing: the caller knows which file it was writing.
 */
int ls_html__write(FILE *out, const char *data_json, size_t len, const char *title);

#endif
